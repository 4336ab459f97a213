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
from typing import Any, TypedDict

from qseg.errors import (
    AgreementError,
    CacheError,
    DataError,
    InputError,
    PathError,
    QsegError,
    RandomModelError,
    extras_named,
)
from qseg.fileio import StrPath
from qseg.models import default_method, open_segmenter
from qseg.models.format import ModelError, ResourceMismatch
from qseg.query import Query, QueryError, normalize
from qseg.resources.bundle import Resources
from qseg.resources.store import StoreError
from qseg.segmentation import NestedSegmentation, Reference, Segmentation, SegmentationError
from qseg.segmenters.base import Segmenter
from qseg.segmenters.spec import SpecError

__all__ = [
    "AgreementError",
    "CacheError",
    "DataError",
    "InputError",
    "ModelError",
    "NestedSegmentation",
    "NotFittedSegmenterError",
    "PathError",
    "QsegError",
    "Query",
    "QueryError",
    "RandomModelError",
    "Reference",
    "ResourceMismatch",
    "Resources",
    "Segmentation",
    "SegmentationError",
    "Segmenter",
    "SpecError",
    "StoreError",
    "normalize",
    "segment",
    "segmenter",
]


class _ResourceFiles(TypedDict, total=False):
    """The resource files of :func:`segmenter`, as :meth:`Resources.load` takes them."""

    ngrams: StrPath | None
    titles: StrPath | None
    unigrams: StrPath | None
    bigrams: StrPath | None
    query_log: StrPath | None


def segmenter(
    method: str | None = None,
    resources: Resources | None = None,
    *,
    ngrams: StrPath | None = None,
    titles: StrPath | None = None,
    unigrams: StrPath | None = None,
    bigrams: StrPath | None = None,
    query_log: StrPath | None = None,
    allow_other_resources: bool = False,
) -> Segmenter:
    """A segmenter by method spec, shipped model name or model file path, on ``resources``
    (a :class:`Resources` in memory) or on resources read from the files named (not both);
    the built-in ones stand in for what is not given. A saved model refuses resources other
    than it was trained with unless ``allow_other_resources``.

    Without a method: the shipped default model (where none is shipped, the rule-based
    ``wiki(unseen_titles=true)`` where titles are available, else ``naive``).
    """
    files: _ResourceFiles = {
        "ngrams": ngrams,
        "titles": titles,
        "unigrams": unigrams,
        "bigrams": bigrams,
    }
    files["query_log"] = query_log
    given = [name for name, path in files.items() if path is not None]
    if resources is not None and given:
        raise QsegError(
            f"give resources or resource files ({', '.join(given)}), not both: "
            "Resources.load(...) reads files into a Resources"
        )
    if resources is None:
        with extras_named():
            resources = Resources.load(**files)
    return open_segmenter(
        method or default_method(resources),
        resources,
        allow_other_resources=allow_other_resources,
    )


@cache
def _default(method: str | None) -> Segmenter:
    return segmenter(method)


def segment(query: Query, method: str | None = None) -> Segmentation:
    """Segment one query (text or a list of words) with the built-in default resources
    (method as in :func:`segmenter`)."""
    return _default(method).segment(query)


def __getattr__(name: str) -> Any:
    """The error of a trainable segmenter used untrained, imported only when asked for (its
    module needs scikit-learn)."""
    if name == "NotFittedSegmenterError":
        from qseg.segmenters.supervised import NotFittedSegmenterError

        return NotFittedSegmenterError
    raise AttributeError(f"module 'qseg' has no attribute {name!r}")
