"""A trained break classifier as it segments: what :class:`.supervised.BreakClassifier` learns,
and what a model file holds.

It computes each gap's inputs (:func:`gap_inputs`, plus the probe and lexicon columns), the
break probabilities of the gap model, and where decoding is joint scores the most probable
break vectors of each query with the joint scorers (:mod:`.joint`). Trees are evaluated from
arrays (:mod:`.trees`), so a model segments, and loads, without scikit-learn or XGBoost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice, pairwise
from typing import Any

import numpy as np

from qseg.errors import QsegError
from qseg.query import normalize
from qseg.resources.vectors import WordVectors
from qseg.segmentation import Segmentation
from qseg.segmenters.contextual import BreakProbe, gap_rows, require_encoder
from qseg.segmenters.decoder import kbest_gaps
from qseg.segmenters.domain import DomainModel
from qseg.segmenters.gap_features import (
    FeatureSource,
    QueryTables,
    SpanTables,
    gap_features,
    pair_count_features,
    query_tables,
)
from qseg.segmenters.gap_models import LinearGapModel
from qseg.segmenters.joint import MAX_JOINT_WORDS, candidate_bits, candidate_features
from qseg.segmenters.lexicon import Lexicon, gap_keys
from qseg.segmenters.name_features import name_features
from qseg.segmenters.records import BATCH
from qseg.segmenters.trainable import Decoding, Inputs
from qseg.segmenters.trees import TreeEnsemble

_JOINT_BATCH = 512
"""Queries whose candidates are built at once when segmenting (12 words: 2,048 candidates)."""


def gap_inputs(
    words: Sequence[tuple[str, ...]],
    tags: Sequence[Sequence[str] | None] | None,
    tables: SpanTables | None,
    source: FeatureSource | None,
    inputs: Inputs,
    vectors: WordVectors | None,
) -> np.ndarray:
    """The columns of every gap that need no training: gap features, name statistics and the
    word vectors of the two words (the probe and lexicon columns follow them)."""
    parts = []
    gaps = sum(len(w) - 1 for w in words)
    if inputs.features:
        assert source is not None
        parts.append(gap_features(words, source, tags, tables))
    if inputs.name_statistics:
        assert source is not None and source.names is not None
        parts.append(name_features(words, source.names))
    if inputs.pair_counts:
        assert source is not None
        parts.append(pair_count_features(words, source.counts))
    if vectors is not None:
        left = [w[g] for w in words for g in range(len(w) - 1)]
        right = [w[g + 1] for w in words for g in range(len(w) - 1)]
        parts += [vectors.lookup(left), vectors.lookup(right)]
    return np.hstack(parts) if parts else np.zeros((gaps, 0), dtype=np.float32)


@dataclass
class BreakModel:
    """Everything a trained break classifier segments with; a segmenter.

    ``params`` are the constructor parameters of the classifier it was trained as (what a
    model file records); ``resources`` what it records of the resources it was trained with.
    """

    spec_text: str | None
    params: dict[str, Any]
    source: FeatureSource | None
    vectors: WordVectors | None
    probe: BreakProbe | None
    domain: DomainModel | None
    lexicon: Lexicon | None
    gap_model: LinearGapModel | TreeEnsemble
    joint: TreeEnsemble | None
    ranker: TreeEnsemble | None
    phrases: Mapping[str, float]
    n_features: int
    tagged: bool
    resources: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    @property
    def spec(self) -> str:
        """The model file (or shipped name) it was loaded by, else the registry spec."""
        if self.spec_text is None:
            raise QsegError(
                "this combination of inputs and decoding is none of the registered methods "
                "(joint, features, embeddings)"
            )
        return self.spec_text

    @property
    def inputs(self) -> Inputs:
        return self.params.get("inputs") or Inputs()

    @property
    def decoding(self) -> Decoding:
        return self.params.get("decoding") or Decoding()

    @property
    def uses_tags(self) -> bool:
        """Whether it was trained with part-of-speech tags (and so takes them)."""
        return self.tagged

    # -- gap probabilities ---------------------------------------------------------------

    def break_probabilities(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[np.ndarray]:
        """Per query, the probability of a break at each gap."""
        return self._probabilities([as_words(q) for q in queries], tags)[0]

    def _probabilities(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
    ) -> tuple[list[np.ndarray], SpanTables | None, np.ndarray | None]:
        """Gap probabilities per query, the span tables they were computed from, and each
        query's kind (with the domain input). Queries without tags (``tags`` None, or None
        for a query) go without tag features."""
        check_tags(words, tags)
        tables = query_tables(words, self.source) if self.source is not None else None
        x = gap_inputs(words, tags, tables, self.source, self.inputs, self.vectors)
        if self.probe is not None:
            x = np.hstack([x, self.probe.score(gap_rows(require_encoder(), words))])
        kinds = None
        if self.domain is not None:
            kinds = self.domain.predict(words)
            x = np.hstack([x, np.repeat(kinds, [len(w) - 1 for w in words])[:, None]])
        if self.lexicon is not None:
            x = np.hstack([x, self.lexicon.encode([k for w in words for k in gap_keys(w)])])
        if x.shape[1] != self.n_features:  # (n_features_in_ of the classifier it froze)
            raise QsegError(
                f"the inputs give {x.shape[1]} features, the model was fitted on {self.n_features}"
            )
        p = self.gap_model.predict(x) if len(x) else np.zeros(0)
        return per_query(p, words), tables, kinds

    # -- joint decoding ------------------------------------------------------------------

    def _joint_rows(self, words: Sequence[tuple[str, ...]]) -> list[int]:
        """The queries that joint decoding decides (2 to 12 words), if the model has it."""
        if self.joint is None:
            return []
        return [i for i, w in enumerate(words) if 2 <= len(w) <= MAX_JOINT_WORDS]

    def _joint_scores(
        self,
        words: Sequence[tuple[str, ...]],
        probabilities: Sequence[np.ndarray],
        tables: Sequence[QueryTables] | SpanTables,
        tags: Sequence[Sequence[str] | None] | None,
        kinds: np.ndarray | None,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query (2 to 12 words), its ``max_candidates`` most probable break vectors under
        the gap model (rows of :func:`.joint.candidate_bits`) and their joint scores."""
        assert self.joint is not None
        candidates = self.decoding.max_candidates
        out = []
        for first in range(0, len(words), _JOINT_BATCH):
            part = range(first, min(first + _JOINT_BATCH, len(words)))
            blocks = candidate_features(
                [words[i] for i in part],
                [probabilities[i] for i in part],
                [tables[i] for i in part],
                [self.phrases] * len(part),
                [tags[i] for i in part] if tags is not None else None,
            )
            if kinds is not None:
                blocks = with_domain(blocks, kinds[first : first + len(part)])
            kept = [np.argsort(-b[:, 0], kind="stable")[:candidates] for b in blocks]
            rows = np.vstack([b[k] for b, k in zip(blocks, kept, strict=True)])
            scores = self.joint.predict(rows)
            if self.ranker is not None:
                scores = scores + self.ranker.predict(rows)
            bounds = np.cumsum([0, *(len(k) for k in kept)])
            out += [(k, scores[a:b]) for k, (a, b) in zip(kept, pairwise(bounds), strict=True)]
        return out

    # -- segmenting ----------------------------------------------------------------------

    def predict(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[Segmentation]:
        """The segmentation of each query."""
        words = [as_words(q) for q in queries]
        probabilities, tables, kinds = self._probabilities(words, tags)
        breaks = [tuple((p > 0.5).astype(int).tolist()) for p in probabilities]
        chosen = self._joint_rows(words)
        if chosen:
            assert tables is not None
            scored = self._joint_scores(
                [words[i] for i in chosen],
                [probabilities[i] for i in chosen],
                [tables[i] for i in chosen],
                [tags[i] for i in chosen] if tags is not None else None,
                kinds[chosen] if kinds is not None else None,
            )
            for i, (kept, scores) in zip(chosen, scored, strict=True):
                best = kept[int(np.argmax(scores))]
                breaks[i] = tuple(candidate_bits(len(words[i]))[best].tolist())
        return [Segmentation._trusted(w, b) for w, b in zip(words, breaks, strict=True)]

    def segment(self, query: str, tags: Sequence[str] | None = None) -> Segmentation:
        """The segmentation of one query (with its part-of-speech tags, if the model uses
        them and they are known)."""
        return self.predict([query], None if tags is None else [tags])[0]

    def segment_many(
        self,
        queries: Iterable[str],
        tags: Iterable[Sequence[str] | None] | None = None,
    ) -> Iterator[Segmentation]:
        """Segment queries in batches of :data:`.records.BATCH` (a query's tags may be None)."""
        items = iter(queries)
        tag_items = iter(tags) if tags is not None else None
        while batch := list(islice(items, BATCH)):
            batch_tags = None
            if tag_items is not None:
                batch_tags = list(islice(tag_items, len(batch)))
                if len(batch_tags) != len(batch):
                    raise QsegError("fewer tag lists than queries")
            yield from self.predict(batch, batch_tags)

    def rank(
        self, query: str, k: int, tags: Sequence[str] | None = None
    ) -> list[tuple[Segmentation, float]]:
        """The ``k`` best segmentations with their scores. Where decoding is joint (2 to 12
        words): the ``max_candidates`` break vectors the gap model finds most probable, ordered
        by the joint scorers' margin: the segmentations the model chooses among, so at most
        ``max_candidates`` of them. Otherwise by the log-probability of the breaks under the
        gap model. The first is always :meth:`segment`'s."""
        if k < 1:
            raise QsegError(f"k must be at least 1, got {k}")
        words = as_words(query)
        query_tags = None if tags is None else [tags]
        probabilities, tables, kinds = self._probabilities([words], query_tags)
        if self._joint_rows([words]):
            assert tables is not None
            kept, scores = self._joint_scores([words], probabilities, tables, query_tags, kinds)[0]
            bits = candidate_bits(len(words))
            order = sorted(range(len(kept)), key=lambda j: (-scores[j], j))[:k]
            return [
                (Segmentation._trusted(words, tuple(bits[kept[j]].tolist())), float(scores[j]))
                for j in order
            ]
        p = np.clip(probabilities[0].astype(np.float64), 1e-12, 1 - 1e-12)
        ranked = kbest_gaps(np.log(p).tolist(), np.log1p(-p).tolist(), k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def __repr__(self) -> str:
        return f"<BreakModel {self.spec_text or 'unregistered'}>"


def with_domain(blocks: Sequence[np.ndarray], kinds: np.ndarray) -> list[np.ndarray]:
    """Candidate feature blocks, each with its query's kind as one more column."""
    out = []
    for block, kind in zip(blocks, kinds, strict=True):
        wider = np.empty((len(block), block.shape[1] + 1), dtype=block.dtype)
        wider[:, :-1] = block
        wider[:, -1] = kind
        out.append(wider)
    return out


def per_query(per_gap: np.ndarray, words: Sequence[tuple[str, ...]]) -> list[np.ndarray]:
    """Split values given gap after gap, query after query, into one array per query."""
    bounds = np.cumsum([0, *(len(w) - 1 for w in words)])
    return [per_gap[a:b] for a, b in pairwise(bounds)]


def as_words(query: str | Sequence[str]) -> tuple[str, ...]:
    return normalize(query) if isinstance(query, str) else normalize(" ".join(query))


def check_tags(
    words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
) -> None:
    if tags is None:
        return
    if len(tags) != len(words):
        raise QsegError(f"{len(words)} queries but {len(tags)} tag lists")
    for w, t in zip(words, tags, strict=True):
        if t is not None and len(t) != len(w):
            raise QsegError(f"{len(t)} tags for the {len(w)} words of {' '.join(w)!r}")
