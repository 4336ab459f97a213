"""Supervised break classifiers (papers 004 and 002): scikit-learn estimators and segmenters.

A :class:`BreakClassifier` learns, for every gap between two query words, the probability that
annotators put a segment break there, from any mix of (:class:`.trainable.Inputs`)

- the paper 004 gap features (:mod:`.gap_features`: indicators, n-gram counts, mutual
  information, Wikipedia titles, part of speech),
- statistics of the gap's words inside entity names (:mod:`.name_features`),
- a lexicon learned from the training queries (:mod:`.lexicon`; out-of-fold on the training
  data, so the classifier does not learn to trust memorized labels),
- paper 002's concatenated word vectors of the two words at the gap,
- a linear probe on a pretrained encoder's contextual vectors of the gap's words
  (:mod:`.contextual`; out-of-fold on the training data, like the lexicon).

Targets are the share of annotators who broke at each gap (all votes count, not just the
majority's). Decoding is either gap by gap (break iff p > 0.5) or joint (:mod:`.joint`).

Fitting ends with a :class:`.break_model.BreakModel` (``model_``): what the classifier learned,
its trees as arrays, the resources it used; the classifier segments through it (``segment``,
``segment_many``, ``rank``, ``predict``) like every other segmenter, and :mod:`qseg.models`
saves it to one file and loads it back without scikit-learn or XGBoost. The resources (counts,
titles, name statistics, word vectors) are resolved when fitting and recorded by content
fingerprint (:attr:`BreakClassifier.resources_`).

Why this module is long (about 800 lines): it is one estimator, and scikit-learn keeps an
estimator in one class, its parameters, fitting and prediction read together. What it is made
of lives in the modules named above; what is left here is the order of fitting (out-of-fold
inputs, the gap model, the joint scorers) that no split would make easier to follow.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError

from qseg.errors import InputError, QsegError
from qseg.query import Query, normalize
from qseg.resources.bundle import Resources
from qseg.resources.vectors import WordVectors
from qseg.segmentation import Segmentation, Target, as_target, majority, target_words
from qseg.segmenters.base import Errors
from qseg.segmenters.learned.adaptation import (
    Adaptation,
    AdaptedParts,
    ContinuedGapModel,
    merged_phrases,
)
from qseg.segmenters.learned.break_model import (
    BreakModel,
    check_tags,
    gap_inputs,
    per_query,
    with_domain,
)
from qseg.segmenters.learned.contextual import BreakProbe, gap_rows, require_encoder
from qseg.segmenters.learned.domain import DomainModel
from qseg.segmenters.learned.gap_features import FeatureSource, SpanTables, query_tables
from qseg.segmenters.learned.gap_models import LinearGapModel, TreeGapModel
from qseg.segmenters.learned.joint import (
    MAX_JOINT_WORDS,
    candidate_features,
    joint_target,
    softmax_objective,
    vote_grades,
)
from qseg.segmenters.learned.lexicon import (
    LEXICON_FEATURES,
    Lexicon,
    gap_keys,
    phrase_counts,
    phrase_rates,
)
from qseg.segmenters.learned.trainable import (
    GROUPS,
    LINEAR,
    Boosting,
    Decoding,
    Inputs,
    check_settings,
    needed_resources,
    spec_of,
)
from qseg.segmenters.learned.trees import TreeEnsemble


@dataclass(frozen=True)
class StackedInput:
    """An input learnt from the training labels: ``learn(train, held)`` learns from the
    queries ``train`` (indices) and gives ``width`` values for each gap of the queries
    ``held``; ``stage``: what fitting reports when its out-of-fold values are done."""

    stage: str | None
    width: int
    learn: Callable[[np.ndarray, np.ndarray], np.ndarray]


class NotFittedSegmenterError(QsegError, NotFittedError):
    """A trainable segmenter used before it is trained."""


def vote_distribution(target: Target) -> dict[tuple[int, ...], float]:
    """Break vector -> share of the votes (a plain segmentation has all of them)."""
    if isinstance(target, Segmentation):
        return {target.breaks: 1.0}
    total = sum(r.votes for r in target)
    if total <= 0:
        words = " ".join(target[0].segmentation.words) if target else "?"
        raise InputError("training data", None, f"the query {words!r} has no votes to learn from")
    shares: dict[tuple[int, ...], float] = defaultdict(float)
    for ref in target:
        shares[ref.segmentation.breaks] += ref.votes / total
    return dict(shares)


class BreakClassifier(BaseEstimator):
    """Per-gap break probabilities from features, lexicon and word vectors; joint decoding.

    ``resources`` gives the counts and titles of the gap features (the built-in ones where
    ``None``), the name statistics and the word vectors; ``inputs`` says what describes a gap,
    ``boosting`` sizes the boosted trees, ``decoding`` chooses gap-by-gap or joint decoding
    (``None`` for each group: its defaults). ``inner_folds`` splits the training queries for
    the out-of-fold lexicon, probe and gap probabilities the joint decoder learns from.
    ``base``: a trained model to adapt to the training queries instead of learning from
    them alone (:mod:`.adaptation`; the inputs and decoding must be the base's, ``boosting``
    sizes the trees added, ``adaptation`` how much the queries weigh beside the base).
    The methods ``joint``, ``features`` and ``embeddings`` of the registry are presets of it
    (:mod:`.trainable`). Fitted state ends in ``_``.
    """

    def __init__(
        self,
        resources: Resources | None = None,
        *,
        inputs: Inputs | None = None,
        classifier: str = "xgboost",
        boosting: Boosting | None = None,
        decoding: Decoding | None = None,
        inner_folds: int = 5,
        random_state: int = 0,
        n_jobs: int = 1,
        base: BreakModel | None = None,
        adaptation: Adaptation | None = None,
    ) -> None:
        self.resources = resources
        self.inputs = inputs
        self.classifier = classifier
        self.boosting = boosting
        self.decoding = decoding
        self.inner_folds = inner_folds
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.base = base
        self.adaptation = adaptation

    # -- settings ------------------------------------------------------------------------

    @property
    def _in(self) -> Inputs:
        return self.inputs or Inputs()

    @property
    def takes_kind(self) -> bool:
        """Whether :meth:`fit` needs each query's kind (``domains=``): the model reads it."""
        return self._in.domain

    @property
    def _trees(self) -> Boosting:
        return self.boosting or Boosting()

    @property
    def _decoding(self) -> Decoding:
        return self.decoding or Decoding()

    @property
    def spec(self) -> str:
        """The registry spec of this configuration, e.g. ``features(classifier=logreg)``."""
        spec = spec_of(self.get_params())
        if spec is None:
            raise QsegError(
                "this combination of inputs and decoding is none of the registered methods "
                "(joint, features, embeddings)"
            )
        return spec

    def _check_params(self) -> None:
        params = self.get_params()
        check_settings(params)
        if self.base is not None:
            check_base(self.base, params)

    @property
    def _needs_source(self) -> bool:
        return "ngrams" in needed_resources(self._in, self._decoding)

    def _tree_params(self, seed_offset: int = 0) -> dict[str, Any]:
        trees = self._trees
        return {
            "n_estimators": trees.n_estimators,
            "max_depth": trees.max_depth,
            "learning_rate": trees.learning_rate,
            "subsample": 0.8,
            "colsample_bytree": 0.6,
            "min_child_weight": 2,
            "random_state": self.random_state + seed_offset,
            "n_jobs": self.n_jobs,
        }

    # -- resources -----------------------------------------------------------------------

    def _resolve_resources(self) -> None:
        """Take the counts, titles, names and vectors in use from ``resources`` (built-in
        ones where not given) and record what they are (:attr:`resources_`)."""
        self.source_: FeatureSource | None = None
        self.vectors_: WordVectors | None = None
        if self.base is not None:  # the base's own, whatever was given
            self.source_, self.vectors_ = self.base.source, self.base.vectors
            self.resources_ = dict(self.base.resources)
            return
        resources = self.resources or Resources()
        inputs = self._in
        record: dict[str, dict[str, Any] | None] = {}
        if self._needs_source:
            counts, words = resources.require_ngrams(), resources.require_words()
            titles = resources.optional_titles() if inputs.titles else None
            names = resources.require_names() if inputs.name_statistics else None
            self.source_ = FeatureSource(counts, words, titles, names)
            record["ngrams"] = _describe(counts, resources.ngrams is None)
            # word counts are built in where they are neither given nor the given n-grams' own
            builtin_words = resources.words is None and (
                resources.ngrams is None or words is not counts
            )
            record["words"] = _describe(words, builtin_words)
            if inputs.titles:
                record["titles"] = _describe(titles, resources.titles is None)
            if names is not None:
                record["names"] = _describe(names, resources.names is None)
        if inputs.word_vectors:
            self.vectors_ = resources.require_vectors()
            record["vectors"] = _describe(self.vectors_, resources.vectors is None)
        if inputs.contextual:
            encoder = require_encoder()
            record["encoder"] = {"fingerprint": encoder.fingerprint, "source": encoder.name}
        self.resources_ = record

    # -- features ------------------------------------------------------------------------

    def _base_matrix(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
        tables: SpanTables | None,
    ) -> np.ndarray:
        return gap_inputs(words, tags, tables, self.source_, self._in, self.vectors_)

    def _gap_model(
        self, x: np.ndarray, rates: np.ndarray, weights: np.ndarray | None, fold: int
    ) -> TreeGapModel | LinearGapModel | ContinuedGapModel:
        if self.base is not None and self._adaptation.start == "continue":
            assert isinstance(self.base.gap_model, TreeEnsemble)  # (check_base)
            params = self._tree_params(fold)
            return ContinuedGapModel.fit(self.base.gap_model, x, rates, params, weights)
        if self.classifier in LINEAR:
            loss = "hinge" if self.classifier == "svm" else "logistic"
            return LinearGapModel.fit(x, rates, self.random_state, weights, loss=loss)
        return TreeGapModel.fit(x, rates, self._tree_params(fold), weights)

    # -- fit -----------------------------------------------------------------------------

    def training_stages(self) -> list[str]:
        """The stages :meth:`fit` goes through, in order (what it reports to ``progress``)."""
        learnt = self.base is None  # (adapting: the base's probe and domain as they are)
        contextual = ["contextual probe"] if self._in.contextual and learnt else []
        domain = ["domain"] if self._in.domain and learnt else []
        stages = ["features", *contextual, *domain, "gap model"]
        if self._decoding.joint:
            stages += [f"inner fold {k}/{self.inner_folds}" for k in range(1, self.inner_folds + 1)]
            ranker = ["vote ranker"] if self._decoding.rank_votes else []
            stages += ["candidates", "joint scorer", *ranker]
        return stages

    def fit(
        self,
        queries: Sequence[Query],
        y: Sequence[Target | str],
        tags: Sequence[Sequence[str] | None] | None = None,
        *,
        domains: Sequence[str] | None = None,
        sample_weight: Sequence[float] | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> BreakClassifier:
        """Learn from queries and their segmentations (:class:`~qseg.Segmentation` or pipe
        text, ``new york|tickets``) or their annotators' votes (lists of
        :class:`~qseg.segmentation.Reference`).

        ``domains``: each query's kind (two kinds, for ``inputs.domain``); ``sample_weight``:
        each query's weight in every loss; ``progress`` is called with the name of each of
        :meth:`training_stages` as it ends (the joint ones are skipped when no query has 2 to
        12 words)."""
        from sklearn.model_selection import KFold

        self._check_params()
        words = [normalize(q) for q in queries]
        targets = [as_target(t, i) for i, t in enumerate(y)]
        if len(words) != len(targets):
            raise QsegError(f"{len(words)} queries but {len(targets)} segmentations")
        if (
            self._in.domain
            and self.base is None
            and (domains is None or len(domains) != len(words))
        ):
            raise QsegError("inputs.domain needs fit(domains=...): each query's kind")
        weights = None
        if sample_weight is not None:  # (none: every loss exactly as without weights)
            weights = np.asarray(sample_weight, dtype=np.float64)
            if weights.shape != (len(words),) or not (np.isfinite(weights) & (weights > 0)).all():
                raise QsegError("sample_weight must be one positive number per query")
        for w, target in zip(words, targets, strict=True):
            if target_words(target) != w:
                raise QsegError(f"the segmentation of {' '.join(w)!r} is of another query")
        check_tags(words, tags)
        if len(words) < self.inner_folds:
            raise QsegError(f"need at least {self.inner_folds} training queries")
        learnt = self._in.lexicon or self._in.contextual or self._in.domain
        if self._decoding.joint and learnt and self.inner_folds < 3:
            raise QsegError(
                "joint decoding learns the lexicon, probe and domain of each inner fold without "
                f"that fold and one other: inner_folds must be at least 3, got {self.inner_folds}"
            )
        dists = [vote_distribution(t) for t in targets]
        rates = np.array(
            [
                sum(s * b[g] for b, s in d.items())
                for w, d in zip(words, dists, strict=True)
                for g in range(len(w) - 1)
            ]
        )
        if not len(rates):
            raise QsegError("the training queries have no gaps (all are single words)")
        self._resolve_resources()
        query_of_gap = np.repeat(np.arange(len(words)), [len(w) - 1 for w in words])
        gap_weights = weights[query_of_gap] if weights is not None else None
        keys = [k for w in words for k in gap_keys(w)]
        tables = query_tables(words, self.source_) if self.source_ is not None else None
        base = self._base_matrix(words, tags, tables)
        done = progress or (lambda stage: None)
        done("features")
        folds = list(
            KFold(self.inner_folds, shuffle=True, random_state=self.random_state).split(words)
        )
        stacked = self._stacked_inputs(words, keys, rates, query_of_gap, domains)
        columns = []
        for stacked_input in stacked:
            columns.append(_out_of_fold(folds, query_of_gap, stacked_input))
            if stacked_input.stage:
                done(stacked_input.stage)
        x = np.hstack([base, *columns])
        self.n_features_in_ = x.shape[1]
        self.tagged_ = tags is not None and any(t is not None for t in tags)
        self.gap_model_ = self._gap_model(x, rates, gap_weights, 0)
        done("gap model")
        self.joint_: Any = None
        self.ranker_: Any = None
        self.phrases_: dict[str, float] = {}
        self.n_queries_ = len(words)
        self.phrase_counts_ = phrase_counts(words, dists) if self.base is not None else {}
        if self._decoding.joint:
            assert tables is not None
            kinds = np.zeros(len(words), dtype=np.float32)  # each query's out-of-fold kind
            if self._in.domain and self.base is not None:
                kinds = self.base._kinds(words)  # type: ignore[assignment]  # (domain input)
            elif self._in.domain:
                column = columns[[s.stage for s in stacked].index("domain")][:, 0]
                kinds[query_of_gap] = column  # (the same value at each of a query's gaps)
            self._fit_joint(
                words, tags, dists, base, stacked, columns, rates, query_of_gap, tables, folds,
                done, weights, kinds,
            )  # fmt: skip
        self.model_ = self._frozen()
        return self

    def _stacked_inputs(
        self,
        words: Sequence[tuple[str, ...]],
        keys: Sequence[tuple[str, str, str]],
        rates: np.ndarray,
        query_of_gap: np.ndarray,
        domains: Sequence[str] | None,
    ) -> list[StackedInput]:
        """The inputs that are themselves learnt from the training labels (the contextual
        probe, the domain, the lexicon), in column order: each is fitted here on every query
        for the model, and returned as a learner that the folds refit, so that a query's
        input never comes from its own label."""

        def gaps(queries: np.ndarray) -> np.ndarray:
            return np.isin(query_of_gap, queries)

        if self.base is not None:
            return self._base_inputs(words, keys, rates, query_of_gap)
        stacked = []
        self.probe_: BreakProbe | None = None
        if self._in.contextual:
            rows = gap_rows(require_encoder(), words)

            def probe(train: np.ndarray, held: np.ndarray) -> np.ndarray:
                inside = gaps(train)
                return BreakProbe.fit(rows[inside], rates[inside]).score(rows[gaps(held)])

            stacked.append(StackedInput("contextual probe", 1, probe))
            self.probe_ = BreakProbe.fit(rows, rates)
        self.domain_: DomainModel | None = None
        if self._in.domain:
            assert domains is not None
            gap_counts = np.array([len(w) - 1 for w in words])

            def domain(train: np.ndarray, held: np.ndarray) -> np.ndarray:
                try:
                    learned = DomainModel.fit(
                        [words[i] for i in train], [domains[i] for i in train], self.random_state
                    )
                except ValueError as exc:  # (one kind of query only)
                    raise QsegError(
                        f"the domain input is learnt within inner folds, without one or two of "
                        f"the {self.inner_folds}, and the queries of one such share are of one "
                        f"kind ({exc}): give more queries of each kind"
                    ) from None
                kinds = learned.predict([words[i] for i in held])
                return np.repeat(kinds, gap_counts[held])[:, None]

            stacked.append(StackedInput("domain", 1, domain))
            self.domain_ = DomainModel.fit(words, domains, self.random_state)
        self.lexicon_: Lexicon | None = None
        if self._in.lexicon:

            def lexicon(train: np.ndarray, held: np.ndarray) -> np.ndarray:
                inside = np.flatnonzero(gaps(train)).tolist()
                learned = Lexicon.learn([keys[i] for i in inside], rates[inside])
                return learned.encode([keys[i] for i in np.flatnonzero(gaps(held)).tolist()])

            stacked.append(StackedInput(None, len(LEXICON_FEATURES), lexicon))
            self.lexicon_ = Lexicon.learn(keys, rates)
        return stacked

    def _base_inputs(
        self,
        words: Sequence[tuple[str, ...]],
        keys: Sequence[tuple[str, str, str]],
        rates: np.ndarray,
        query_of_gap: np.ndarray,
    ) -> list[StackedInput]:
        """:meth:`_stacked_inputs` when adapting a base model: its probe and domain inputs as
        they are (fixed: what the base's trees were trained on), and its lexicon with the
        training queries' break rates added (:meth:`.lexicon.Lexicon.merged`), out of fold."""
        base = self.base
        assert base is not None
        self.probe_, self.domain_ = base.probe, base.domain

        def fixed(column: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
            return lambda train, held: column[np.isin(query_of_gap, held)]

        stacked = []
        if base.probe is not None:
            scores = base.probe.score(gap_rows(require_encoder(), words))
            stacked.append(StackedInput(None, 1, fixed(scores.reshape(-1, 1))))
        if base.domain is not None:
            kinds = base._kinds(words)
            assert kinds is not None
            stacked.append(StackedInput(None, 1, fixed(kinds[query_of_gap].reshape(-1, 1))))
        self.lexicon_ = None
        self.domain_lexicon_: Lexicon | None = None
        if base.lexicon is not None:
            weight = self._adaptation.weight
            fresh = self._adaptation.start == "fresh"

            def lexicon(train: np.ndarray, held: np.ndarray) -> np.ndarray:
                inside = np.flatnonzero(np.isin(query_of_gap, train)).tolist()
                learned = Lexicon.learn([keys[i] for i in inside], rates[inside])
                if not fresh:
                    learned = base.lexicon.merged(learned, weight)  # type: ignore[union-attr]
                held_gaps = np.flatnonzero(np.isin(query_of_gap, held)).tolist()
                return learned.encode([keys[i] for i in held_gaps])

            stacked.append(StackedInput(None, len(LEXICON_FEATURES), lexicon))
            self.domain_lexicon_ = Lexicon.learn(keys, rates)
        return stacked

    def _start(self, scorer: TreeEnsemble | None, rows: np.ndarray) -> np.ndarray | None:
        """Where a joint scorer's boosting starts on candidate ``rows``: the base's
        ``scorer``'s margins when continuing a base model, else nowhere."""
        if scorer is None or self._adaptation.start != "continue":
            return None
        return scorer.margins(rows)

    @property
    def _adaptation(self) -> Adaptation:
        return self.adaptation or Adaptation()

    def _phrase_rates(
        self, words: Sequence[tuple[str, ...]], dists: Sequence[Mapping[tuple[int, ...], float]]
    ) -> dict[str, float]:
        """The phrase rates of these queries (merged with the base's, when adapting)."""
        if self.base is None:
            return phrase_rates(words, dists)
        return merged_phrases(self.base.phrases, phrase_counts(words, dists), self._adaptation)

    def _frozen(self) -> BreakModel:
        """The learned state as the model segments with it: trees as arrays."""
        gap = self.gap_model_
        if self.base is not None:
            return self._adapted()
        params = {k: v for k, v in self.get_params().items() if k not in _NOT_SAVED}
        return BreakModel(
            spec_text=spec_of(params),
            params=params,
            source=self.source_,
            vectors=self.vectors_,
            probe=self.probe_,
            domain=self.domain_,
            lexicon=self.lexicon_,
            gap_model=(
                gap
                if isinstance(gap, LinearGapModel)
                else TreeEnsemble.from_booster(gap.booster, logistic=True)
            ),
            joint=TreeEnsemble.from_booster(self.joint_, logistic=False) if self.joint_ else None,
            ranker=(
                TreeEnsemble.from_booster(self.ranker_, logistic=False) if self.ranker_ else None
            ),
            phrases=self.phrases_,
            n_features=self.n_features_in_,
            tagged=self.tagged_,
            resources=self.resources_,
        )

    def _adapted(self) -> BreakModel:
        """The base model with what adapting it learnt (:func:`.adaptation.adapted_model`)."""
        gap = self.gap_model_
        assert self.base is not None and isinstance(gap, ContinuedGapModel | TreeGapModel)
        if self.base.origin is None:
            raise QsegError(
                "the base model was never saved: an adapted model names its base's file, so "
                "save the base (qseg.models.save) and adapt the model loaded from it"
            )

        def trees(booster: Any) -> TreeEnsemble | None:
            return TreeEnsemble.from_booster(booster, logistic=False) if booster else None

        parts = AdaptedParts(
            origin=self.base.origin,
            adaptation=self._adaptation,
            gap_trees=TreeEnsemble.from_booster(gap.booster, logistic=True),
            joint_trees=trees(self.joint_),
            ranker_trees=trees(self.ranker_),
            lexicon=self.domain_lexicon_,
            phrase_counts=self.phrase_counts_,
            queries=self.n_queries_,
            boosting=asdict(self._trees),
        )
        return self.base.adapted_by(parts)

    def _fit_joint(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
        dists: Sequence[Mapping[tuple[int, ...], float]],
        base: np.ndarray,
        stacked: Sequence[StackedInput],
        columns: Sequence[np.ndarray],
        rates: np.ndarray,
        query_of_gap: np.ndarray,
        tables: SpanTables,
        folds: Sequence[tuple[np.ndarray, np.ndarray]],
        done: Callable[[str], None],
        weights: np.ndarray | None,
        kinds: np.ndarray,
    ) -> None:
        import xgboost as xgb

        p = np.zeros(len(rates))
        gap_weights = weights[query_of_gap] if weights is not None else None
        phrases: list[dict[str, float]] = [{} for _ in words]
        for fold, (train, held) in enumerate(folds, start=1):
            inside, outside = np.isin(query_of_gap, train), np.isin(query_of_gap, held)
            inner = gap_weights[inside] if gap_weights is not None else None
            # the learnt inputs again, each learnt without this fold's labels (also for the
            # training queries), so that none of them reaches the predictions for this fold
            learnt = [
                _out_of_fold(folds, query_of_gap, s, without=(held, c))
                for s, c in zip(stacked, columns, strict=True)
            ]
            x = np.hstack([base, *learnt])
            model = self._gap_model(x[inside], rates[inside], inner, fold)
            p[outside] = model.predict(x[outside])
            rates_of = self._phrase_rates([words[i] for i in train], [dists[i] for i in train])
            for i in held:
                phrases[i] = rates_of
            done(f"inner fold {fold}/{len(folds)}")
        per_query_p = per_query(p, words)
        chosen = [i for i, w in enumerate(words) if 2 <= len(w) <= MAX_JOINT_WORDS]
        if not chosen:
            return
        blocks = candidate_features(
            [words[i] for i in chosen],
            [per_query_p[i] for i in chosen],
            [tables[i] for i in chosen],
            [phrases[i] for i in chosen],
            [tags[i] for i in chosen] if tags is not None else None,
        )
        if self._in.domain:
            blocks = with_domain(blocks, kinds[chosen])
        decoding, trees = self._decoding, self._trees
        targets = [joint_target(len(words[i]), dists[i], decoding.agreement_weight) for i in chosen]
        bounds = np.r_[0, np.cumsum([len(t) for t in targets])]
        rows = np.vstack(blocks)
        done("candidates")
        params = {
            "max_depth": trees.max_depth,
            "eta": trees.learning_rate,
            "subsample": 0.8,
            "colsample_bytree": 0.8,
            "seed": self.random_state,
            "nthread": self.n_jobs,
        }
        row_weights = None if weights is None else np.repeat(weights[chosen], np.diff(bounds))
        objective = softmax_objective(bounds, np.concatenate(targets), row_weights)
        start = self._start(self.base.joint if self.base is not None else None, rows)
        self.joint_ = xgb.train(
            {**params, "base_score": 0.0},
            xgb.DMatrix(rows, base_margin=start),
            trees.n_estimators,
            obj=objective,
        )
        done("joint scorer")
        if decoding.rank_votes:
            grades = np.concatenate([vote_grades(len(words[i]), dists[i]) for i in chosen])
            query = np.repeat(np.arange(len(chosen)), np.diff(bounds))
            ranking = {
                "objective": "rank:ndcg",
                "lambdarank_pair_method": "topk",  # pairs with the best-ranked candidates
                "lambdarank_num_pair_per_sample": 4,
            }
            group_weights = None if weights is None else weights[chosen]
            start = self._start(self.base.ranker if self.base is not None else None, rows)
            ranked = xgb.DMatrix(
                rows, label=grades, qid=query, weight=group_weights, base_margin=start
            )
            self.ranker_ = xgb.train({**params, **ranking}, ranked, trees.n_estimators)
            done("vote ranker")
        self.phrases_ = self._phrase_rates(words, dists)

    # -- the segmenter protocol, through the fitted model --------------------------------

    def _model(self) -> BreakModel:
        if not hasattr(self, "model_"):
            raise NotFittedSegmenterError(
                "this segmenter is not trained yet: fit() it, or train it with `qseg train` "
                "and use the saved model file as the method"
            )
        return self.model_

    @property
    def uses_tags(self) -> bool:
        """Whether it was trained with part-of-speech tags (and so takes them)."""
        return hasattr(self, "model_") and self.model_.uses_tags

    def break_probabilities(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[np.ndarray]:
        """Per query, the probability of a break at each gap."""
        return self._model().break_probabilities(queries, tags)

    def predict(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[Segmentation]:
        """The segmentation of each query."""
        return self._model().predict(queries, tags)

    def segment(self, query: Query, tags: Sequence[str] | None = None) -> Segmentation:
        return self._model().segment(query, tags)

    def segment_many(
        self,
        queries: Iterable[Query],
        tags: Iterable[Sequence[str] | None] | None = None,
        *,
        errors: Errors = "raise",
    ) -> Iterator[Segmentation]:
        return self._model().segment_many(queries, tags, errors=errors)

    def rank(
        self, query: Query, k: int, tags: Sequence[str] | None = None
    ) -> list[tuple[Segmentation, float]]:
        return self._model().rank(query, k, tags)

    def score(
        self,
        queries: Sequence[Query],
        y: Sequence[Target | str],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> float:
        """Break accuracy of :meth:`predict` against the targets (each one's most voted
        segmentation), pooled over every gap as ``qseg evaluate`` does: what scikit-learn's
        model selection (``GridSearchCV``, ``cross_val_score``) maximizes by default."""
        targets = [as_target(t, i) for i, t in enumerate(y)]
        if len(targets) != len(queries):
            raise QsegError(f"{len(queries)} queries but {len(targets)} segmentations")
        predicted = self.predict(queries, tags)
        right = gaps = 0
        for seg, target in zip(predicted, targets, strict=True):
            reference = majority(target)
            if reference.words != seg.words:
                raise QsegError(f"the segmentation of {seg.query!r} is of another query")
            right += sum(a == b for a, b in zip(seg.breaks, reference.breaks, strict=True))
            gaps += len(seg.breaks)
        if not gaps:
            raise QsegError("the queries have no gaps (all are single words): nothing to score")
        return right / gaps

    def set_params(self, **params: Any) -> BreakClassifier:
        """Set parameters, also one field of a group as scikit-learn's nested parameters
        name it (``boosting__n_estimators=10``, ``decoding__max_candidates=8``), so that
        ``GridSearchCV`` can search them."""
        plain = {}
        for key, value in params.items():
            group, nested, name = key.partition("__")
            if not nested:
                plain[key] = value
                continue
            if group not in GROUPS:
                raise QsegError(
                    f"{key}: nested parameters are fields of {', '.join(GROUPS)}, not of {group!r}"
                )
            current = getattr(self, group) or GROUPS[group]()
            try:
                setattr(self, group, replace(current, **{name: value}))
            except TypeError:
                known = ", ".join(f.name for f in fields(current))
                raise QsegError(f"{key}: {group} has no field {name!r} ({known})") from None
        return super().set_params(**plain)


_NOT_SAVED = ("resources", "base", "adaptation")
"""Constructor parameters that are not the model's settings (a model file records the
resources by fingerprint, and an adapted model its base by name)."""


def check_base(base: Any, params: Mapping[str, Any]) -> None:
    """Raise :class:`~qseg.errors.QsegError` unless ``base`` is a model the classifier with
    ``params`` can adapt: a trained joint model of boosted trees, with the same inputs and
    decoding."""
    if not isinstance(base, BreakModel):
        raise QsegError(
            f"the base must be a trained model (a BreakModel), not {type(base).__name__}"
        )
    if not isinstance(base.gap_model, TreeEnsemble) or base.joint is None:
        raise QsegError(
            "only a model of boosted trees with joint decoding can be adapted "
            f"({base.spec_text or 'this one'} is not)"
        )
    for group in ("inputs", "decoding"):
        if (params.get(group) or GROUPS[group]()) != (base.params.get(group) or GROUPS[group]()):
            raise QsegError(f"an adapted model keeps its base's {group}: give the base's")
    if base.tagged:
        raise QsegError(
            "the base was trained with part-of-speech tags: adapting it is not supported"
        )


def _describe(resource: Any, builtin: bool) -> dict[str, Any] | None:
    """What a model records of a resource it was trained with (``None``: it had none)."""
    if resource is None:
        return None
    # the store's file name, never its folder: a model file names no path of the machine
    # that trained it (the fingerprint is what identifies the resource)
    source = Path(resource.store.description).name if hasattr(resource, "store") else None
    source = source or "word vectors"
    return {"fingerprint": resource.fingerprint, "source": source, "builtin": builtin}


def _out_of_fold(
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    query_of_gap: np.ndarray,
    stacked: StackedInput,
    without: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Per gap, the values of a learnt input, for each fold's queries learnt from the other
    folds' queries. ``without=(queries, values)``: never learnt from those queries either (the
    rows of that fold itself are the first-order ``values``, learnt without it already)."""
    out = np.zeros((len(query_of_gap), stacked.width), dtype=np.float32)
    for train, held in folds:
        rows = np.isin(query_of_gap, held)
        if without is not None:
            excluded, values = without
            if np.array_equal(held, excluded):
                out[rows] = values[rows]
                continue
            train = np.setdiff1d(train, excluded)
        out[rows] = stacked.learn(train, np.sort(held))  # (gaps in query order)
    return out
