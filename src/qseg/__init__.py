"""qseg: web search query segmentation.

>>> import qseg
>>> qseg.segment("new york yankees tickets", "naive").to_pipe()  # built-in resources
'new york|yankees|tickets'
>>> seg = qseg.Segmentation.from_pipe("new york yankees|tickets")
>>> seg.to_quoted()
'"new york yankees" tickets'
"""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING, Any, TypedDict

from qseg.errors import (
    AgreementError,
    CacheError,
    DataError,
    InputError,
    PathError,
    QsegError,
    RandomModelError,
    StyleHint,
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

if TYPE_CHECKING:
    from qseg.annotation.gold import Annotated

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
    "StyleHint",
    "adapt",
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
    phrases: StrPath | None = None,
) -> Segmenter:
    """A segmenter by method spec, shipped model name or model file path, on ``resources``
    (a :class:`Resources` in memory) or on resources read from the files named (not both);
    the built-in ones stand in for what is not given. A saved model refuses resources other
    than it was trained with unless ``allow_other_resources``.

    Without a method: the shipped default model (where none is shipped, the rule-based
    ``wiki(unseen_titles=true)`` where titles are available, else ``naive``). ``phrases``: a
    file of phrases (one a line) that every answer keeps whole
    (:mod:`qseg.segmenters.phrase_list`).
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
        phrases=phrases,
    )


@cache
def _default(method: str | None) -> Segmenter:
    return segmenter(method)


def segment(query: Query, method: str | None = None) -> Segmentation:
    """Segment one query (text or a list of words) with the built-in default resources
    (method as in :func:`segmenter`)."""
    return _default(method).segment(query)


def adapt(
    base: str | os.PathLike[str] | Segmenter,
    gold: Annotated,
    *,
    resources: Resources | None = None,
    allow_other_resources: bool = False,
    folds: int = 5,
    random_state: int = 0,
    n_jobs: int = 1,
) -> Segmenter:
    """A model adapted from ``base`` (a shipped model's name, ``default`` included, with its
    style; a model file; or a trained model) to the annotated queries ``gold``: a gold file
    as ``qseg train --gold`` reads it, an annotation project, segmentations (pipe text or
    :class:`Segmentation`) or query id -> segmentation or votes. The best of continuing from
    the base, training on the annotations alone, the two decoded together and keeping the
    base, by ``folds``-fold
    cross-validation over them (docs/adapting.md); save it with :func:`qseg.models.save`,
    and its file names the base by fingerprint. Needs the ``train`` extra."""
    with extras_named():
        from qseg.annotation.gold import annotated
        from qseg.evaluation.adaptation import adapt_model
        from qseg.models.adapting import base_model

        model = base_model(base, resources, allow_other_resources=allow_other_resources)  # type: ignore[arg-type]
        data = annotated(gold)
        return adapt_model(
            model,
            data.words,
            data.targets,
            folds=folds,
            random_state=random_state,
            n_jobs=n_jobs,
        )


def __getattr__(name: str) -> Any:
    """The error of a trainable segmenter used untrained, imported only when asked for (its
    module needs scikit-learn)."""
    if name == "NotFittedSegmenterError":
        from qseg.segmenters.learned.supervised import NotFittedSegmenterError

        return NotFittedSegmenterError
    raise AttributeError(f"module 'qseg' has no attribute {name!r}")
