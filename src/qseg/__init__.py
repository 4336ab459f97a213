"""qseg: web search query segmentation.

>>> import qseg
>>> qseg.segment("new york yankees tickets", "naive").to_pipe()  # built-in resources
'new york|yankees|tickets'
>>> seg = qseg.Segmentation.from_pipe("new york yankees|tickets")
>>> seg.to_quoted()
'"new york yankees" tickets'
"""

from __future__ import annotations

from functools import cache

from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath
from qseg.models import default_method, open_segmenter
from qseg.query import normalize
from qseg.resources.bundle import Resources
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.base import Segmenter

__all__ = [
    "InputError",
    "NestedSegmentation",
    "QsegError",
    "Resources",
    "Segmentation",
    "Segmenter",
    "normalize",
    "segment",
    "segmenter",
]


def segmenter(
    method: str | None = None,
    *,
    ngrams: StrPath | None = None,
    titles: StrPath | None = None,
    unigrams: StrPath | None = None,
    bigrams: StrPath | None = None,
    query_log: StrPath | None = None,
    allow_other_resources: bool = False,
) -> Segmenter:
    """A segmenter by method spec, shipped model name or model file path, reading resources
    from files (built-in defaults otherwise). A saved model refuses resources other than it
    was trained with unless ``allow_other_resources``.

    Without a method: the shipped default model (where none is shipped, the rule-based
    ``wiki(unseen_titles=true)`` where titles are available, else ``naive``).
    """
    resources = Resources.load(
        ngrams=ngrams, titles=titles, unigrams=unigrams, bigrams=bigrams, querylog=query_log
    )
    return open_segmenter(
        method or default_method(resources),
        resources,
        allow_other_resources=allow_other_resources,
    )


@cache
def _default(method: str | None) -> Segmenter:
    return segmenter(method)


def segment(query: str, method: str | None = None) -> Segmentation:
    """Segment one query with the built-in default resources (method as in :func:`segmenter`)."""
    return _default(method).segment(query)
