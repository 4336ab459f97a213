"""A trained break classifier as it segments: what :class:`.supervised.BreakClassifier` learns,
and what a model file holds.

It computes each gap's inputs (:func:`gap_inputs`, plus the probe and lexicon columns), the
break probabilities of the gap model, and where decoding is joint scores the most probable
break vectors of each query with the joint scorers (:mod:`.joint`). Trees are evaluated from
arrays (:mod:`.trees`), so a model segments, and loads, without scikit-learn or XGBoost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np

from qseg.errors import QsegError
from qseg.query import Query, normalize
from qseg.resources.vectors import WordVectors
from qseg.segmentation import Segmentation
from qseg.segmenters.base import InBatches
from qseg.segmenters.decoder import check_k, kbest_gaps
from qseg.segmenters.learned._decoding import averaged_choice
from qseg.segmenters.learned.adaptation import AdaptedParts, merged_phrases
from qseg.segmenters.learned.compiled import MAX_COMPILED_WORDS, JointKernel, compile_model
from qseg.segmenters.learned.contextual import BreakProbe, gap_rows, require_encoder
from qseg.segmenters.learned.domain import DomainModel
from qseg.segmenters.learned.gap_features import (
    FeatureSource,
    QueryTables,
    SpanTables,
    gap_features,
    pair_count_features,
    query_tables,
)
from qseg.segmenters.learned.gap_models import LinearGapModel
from qseg.segmenters.learned.joint import (
    MAX_JOINT_WORDS,
    candidate_bits,
    candidate_features,
    chosen_candidate_features,
    untitled_long,
)
from qseg.segmenters.learned.lexicon import Lexicon, gap_keys
from qseg.segmenters.learned.name_features import name_features
from qseg.segmenters.learned.trainable import Decoding, Inputs, check_decoding
from qseg.segmenters.learned.trees import TreeEnsemble

WINDOW_WORDS = 8
"""The words around a gap of a long query that its probability is judged in (see
:func:`gap_windows`): twice the gap features' reach of four words each side."""

_SEARCHED = 64
"""Break vectors searched beyond the k wanted for ones the title rule allows."""

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
    if vectors is not None:  # one lookup of the left words, then the right
        found = vectors.lookup(
            [w[g + side] for side in (0, 1) for w in words for g in range(len(w) - 1)]
        )
        parts += [found[:gaps], found[gaps:]]
    return np.hstack(parts) if parts else np.zeros((gaps, 0), dtype=np.float32)


@dataclass
class BreakModel(InBatches):
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
    style: str = "auto"
    """The segmentation style of a model trained on two kinds of query (the domain input):
    one of the kinds (its conventions for every query), or ``auto``: each query's kind as the
    domain model infers it, as in training (:meth:`with_style`)."""
    adapted: AdaptedParts | None = field(default=None, compare=False)
    """What adapting added to a base model (:mod:`.adaptation`), for a model adapted to a
    domain's annotations: what its file holds besides the name of its base."""
    origin: dict[str, Any] | None = field(default=None, compare=False)
    """Where the model was loaded from (a shipped model's name and kind, or a file's path,
    and the file's SHA-256): how a model adapted from it names its base."""
    compiled: bool = field(default=True, compare=False)
    """Whether queries the compiled kernel covers go through it (:mod:`.compiled`); ``False``
    keeps every query on the Python path, the reference the kernel is tested against."""
    partner: BreakModel | None = field(default=None, compare=False)
    """An adapted model's other start, decoded with it (``AdaptedParts.partner``): each query
    gets the candidate the two choose together (:func:`._decoding.averaged_choice`)."""

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_kernel", None)  # compiled again where it is unpickled
        return state

    @cached_property
    def _kernel(self) -> JointKernel | None:
        """The compiled kernel of this model (made at its first query), or ``None`` where it
        does not cover the model or ``compiled`` is off."""
        return compile_model(self) if self.compiled else None

    def uncompiled(self) -> BreakModel:
        """This model with every query on the Python path (the reference of the tests and
        benchmarks)."""
        partner = self.partner.uncompiled() if self.partner is not None else None
        return replace(self, compiled=False, partner=partner)

    @property
    def _partner_kernel(self) -> JointKernel | None:
        return self.partner._kernel if self.partner is not None else None

    @property
    def spec(self) -> str:
        """The model file (or shipped name) it was loaded by, else the registry spec."""
        if self.spec_text is None:
            raise QsegError(
                "this combination of inputs and decoding is none of the registered methods "
                "(joint, features, embeddings)"
            )
        return self.spec_text

    def adapted_by(self, parts: AdaptedParts) -> BreakModel:
        """This model with what adapting it learnt (:mod:`.adaptation`): the one way both a
        fitted adaptation and a loaded file become a segmenter."""
        if not isinstance(self.gap_model, TreeEnsemble):
            raise QsegError("only a model with boosted trees can be adapted")
        fresh = parts.adaptation.start == "fresh"
        lexicon = self.lexicon
        if lexicon is not None and parts.lexicon is not None:
            lexicon = (
                parts.lexicon if fresh else lexicon.merged(parts.lexicon, parts.adaptation.weight)
            )
        joint, ranker = self.joint, self.ranker
        if joint is not None and parts.joint_trees is not None:
            joint = parts.joint_trees if fresh else joint.extended(parts.joint_trees)
        if ranker is not None and parts.ranker_trees is not None:
            ranker = parts.ranker_trees if fresh else ranker.extended(parts.ranker_trees)
        gap = parts.gap_trees if fresh else self.gap_model.extended(parts.gap_trees)
        return replace(
            self,
            spec_text=None,
            gap_model=gap,
            joint=joint,
            ranker=ranker,
            lexicon=lexicon,
            phrases=merged_phrases(self.phrases, parts.phrase_counts, parts.adaptation),
            adapted=parts,
            origin=None,
            partner=self.adapted_by(parts.partner) if parts.partner is not None else None,
        )

    @property
    def inputs(self) -> Inputs:
        return self.params.get("inputs") or Inputs()

    @property
    def decoding(self) -> Decoding:
        """How it decodes, checked (:func:`.trainable.check_decoding`): a model made in memory
        may hold settings no file loads with, refused in one line by the Python path as by
        the kernel (:func:`.compiled.compile_model`)."""
        return check_decoding(self.params.get("decoding") or Decoding())

    @property
    def uses_tags(self) -> bool:
        """Whether it was trained with part-of-speech tags (and so takes them)."""
        return self.tagged

    def with_style(self, style: str, spec: str | None = None) -> BreakModel:
        """This model segmenting in ``style`` (see :attr:`style`), known as ``spec``."""
        styles = ("auto", *self.domain.labels) if self.domain is not None else ("auto",)
        if style not in styles:
            if self.domain is None:
                raise QsegError(
                    f"{self.spec_text or 'the model'} has no styles to choose from: it was "
                    "trained without the query's kind (the domain input)"
                )
            raise QsegError(f"style must be one of {', '.join(styles)}, not {style!r}")
        partner = self.partner.with_style(style) if self.partner is not None else None
        return replace(self, style=style, spec_text=spec or self.spec_text, partner=partner)

    def _kinds(self, words: Sequence[tuple[str, ...]]) -> np.ndarray | None:
        """Each query's kind as the domain input takes it: the probability of the second kind,
        inferred (``auto``) or fixed by the style."""
        if self.domain is None:
            return None
        if self.style == "auto":
            return self.domain.predict(words)
        value = 1.0 if self.style == self.domain.labels[1] else 0.0
        return np.full(len(words), value, dtype=np.float32)

    # -- gap probabilities ---------------------------------------------------------------

    def break_probabilities(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[np.ndarray]:
        """Per query, the probability of a break at each gap (with a partner: the mean of
        the two models')."""
        words = [normalize(q) for q in queries]
        found = self._probabilities(words, tags)[0]
        if self.partner is None:
            return found
        theirs = self.partner._probabilities(words, tags)[0]
        return [(a + b) / 2 for a, b in zip(found, theirs, strict=True)]

    def _probabilities(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
    ) -> tuple[list[np.ndarray], SpanTables | None, np.ndarray | None]:
        """Gap probabilities per query, the span tables of the queries, and each query's kind
        (with the domain input). Queries without tags (``tags`` None, or None for a query) go
        without tag features. A query longer than :data:`.joint.MAX_JOINT_WORDS` words has
        each gap's probability from the window of that many words centred on it
        (:func:`gap_windows`): the model learnt from shorter queries, and its inputs of the
        query's length and the gap's position would leave what it learnt from."""
        check_tags(words, tags)
        tables = query_tables(words, self.source) if self.source is not None else None
        kinds = self._kinds(words)
        if all(len(w) <= MAX_JOINT_WORDS for w in words):
            return per_query(self._gap_p(words, tags, tables, kinds), words), tables, kinds
        units: list[tuple[str, ...]] = []
        parents: list[int] = []  # the query of each unit, whose kind the unit takes
        unit_tags: list[Sequence[str] | None] = []
        index: dict[tuple[int, int], int] = {}
        picks: list[list[tuple[int, int]]] = []
        for q, w in enumerate(words):
            picks.append([])
            for start, end, gap in gap_windows(len(w)):
                if (q, start) not in index:
                    index[q, start] = len(units)
                    units.append(w[start:end])
                    parents.append(q)
                    known = tags[q] if tags is not None else None
                    unit_tags.append(None if known is None else known[start:end])
                picks[-1].append((index[q, start], gap))
        unit_tables = query_tables(units, self.source) if self.source is not None else None
        unit_kinds = kinds[parents] if kinds is not None else None
        p = per_query(self._gap_p(units, unit_tags, unit_tables, unit_kinds), units)
        probabilities = [np.array([p[u][g] for u, g in pick], dtype=p[0].dtype) for pick in picks]
        return probabilities, tables, kinds

    def _gap_p(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
        tables: SpanTables | None,
        kinds: np.ndarray | None,
    ) -> np.ndarray:
        """The gap model's break probability of every gap, query after query."""
        x = gap_inputs(words, tags, tables, self.source, self.inputs, self.vectors)
        if self.probe is not None:
            x = np.hstack([x, self.probe.score(gap_rows(require_encoder(), words))])
        if kinds is not None:
            x = np.hstack([x, np.repeat(kinds, [len(w) - 1 for w in words])[:, None]])
        if self.lexicon is not None:
            x = np.hstack([x, self.lexicon.encode([k for w in words for k in gap_keys(w)])])
        if x.shape[1] != self.n_features:  # (n_features_in_ of the classifier it froze)
            raise QsegError(
                f"the inputs give {x.shape[1]} features, the model was fitted on {self.n_features}"
            )
        return self.gap_model.predict(x) if len(x) else np.zeros(0)

    # -- joint decoding ------------------------------------------------------------------

    def _joint_rows(self, words: Sequence[tuple[str, ...]]) -> list[int]:
        """The queries that joint decoding decides (2 words or more), if the model has it."""
        if self.joint is None:
            return []
        return [i for i, w in enumerate(words) if len(w) >= 2]

    def _gap_breaks(
        self, words: Sequence[str], p: np.ndarray, table: QueryTables | None
    ) -> tuple[int, ...]:
        """Gap by gap: a break where p > 0.5; where that gives a segment the rule of
        ``decoding.title_only_from`` forbids, the most probable segmentation it allows."""
        bits = tuple((p > 0.5).astype(int).tolist())
        if self._allowed(words, table, np.array([bits], dtype=np.int8))[0]:
            return bits
        return self._ranked_gaps(words, p, table, 1)[0][1]

    def _ranked_gaps(
        self, words: Sequence[str], p: np.ndarray, table: QueryTables | None, k: int
    ) -> list[tuple[float, tuple[int, ...]]]:
        """The ``k`` most probable break vectors under the gap model that the rule allows
        (the first :data:`_SEARCHED` beyond ``k`` are searched; splitting every word, always
        allowed, ends the list if they are not enough)."""
        p = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1 - 1e-12)
        ranked = kbest_gaps(np.log(p).tolist(), np.log1p(-p).tolist(), k + _SEARCHED)
        if not self.decoding.title_only_from:
            return ranked[:k]
        allowed = self._allowed(words, table, np.array([b for _, b in ranked], dtype=np.int8))
        kept = [r for r, ok in zip(ranked, allowed, strict=True) if ok][:k]
        split = (1,) * (len(words) - 1)
        if len(kept) < k and all(b != split for _, b in kept):
            kept.append((float(np.log(p).sum()), split))
        return kept

    def _allowed(
        self, words: Sequence[str], table: QueryTables | None, bits: np.ndarray
    ) -> np.ndarray:
        """Per candidate (rows of break bits), whether it keeps ``decoding.title_only_from``:
        no segment of that many words or more that the title table does not know."""
        limit = self.decoding.title_only_from
        if not limit or len(words) < limit or not len(bits):
            return np.ones(len(bits), dtype=bool)
        titles = table.titles if table is not None else np.zeros((len(words), len(words) + 1))
        return ~untitled_long(bits, titles, limit)

    @cached_property
    def _longest_phrase(self) -> int:
        """The most words of a phrase whose rate the model learnt."""
        return max((key.count(" ") + 1 for key in self.phrases), default=1)

    def _joint_scores(
        self,
        words: Sequence[tuple[str, ...]],
        probabilities: Sequence[np.ndarray],
        tables: Sequence[QueryTables] | SpanTables,
        tags: Sequence[Sequence[str] | None] | None,
        kinds: np.ndarray | None,
        window: int | None = None,
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per query (2 words or more), its ``window`` (default ``max_candidates``) most
        probable break vectors under the gap model, most probable first, one row each, and
        their joint scores. Up to :data:`.joint.MAX_JOINT_WORDS` words all candidates are
        described at once, in batches; a longer query by its own candidates."""
        assert self.joint is not None
        window = window or self.decoding.max_candidates
        chosen: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(0), np.zeros(0))] * len(words)
        short = [i for i, w in enumerate(words) if len(w) <= MAX_JOINT_WORDS]
        for first in range(0, len(short), _JOINT_BATCH):
            part = short[first : first + _JOINT_BATCH]
            blocks = candidate_features(
                [words[i] for i in part],
                [probabilities[i] for i in part],
                [tables[i] for i in part],
                [self.phrases] * len(part),
                [tags[i] for i in part] if tags is not None else None,
            )
            for i, block in zip(part, blocks, strict=True):
                order = np.argsort(-block[:, 0], kind="stable")
                every = candidate_bits(len(words[i]))
                if self.decoding.title_only_from:
                    order = order[self._allowed(words[i], tables[i], every)[order]]
                kept = order[:window]
                chosen[i] = (every[kept], block[kept])
        for i, w in enumerate(words):
            if len(w) > MAX_JOINT_WORDS:
                p = np.clip(probabilities[i].astype(np.float64), 1e-6, 1 - 1e-6)
                ranked = self._ranked_gaps(w, p, tables[i], window)
                bits = np.array([breaks for _, breaks in ranked], dtype=np.int8)
                block = chosen_candidate_features(
                    w,
                    probabilities[i],
                    tables[i],
                    self.phrases,
                    tags[i] if tags is not None else None,
                    bits,
                    self._longest_phrase,
                )
                chosen[i] = (bits, block)
        blocks = [block for _, block in chosen]
        if kinds is not None:
            blocks = with_domain(blocks, kinds)
        rows = np.vstack(blocks)
        scores = self.joint.predict(rows)
        if self.ranker is not None:
            scores = scores + self.ranker.predict(rows)
        bounds = np.cumsum([0, *(len(b) for b in blocks)])
        return [
            (bits, scores[a:b]) for (bits, _), (a, b) in zip(chosen, pairwise(bounds), strict=True)
        ]

    # -- segmenting ----------------------------------------------------------------------

    def predict(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[Segmentation]:
        """The segmentation of each query: by the compiled kernel where it covers the model
        and the query (2 to :data:`.compiled.MAX_COMPILED_WORDS` words, no tags), else by
        the Python path."""
        return self._predict_words([normalize(q) for q in queries], tags)

    def _predict_words(
        self, words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
    ) -> list[Segmentation]:
        """:meth:`predict` of queries already normalized."""
        kernel, partner = self._kernel, self._partner_kernel
        if (
            kernel is None
            or (partner is None and self.partner is not None)  # (a partner the kernel lacks)
            or (tags is not None and any(t is not None for t in tags))
        ):
            return self._predict(words, tags)
        out: list[Segmentation | None] = [None] * len(words)
        rest = []
        for i, w in enumerate(words):
            if 2 <= len(w) <= MAX_COMPILED_WORDS:
                found = kernel.breaks(w) if partner is None else kernel.breaks_with(partner, w)
                out[i] = Segmentation._trusted(w, found)
            elif len(w) == 1:
                out[i] = Segmentation._trusted(w, ())
            else:
                rest.append(i)
        long_ones = self._predict([words[i] for i in rest], None) if rest else []
        for i, segmentation in zip(rest, long_ones, strict=True):
            out[i] = segmentation
        return out  # type: ignore[return-value]  # every query was segmented

    def _predict(
        self, words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
    ) -> list[Segmentation]:
        """The Python path of :meth:`predict` (normalized words)."""
        breaks, scored = self._decided(words, tags)
        if self.partner is not None:
            theirs = self.partner._decided(words, tags)[1]
            for i, (bits, scores) in scored.items():
                other_bits, other_scores = theirs[i]
                breaks[i] = averaged_choice(bits, scores, other_bits, other_scores)
        return [Segmentation._trusted(w, b) for w, b in zip(words, breaks, strict=True)]

    def _decided(
        self, words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
    ) -> tuple[list[tuple[int, ...]], dict[int, tuple[np.ndarray, np.ndarray]]]:
        """Each query's break bits by this model alone, and for those the joint scorers
        decided, their candidates (int8 rows) and scores (float32)."""
        probabilities, tables, kinds = self._probabilities(words, tags)
        breaks = [
            self._gap_breaks(w, p, tables[i] if tables is not None else None)
            for i, (w, p) in enumerate(zip(words, probabilities, strict=True))
        ]
        chosen = self._joint_rows(words)
        found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if chosen:
            assert tables is not None
            scored = self._joint_scores(
                [words[i] for i in chosen],
                [probabilities[i] for i in chosen],
                [tables[i] for i in chosen],
                [tags[i] for i in chosen] if tags is not None else None,
                kinds[chosen] if kinds is not None else None,
            )
            for i, (bits, scores) in zip(chosen, scored, strict=True):
                breaks[i] = tuple(bits[int(np.argmax(scores))].tolist())
                found[i] = (
                    np.ascontiguousarray(bits, dtype=np.int8),
                    np.ascontiguousarray(scores, dtype=np.float32),
                )
        return breaks, found

    def segment(self, query: Query, tags: Sequence[str] | None = None) -> Segmentation:
        """The segmentation of one query (with its part-of-speech tags, if the model uses
        them and they are known)."""
        return self._segment_words(normalize(query), tags)

    def _segment_words(
        self, words: tuple[str, ...], tags: Sequence[str] | None = None
    ) -> Segmentation:
        """:meth:`segment` of a query already normalized: the hot path of a search request."""
        kernel = self._kernel
        if kernel is not None and tags is None and 2 <= len(words) <= MAX_COMPILED_WORDS:
            if self.partner is None:
                return Segmentation._trusted(words, kernel.breaks(words))
            partner = self._partner_kernel
            if partner is not None:
                return Segmentation._trusted(words, kernel.breaks_with(partner, words))
        return self._predict_words([words], None if tags is None else [tags])[0]

    def rank(
        self, query: Query, k: int, tags: Sequence[str] | None = None
    ) -> list[tuple[Segmentation, float]]:
        """The ``k`` best segmentations with their scores (a model with a partner: by
        :meth:`_ranked_together`, its scores probabilities). Where decoding is joint: first the
        ``max_candidates`` break vectors the gap model finds most probable (the segmentations
        the model chooses among), ordered by the joint scorers' margin; then, for a larger
        ``k``, the next most probable ones, ordered by their margin too, each shown with its
        margin capped at the lowest of the first group's (the model never chooses them over
        those). Otherwise by the log-probability of the breaks under the gap model. The first
        is always :meth:`segment`'s.

        There are ``k`` unless the query has fewer segmentations that the title rule
        (``decoding.title_only_from``) allows, with one exception: under the rule, a query of
        more than :data:`.joint.MAX_JOINT_WORDS` words (of any length where decoding is gap by
        gap) has the segmentations it allows among the ``max(k, max_candidates)`` (gap by gap:
        ``k``) plus :data:`_SEARCHED` break vectors the gap model finds most probable, and
        splitting every word (always allowed) if that leaves fewer than ``k``. A query most of
        whose likely segmentations hold a long segment that is no title gets fewer than ``k``
        (a 40-word query: 2,454 of 3,000), where searching on for allowed ones could take
        exponentially long."""
        check_k(k)
        words = normalize(query)
        if self.partner is not None:
            return self._ranked_together(words, k, tags)
        return self._rank_alone(words, k, tags)

    def _rank_alone(
        self, words: tuple[str, ...], k: int, tags: Sequence[str] | None
    ) -> list[tuple[Segmentation, float]]:
        """:meth:`rank` by this model, without its partner."""
        query_tags = None if tags is None else [tags]
        window = max(k, self.decoding.max_candidates)
        kernel = self._kernel
        if kernel is not None and tags is None and 2 <= len(words) <= MAX_COMPILED_WORDS:
            return self._ranked(words, *kernel.candidates(words, window))[:k]
        probabilities, tables, kinds = self._probabilities([words], query_tags)
        if self._joint_rows([words]):
            assert tables is not None
            bits, scores = self._joint_scores(
                [words], probabilities, tables, query_tags, kinds, window
            )[0]
            return self._ranked(words, bits, scores)[:k]
        table = tables[0] if tables is not None else None
        ranked = self._ranked_gaps(words, probabilities[0], table, k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def _ranked_together(
        self, words: tuple[str, ...], k: int, tags: Sequence[str] | None
    ) -> list[tuple[Segmentation, float]]:
        """:meth:`rank` of a model with a partner: the candidates each model chooses among
        (its ``max_candidates`` most probable), scored by the mean over the two of the
        probability each model gives them among its own (a softmax of its joint scores), then
        for a larger ``k`` each model's next candidates, scored 0 (the two never choose
        them). :meth:`segment`'s choice first, then by score, then in this model's order and
        then the partner's."""
        assert self.partner is not None
        first = self._segment_words(words, tags)
        if len(words) < 2:
            return [(first, 1.0)]
        score: dict[Segmentation, float] = {}
        for model in (self, self.partner):
            chooses = model.decoding.max_candidates
            chosen = model._rank_alone(words, chooses, tags)
            top = max(value for _, value in chosen)
            weights = [float(np.exp(value - top)) for _, value in chosen]
            total = sum(weights)
            for (seg, _), weight in zip(chosen, weights, strict=True):
                score[seg] = score.get(seg, 0.0) + weight / total / 2
        for model in (self, self.partner):
            if k > model.decoding.max_candidates:
                for seg, _ in model._rank_alone(words, k, tags):
                    score.setdefault(seg, 0.0)
        score.setdefault(first, 0.0)  # (always one of the chosen: the C and numpy exp agree)
        order = [first, *sorted((s for s in score if s != first), key=lambda s: -score[s])]
        return [(seg, score[seg]) for seg in order[:k]]

    def _ranked(
        self, words: tuple[str, ...], bits: np.ndarray, scores: np.ndarray
    ) -> list[tuple[Segmentation, float]]:
        """The candidates the joint scorers ranked (``bits``, most probable first, with their
        ``scores``), in :meth:`rank`'s order."""
        chooses = self.decoding.max_candidates
        first = sorted(range(min(chooses, len(bits))), key=lambda j: (-scores[j], j))
        rest = sorted(range(chooses, len(bits)), key=lambda j: (-scores[j], j))
        floor = float(scores[first[-1]])
        return [
            (
                Segmentation._trusted(words, tuple(bits[j].tolist())),
                float(scores[j]) if j < chooses else min(float(scores[j]), floor),
            )
            for j in first + rest
        ]

    def __repr__(self) -> str:
        return f"<BreakModel {self.spec_text or 'unregistered'}>"


def gap_windows(n: int) -> list[tuple[int, int, int]]:
    """For each gap of an n-word query, the window of words ``[start, end)`` whose gap
    probabilities decide it and the gap's place in that window. A query of up to
    :data:`.joint.MAX_JOINT_WORDS` words is its own window; in a longer one each gap has the
    :data:`WINDOW_WORDS` words centred on it (moved inside the query near its ends): in
    queries put one after the other, windows of 5 to 10 words keep 93% of the parts' gaps as
    each part alone has them, 12-word ones 84%, where 6-12-word queries keep 90%
    (tests/test_long_queries.py measures it)."""
    if n <= MAX_JOINT_WORDS:
        return [(0, n, g) for g in range(n - 1)]
    starts = [min(max(g + 1 - WINDOW_WORDS // 2, 0), n - WINDOW_WORDS) for g in range(n - 1)]
    return [(start, start + WINDOW_WORDS, g - start) for g, start in enumerate(starts)]


Predict = Callable[
    [Sequence[tuple[str, ...]], Sequence[Sequence[str] | None] | None], list[Segmentation]
]


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
