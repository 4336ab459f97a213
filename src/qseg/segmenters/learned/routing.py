"""One model per kind of query: each query segmented by the model trained on its kind.

Web queries (Webis-QSeC-10) and product queries (QueryNER) follow different conventions
(phrases; entity spans whole), and a model trained on one kind segments that kind better than
one trained on both with the kind as an input (docs/default-model.md). A :class:`RoutedModel`
holds one trained model per kind and the query-kind classifier (:class:`.domain.DomainModel`)
that sends each query to one of them (``style=auto``), or sends every query to one kind's
model (``style=web``, ``style=product``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from qseg.errors import QsegError, StyleHint
from qseg.query import Query, normalize
from qseg.segmentation import Segmentation
from qseg.segmenters.base import InBatches
from qseg.segmenters.learned._domain_kernel import DomainKernel
from qseg.segmenters.learned.break_model import BreakModel
from qseg.segmenters.learned.compiled import domain_kernel
from qseg.segmenters.learned.domain import DomainModel

AUTO = "auto"
HINT_QUERIES = 500
"""The queries a model in a fixed style looks at before saying whether another style fits
them (:class:`~qseg.errors.StyleHint`)."""
HINT_SHARE = 0.8
"""The share of them of another kind that makes it say so."""


class KindWatch:
    """What a routed model in a fixed style has seen of the first :data:`HINT_QUERIES`
    queries it segmented: how many the router takes for each kind (then it says, once, if
    another kind than its style's made :data:`HINT_SHARE` of them)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.done = False

    def __getstate__(self) -> dict[str, object]:  # a copy elsewhere watches afresh
        return {"counts": {}, "done": self.done}


@dataclass(frozen=True)
class RoutedModel(InBatches):
    """A model per kind of query (``models``, keyed by the router's labels) and the router.

    Loaded for a fixed style, it may hold that kind's model alone (the other is never read:
    a process that segments in one style decodes one model)."""

    router: DomainModel
    models: Mapping[str, BreakModel]
    spec_text: str | None = None
    style: str = AUTO
    """``auto``: each query to the model of the kind the router gives it; or one kind, whose
    model segments every query."""
    contextual: Mapping[str, BreakModel] = field(default_factory=dict)
    """A model per kind with the contextual probe as well, saved beside ``models`` for those
    who opt in (:func:`qseg.models.load` with ``contextual=True`` segments with them); not
    loaded otherwise, as they need torch."""
    watch: KindWatch = field(default_factory=KindWatch, compare=False, repr=False)
    """The kinds of the first queries segmented in a fixed style (:meth:`_noticed`)."""

    def __post_init__(self) -> None:
        labels = set(self.router.labels)
        if not self.models or not set(self.models) <= labels:
            raise QsegError(
                f"a model for each kind the router tells apart ({', '.join(self.router.labels)}),"
                f" not for {', '.join(sorted(self.models)) or 'none'}"
            )
        if self.contextual and set(self.contextual) != labels:
            raise QsegError("a contextual model for each kind, or none")
        if self.style not in self.styles:
            raise QsegError(f"style must be one of {', '.join(self.styles)}, not {self.style!r}")
        needed = labels if self.style == AUTO else {self.style}
        if not needed <= set(self.models):
            loaded = " and ".join(sorted(self.models))
            raise QsegError(
                f"loaded with the {loaded} model only (for its style): load it with "
                f"style={self.style} to segment in that style"
            )

    @property
    def complete(self) -> bool:
        """Whether it holds every kind's model (one loaded for a fixed style holds one)."""
        return set(self.models) == set(self.router.labels)

    @property
    def styles(self) -> tuple[str, ...]:
        return (AUTO, *self.router.labels)

    @property
    def spec(self) -> str:
        """The model file (or shipped name) it was loaded by."""
        if self.spec_text is None:
            raise QsegError("a routed model has no spec until it is saved and loaded")
        return self.spec_text

    @property
    def uses_tags(self) -> bool:
        """Whether its models were trained with part-of-speech tags (and so take them)."""
        return any(model.uses_tags for model in self.models.values())

    def with_style(self, style: str, spec: str | None = None) -> RoutedModel:
        """This model segmenting in ``style`` (see :attr:`style`), known as ``spec``."""
        return replace(self, style=style, spec_text=spec or self.spec_text, watch=KindWatch())

    def uncompiled(self) -> RoutedModel:
        """This router with every query of each kind on the Python path."""
        return replace(self, models={kind: m.uncompiled() for kind, m in self.models.items()})

    def kinds(self, queries: Sequence[Query]) -> list[str]:
        """The kind of query whose model segments each query."""
        return self._kinds([normalize(q) for q in queries])

    def _kinds(self, words: Sequence[tuple[str, ...]]) -> list[str]:
        if self.style != AUTO:
            if not self.watch.done:
                self._noticed(words)
            return [self.style] * len(words)
        router = self._router
        first, other = self.router.labels
        return [other if router.predict(w) >= 0.5 else first for w in words]

    def _noticed(self, words: Sequence[tuple[str, ...]]) -> None:
        """Count the kinds the router gives the first :data:`HINT_QUERIES` queries; once
        there, warn if another kind than the style's made :data:`HINT_SHARE` of them."""
        watch = self.watch
        first, other = self.router.labels
        for w in words[: HINT_QUERIES - sum(watch.counts.values())]:
            kind = other if self._router.predict(w) >= 0.5 else first
            watch.counts[kind] = watch.counts.get(kind, 0) + 1
        if sum(watch.counts.values()) < HINT_QUERIES:
            return
        watch.done = True
        kind, count = max(watch.counts.items(), key=lambda item: item[1])
        if kind != self.style and count >= HINT_SHARE * HINT_QUERIES:
            name = self.spec_text.split("(", 1)[0] if self.spec_text else None
            fits = f"{name}(style={kind})" if name else f"the model's style={kind}"
            warnings.warn(
                StyleHint(
                    f"{count} of the first {HINT_QUERIES} queries look like {kind} queries: "
                    f"{fits} segments them by {kind} search conventions ({name or 'it'} "
                    f"answers in the {self.style} style; the answers are unchanged)"
                ),
                stacklevel=2,
            )

    @cached_property
    def _router(self) -> DomainKernel:
        """The router compiled (the same probabilities as ``router.predict``, to the bit)."""
        return domain_kernel(self.router)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state.pop("_router", None)  # compiled again where it is unpickled
        return state

    def _routed(self, words: Sequence[tuple[str, ...]]) -> Iterator[tuple[BreakModel, list[int]]]:
        """Each model with the positions of the (normalized) queries it segments."""
        where: dict[str, list[int]] = {}
        for i, kind in enumerate(self._kinds(words)):
            where.setdefault(kind, []).append(i)
        for kind, model in self.models.items():
            if kind in where:
                yield model, where[kind]

    def predict(
        self,
        queries: Sequence[Query],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[Segmentation]:
        """The segmentation of each query, by the model of its kind."""
        return self._predict_words([normalize(q) for q in queries], tags)

    def _predict_words(
        self, words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
    ) -> list[Segmentation]:
        """:meth:`predict` of queries already normalized."""
        out: list[Segmentation | None] = [None] * len(words)
        for model, where in self._routed(words):
            picked = [words[i] for i in where]
            picked_tags = [tags[i] for i in where] if tags is not None else None
            found = model._predict_words(picked, picked_tags)
            for i, segmentation in zip(where, found, strict=True):
                out[i] = segmentation
        return out  # type: ignore[return-value]  # every position was routed

    def break_probabilities(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[np.ndarray]:
        """Per query, the probability of a break at each gap (by the model of its kind)."""
        words = [normalize(q) for q in queries]
        out: list[np.ndarray | None] = [None] * len(words)
        for model, where in self._routed(words):
            picked_tags = [tags[i] for i in where] if tags is not None else None
            found = model.break_probabilities([words[i] for i in where], picked_tags)
            for i, probabilities in zip(where, found, strict=True):
                out[i] = probabilities
        return out  # type: ignore[return-value]

    def segment(self, query: Query, tags: Sequence[str] | None = None) -> Segmentation:
        words = normalize(query)
        (kind,) = self._kinds([words])
        return self.models[kind]._segment_words(words, tags)

    def rank(
        self, query: Query, k: int, tags: Sequence[str] | None = None
    ) -> list[tuple[Segmentation, float]]:
        """The ``k`` best segmentations with their scores, by the model of its kind."""
        (kind,) = self.kinds([query])
        return self.models[kind].rank(query, k, tags)

    def __repr__(self) -> str:
        return f"<RoutedModel {self.spec_text or 'unsaved'} style={self.style}>"
