"""Supervised break classifiers (papers 004 and 002) with the scikit-learn estimator API.

A :class:`BreakClassifier` learns, for every gap between two query words, the probability that
annotators put a segment break there, from any mix of

- the paper 004 gap features (:mod:`.gap_features`: indicators, n-gram counts, mutual
  information, Wikipedia titles, part of speech),
- statistics of the gap's words inside entity names (:mod:`.name_features`),
- a lexicon learned from the training queries: how often a break follows a word, precedes a
  word, and splits a word pair (out-of-fold on the training data, so the classifier does not
  learn to trust memorized labels),
- paper 002's concatenated word vectors of the two words at the gap (:mod:`.embeddings`),
- a linear probe on a pretrained encoder's contextual vectors of the gap's words
  (:mod:`.contextual`; out-of-fold on the training data, like the lexicon).

Targets are the share of annotators who broke at each gap (all votes count, not just the
majority's). Decoding is either gap by gap (break iff p > 0.5) or joint (:mod:`.joint`).
A fitted classifier saves to one zip file with a format version; it holds no resources, so the
same counts, titles and tags must be given again when it is loaded.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from qseg.corpora.webis import Reference
from qseg.errors import QsegError
from qseg.fileio import StrPath, atomic_write_bytes
from qseg.query import normalize
from qseg.resources.default import require_name_counts
from qseg.segmentation import Segmentation
from qseg.segmenters.contextual import BreakProbe, gap_rows, require_encoder
from qseg.segmenters.embeddings import WordVectors
from qseg.segmenters.gap_features import (
    FEATURE_NAMES,
    FeatureSource,
    SpanTables,
    gap_features,
    query_tables,
)
from qseg.segmenters.joint import (
    CANDIDATE_FEATURES,
    MAX_JOINT_WORDS,
    candidate_bits,
    candidate_features,
    joint_target,
    softmax_objective,
    vote_grades,
)
from qseg.segmenters.name_features import NAME_FEATURES, name_features

FORMAT = "qseg-break-classifier"
FORMAT_VERSION = 7

Target = Segmentation | Sequence[Reference]
"""A training label: one segmentation, or annotators' segmentations with their votes."""

CLASSIFIERS = ("xgboost", "logreg")
DECODERS = ("joint", "independent")
LEXICON_FEATURES = ("left_break_rate", "left_seen", "right_break_rate", "right_seen")
LEXICON_FEATURES += ("pair_break_rate", "pair_seen")
_SMOOTHING = 2.0
_JOINT_BATCH = 512
"""Queries whose candidates are built at once when segmenting (12 words: 2,048 candidates)."""


class ModelError(QsegError):
    """A model file that cannot be read, or a model used without what it was trained with."""


def vote_distribution(target: Target) -> dict[tuple[int, ...], float]:
    """Break vector -> share of the votes (a plain segmentation has all of them)."""
    if isinstance(target, Segmentation):
        return {target.breaks: 1.0}
    total = sum(r.votes for r in target)
    shares: dict[tuple[int, ...], float] = defaultdict(float)
    for ref in target:
        shares[ref.segmentation.breaks] += ref.votes / total
    return dict(shares)


def target_words(target: Target) -> tuple[str, ...]:
    """The words of the query a training label segments."""
    return target.words if isinstance(target, Segmentation) else target[0].segmentation.words


def _gap_keys(words: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    for g in range(len(words) - 1):
        yield words[g], words[g + 1], f"{words[g]} {words[g + 1]}"


@dataclass
class _Lexicon:
    """Break rates per left word, right word and word pair, smoothed toward the prior."""

    prior: float
    tables: tuple[dict[str, tuple[float, int]], ...]

    @classmethod
    def learn(cls, keys: Sequence[tuple[str, str, str]], rates: np.ndarray) -> _Lexicon:
        tables: tuple[dict[str, list[float]], ...] = ({}, {}, {})
        for key, rate in zip(keys, rates, strict=True):
            for table, k in zip(tables, key, strict=True):
                entry = table.setdefault(k, [0.0, 0])
                entry[0] += float(rate)
                entry[1] += 1
        prior = float(rates.mean()) if len(rates) else 0.5
        frozen = tuple({k: (v[0], int(v[1])) for k, v in t.items()} for t in tables)
        return cls(prior, frozen)

    def encode(self, keys: Sequence[tuple[str, str, str]]) -> np.ndarray:
        out = np.zeros((len(keys), 6), dtype=np.float32)
        for j, table in enumerate(self.tables):
            stats = np.array([table.get(key[j], (0.0, 0)) for key in keys], dtype=np.float64)
            stats = stats.reshape(len(keys), 2)
            out[:, 2 * j] = (stats[:, 0] + _SMOOTHING * self.prior) / (stats[:, 1] + _SMOOTHING)
            out[:, 2 * j + 1] = stats[:, 1]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"prior": self.prior, "tables": [dict(t) for t in self.tables]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> _Lexicon:
        tables = tuple({k: (float(v[0]), int(v[1])) for k, v in t.items()} for t in data["tables"])
        return cls(float(data["prior"]), tables)


def _phrase_rates(
    queries: Sequence[tuple[str, ...]], dists: Sequence[Mapping[tuple[int, ...], float]]
) -> dict[str, float]:
    """Multiword n-gram -> share of its occurrences in queries that annotators made a segment."""
    as_segment: dict[str, float] = defaultdict(float)
    seen: dict[str, int] = defaultdict(int)
    for words, dist in zip(queries, dists, strict=True):
        n = len(words)
        for a in range(n):
            for b in range(a + 2, n + 1):
                seen[" ".join(words[a:b])] += 1
        for breaks, share in dist.items():
            for seg in Segmentation._trusted(words, breaks).segments:
                if len(seg) > 1:
                    as_segment[" ".join(seg)] += share
    return {k: (as_segment.get(k, 0.0) + 0.05) / (c + 0.1) for k, c in seen.items()}


class _Linear:
    """Logistic regression on imputed, standardized features (scikit-learn fits it)."""

    def __init__(self, fill: np.ndarray, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray):
        self.fill, self.mean, self.scale, self.coef = fill, mean, scale, coef

    @classmethod
    def fit(cls, x: np.ndarray, rates: np.ndarray, seed: int) -> _Linear:
        from sklearn.linear_model import LogisticRegression

        fill = np.zeros(x.shape[1])
        present = ~np.isnan(x).all(axis=0)  # columns such as POS without tags stay at 0
        fill[present] = np.nanmedian(x[:, present], axis=0)
        z = np.where(np.isnan(x), fill, x)
        mean, scale = z.mean(axis=0), z.std(axis=0)
        scale[scale == 0] = 1.0
        z = (z - mean) / scale
        # a gap broken by a share r of the annotators is a positive of weight r, a negative of 1-r
        both = np.vstack([z, z])
        labels = np.r_[np.ones(len(z)), np.zeros(len(z))]
        weights = np.r_[rates, 1 - rates]
        model = LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
        model.fit(both, labels, sample_weight=weights)
        return cls(fill, mean, scale, np.r_[model.intercept_, model.coef_[0]])

    def predict(self, x: np.ndarray) -> np.ndarray:
        z = (np.where(np.isnan(x), self.fill, x) - self.mean) / self.scale
        return 1.0 / (1.0 + np.exp(-(z @ self.coef[1:] + self.coef[0])))

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, fill=self.fill, mean=self.mean, scale=self.scale, coef=self.coef)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> _Linear:
        arrays = np.load(io.BytesIO(data))
        return cls(arrays["fill"], arrays["mean"], arrays["scale"], arrays["coef"])


class _Trees:
    """Gradient-boosted trees (XGBoost) with the logistic loss on break shares."""

    def __init__(self, booster: Any) -> None:
        self.booster = booster

    @classmethod
    def fit(cls, x: np.ndarray, rates: np.ndarray, params: Mapping[str, Any]) -> _Trees:
        import xgboost as xgb

        model = xgb.XGBRegressor(objective="binary:logistic", **params)
        model.fit(x, rates)
        return cls(model.get_booster())

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.booster.inplace_predict(x)

    def to_bytes(self) -> bytes:
        return bytes(self.booster.save_raw("ubj"))

    @classmethod
    def from_bytes(cls, data: bytes) -> _Trees:
        return cls(_booster(data))


class BreakClassifier(BaseEstimator):
    """Per-gap break probabilities from features, lexicon and word vectors; joint decoding.

    ``source`` gives the counts and titles of the paper 004 features (needed unless
    ``features=False`` and ``decoder='independent'``); ``embeddings`` adds paper 002's word
    vectors. ``inner_folds`` splits the training queries for the out-of-fold lexicon and the
    gap probabilities the joint decoder learns from. The joint decoder is trained on every
    segmentation of a query but, when segmenting, scores only the ``max_candidates`` most
    probable under the gap classifier (4 lost nothing on Webis-QSeC-10 when measured: 0.8473
    break accuracy over five fold splits against 0.8469 with 8, and segment 15% faster);
    ``agreement_weight`` is the share of its training target that rewards segmentations for
    each gap they share with the annotators' (:func:`.joint.joint_target`);
    ``rank_votes`` adds a LambdaMART scorer that ranks the candidates by their votes
    (:func:`.joint.vote_grades`; on Webis-QSeC-10 it adds 0.4 to 0.7 points of query
    accuracy over five fold splits, see docs/supervised.md). ``contextual`` adds the break
    probe on a pretrained encoder's vectors (:mod:`.contextual`). Fitted state ends in ``_``.
    """

    def __init__(
        self,
        source: FeatureSource | None = None,
        *,
        features: bool = True,
        name_statistics: bool = False,
        lexicon: bool = True,
        embeddings: WordVectors | None = None,
        contextual: bool = False,
        classifier: str = "xgboost",
        decoder: str = "joint",
        n_estimators: int = 300,
        max_depth: int = 5,
        learning_rate: float = 0.05,
        inner_folds: int = 5,
        max_candidates: int = 4,
        agreement_weight: float = 0.5,
        rank_votes: bool = True,
        random_state: int = 0,
        n_jobs: int = 1,
    ) -> None:
        self.source = source
        self.features = features
        self.name_statistics = name_statistics
        self.lexicon = lexicon
        self.embeddings = embeddings
        self.contextual = contextual
        self.classifier = classifier
        self.decoder = decoder
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.inner_folds = inner_folds
        self.max_candidates = max_candidates
        self.agreement_weight = agreement_weight
        self.rank_votes = rank_votes
        self.random_state = random_state
        self.n_jobs = n_jobs

    # -- checks --------------------------------------------------------------------------

    def _check_params(self) -> None:
        if self.classifier not in CLASSIFIERS:
            raise QsegError(f"classifier must be one of {', '.join(CLASSIFIERS)}")
        if self.decoder not in DECODERS:
            raise QsegError(f"decoder must be one of {', '.join(DECODERS)}")
        if not (
            self.features
            or self.name_statistics
            or self.lexicon
            or self.contextual
            or self.embeddings is not None
        ):
            raise QsegError("a break classifier needs features, a lexicon or embeddings")
        if self._needs_source and self.source is None:
            raise QsegError("gap features and joint decoding need n-gram counts (a source)")
        if self.name_statistics and (self.source is None or self.source.names is None):
            raise QsegError("name statistics need names in the source (FeatureSource.names)")
        if self.inner_folds < 2:
            raise QsegError(f"inner_folds must be at least 2, got {self.inner_folds}")
        if self.max_candidates < 1:
            raise QsegError(f"max_candidates must be at least 1, got {self.max_candidates}")
        if not 0 <= self.agreement_weight <= 1:
            raise QsegError(f"agreement_weight must be in [0, 1], got {self.agreement_weight}")

    @property
    def _needs_source(self) -> bool:
        return bool(self.features or self.name_statistics) or self.decoder == "joint"

    def _tree_params(self, seed_offset: int = 0) -> dict[str, Any]:
        return {
            "n_estimators": self.n_estimators,
            "max_depth": self.max_depth,
            "learning_rate": self.learning_rate,
            "subsample": 0.8,
            "colsample_bytree": 0.6,
            "min_child_weight": 2,
            "random_state": self.random_state + seed_offset,
            "n_jobs": self.n_jobs,
        }

    # -- features ------------------------------------------------------------------------

    def _base_matrix(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
        tables: SpanTables | None,
    ) -> np.ndarray:
        parts = []
        gaps = sum(len(w) - 1 for w in words)
        if self.features:
            assert self.source is not None
            parts.append(gap_features(words, self.source, tags, tables))
        if self.name_statistics:
            assert self.source is not None and self.source.names is not None
            parts.append(name_features(words, self.source.names))
        if self.embeddings is not None:
            left = [w[g] for w in words for g in range(len(w) - 1)]
            right = [w[g + 1] for w in words for g in range(len(w) - 1)]
            parts += [self.embeddings.lookup(left), self.embeddings.lookup(right)]
        return np.hstack(parts) if parts else np.zeros((gaps, 0), dtype=np.float32)

    def _gap_model(self, x: np.ndarray, rates: np.ndarray, fold: int) -> _Trees | _Linear:
        if self.classifier == "logreg":
            return _Linear.fit(x, rates, self.random_state)
        return _Trees.fit(x, rates, self._tree_params(fold))

    # -- fit -----------------------------------------------------------------------------

    def training_stages(self) -> list[str]:
        """The stages :meth:`fit` goes through, in order (what it reports to ``progress``)."""
        stages = ["features", *(["contextual probe"] if self.contextual else []), "gap model"]
        if self.decoder == "joint":
            stages += [f"inner fold {k}/{self.inner_folds}" for k in range(1, self.inner_folds + 1)]
            stages += ["candidates", "joint scorer"] + (["vote ranker"] if self.rank_votes else [])
        return stages

    def fit(
        self,
        queries: Sequence[str | Sequence[str]],
        y: Sequence[Target],
        tags: Sequence[Sequence[str] | None] | None = None,
        *,
        progress: Callable[[str], None] | None = None,
    ) -> BreakClassifier:
        """Learn from queries and their segmentations (or their annotators' votes);
        ``progress`` is called with the name of each of :meth:`training_stages` as it ends
        (the joint ones are skipped when no query has 2 to 12 words)."""
        from sklearn.model_selection import KFold

        self._check_params()
        words = [_as_words(q) for q in queries]
        if len(words) != len(y):
            raise QsegError(f"{len(words)} queries but {len(y)} segmentations")
        for w, target in zip(words, y, strict=True):
            if target_words(target) != w:
                raise QsegError(f"the segmentation of {' '.join(w)!r} is of another query")
        _check_tags(words, tags)
        if len(words) < self.inner_folds:
            raise QsegError(f"need at least {self.inner_folds} training queries")
        dists = [vote_distribution(t) for t in y]
        rates = np.array(
            [
                sum(s * b[g] for b, s in d.items())
                for w, d in zip(words, dists, strict=True)
                for g in range(len(w) - 1)
            ]
        )
        if not len(rates):
            raise QsegError("the training queries have no gaps (all are single words)")
        query_of_gap = np.repeat(np.arange(len(words)), [len(w) - 1 for w in words])
        keys = [k for w in words for k in _gap_keys(w)]
        tables = query_tables(words, self.source) if self._needs_source else None
        base = self._base_matrix(words, tags, tables)
        done = progress or (lambda stage: None)
        done("features")
        folds = list(
            KFold(self.inner_folds, shuffle=True, random_state=self.random_state).split(words)
        )
        if self.contextual:
            rows = gap_rows(require_encoder(), words)
            probed = _out_of_fold(
                folds,
                query_of_gap,
                1,
                lambda inside, outside: BreakProbe.fit(rows[inside], rates[inside]).score(
                    rows[outside]
                ),
            )
            self.probe_ = BreakProbe.fit(rows, rates)
            base = np.hstack([base, probed])
            done("contextual probe")
        x = base
        if self.lexicon:
            lex = _out_of_fold(
                folds,
                query_of_gap,
                len(LEXICON_FEATURES),
                lambda inside, outside: _Lexicon.learn(
                    [keys[i] for i in np.flatnonzero(inside)], rates[inside]
                ).encode([keys[i] for i in np.flatnonzero(outside)]),
            )
            self.lexicon_ = _Lexicon.learn(keys, rates)
            x = np.hstack([base, lex])
        self.n_features_in_ = x.shape[1]
        self.tagged_ = tags is not None and any(t is not None for t in tags)
        self.gap_model_ = self._gap_model(x, rates, 0)
        done("gap model")
        self.joint_ = self.ranker_ = None
        self.phrases_: dict[str, float] = {}
        if self.decoder == "joint":
            assert tables is not None
            self._fit_joint(words, tags, dists, x, rates, query_of_gap, tables, folds, done)
        return self

    def _fit_joint(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
        dists: Sequence[Mapping[tuple[int, ...], float]],
        x: np.ndarray,
        rates: np.ndarray,
        query_of_gap: np.ndarray,
        tables: SpanTables,
        folds: Sequence[tuple[np.ndarray, np.ndarray]],
        done: Callable[[str], None],
    ) -> None:
        import xgboost as xgb

        p = np.zeros(len(rates))
        phrases: list[dict[str, float]] = [{} for _ in words]
        for fold, (train, held) in enumerate(folds, start=1):
            inside, outside = np.isin(query_of_gap, train), np.isin(query_of_gap, held)
            p[outside] = self._gap_model(x[inside], rates[inside], fold).predict(x[outside])
            rates_of = _phrase_rates([words[i] for i in train], [dists[i] for i in train])
            for i in held:
                phrases[i] = rates_of
            done(f"inner fold {fold}/{len(folds)}")
        per_query = _per_query(p, words)
        chosen = [i for i, w in enumerate(words) if 2 <= len(w) <= MAX_JOINT_WORDS]
        if not chosen:
            return
        blocks = candidate_features(
            [words[i] for i in chosen],
            [per_query[i] for i in chosen],
            [tables[i] for i in chosen],
            [phrases[i] for i in chosen],
            [tags[i] for i in chosen] if tags is not None else None,
        )
        targets = [joint_target(len(words[i]), dists[i], self.agreement_weight) for i in chosen]
        bounds = np.r_[0, np.cumsum([len(t) for t in targets])]
        rows = np.vstack(blocks)
        done("candidates")
        params = {
            "max_depth": self.max_depth,
            "eta": self.learning_rate,
            "subsample": 0.8,
            "colsample_bytree": 0.8,
            "seed": self.random_state,
            "nthread": self.n_jobs,
        }
        objective = softmax_objective(bounds, np.concatenate(targets))
        self.joint_ = xgb.train(
            {**params, "base_score": 0.0}, xgb.DMatrix(rows), self.n_estimators, obj=objective
        )
        done("joint scorer")
        if self.rank_votes:
            grades = np.concatenate([vote_grades(len(words[i]), dists[i]) for i in chosen])
            query = np.repeat(np.arange(len(chosen)), np.diff(bounds))
            ranking = {
                "objective": "rank:ndcg",
                "lambdarank_pair_method": "topk",  # pairs with the best-ranked candidates
                "lambdarank_num_pair_per_sample": 4,
            }
            ranked = xgb.DMatrix(rows, label=grades, qid=query)
            self.ranker_ = xgb.train({**params, **ranking}, ranked, self.n_estimators)
            done("vote ranker")
        self.phrases_ = _phrase_rates(words, dists)

    # -- predict -------------------------------------------------------------------------

    def break_probabilities(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[np.ndarray]:
        """Per query, the probability of a break at each gap."""
        words = [_as_words(q) for q in queries]
        return self._probabilities(words, tags, None)[0]

    def _probabilities(
        self,
        words: Sequence[tuple[str, ...]],
        tags: Sequence[Sequence[str] | None] | None,
        tables: SpanTables | None,
    ) -> tuple[list[np.ndarray], SpanTables | None]:
        if not hasattr(self, "gap_model_"):
            raise QsegError("this break classifier is not fitted yet; call fit() first")
        _check_tags(words, tags)
        if self.features and tags is None and self.tagged_:
            raise ModelError("the model was trained with part-of-speech tags; give tags")
        if tables is None and self._needs_source:
            if self.source is None:
                raise ModelError("the model needs n-gram counts (a source) to segment")
            tables = query_tables(words, self.source)
        x = self._base_matrix(words, tags, tables)
        if self.contextual:
            x = np.hstack([x, self.probe_.score(gap_rows(require_encoder(), words))])
        if self.lexicon:
            x = np.hstack([x, self.lexicon_.encode([k for w in words for k in _gap_keys(w)])])
        p = self.gap_model_.predict(x) if len(x) else np.zeros(0)
        return _per_query(p, words), tables

    def predict(
        self,
        queries: Sequence[str | Sequence[str]],
        tags: Sequence[Sequence[str] | None] | None = None,
    ) -> list[Segmentation]:
        """The segmentation of each query."""
        words = [_as_words(q) for q in queries]
        probabilities, tables = self._probabilities(words, tags, None)
        breaks = [tuple((p > 0.5).astype(int).tolist()) for p in probabilities]
        if self.joint_ is not None and tables is not None:
            chosen = [i for i, w in enumerate(words) if 2 <= len(w) <= MAX_JOINT_WORDS]
            for first in range(0, len(chosen), _JOINT_BATCH):
                part = chosen[first : first + _JOINT_BATCH]
                blocks = candidate_features(
                    [words[i] for i in part],
                    [probabilities[i] for i in part],
                    [tables[i] for i in part],
                    [self.phrases_] * len(part),
                    [tags[i] for i in part] if tags is not None else None,
                )
                # the booster scores the candidates most probable under the gap classifier
                kept = [np.argsort(-b[:, 0], kind="stable")[: self.max_candidates] for b in blocks]
                rows = np.vstack([b[k] for b, k in zip(blocks, kept, strict=True)])
                scores = self.joint_.inplace_predict(rows, predict_type="margin")
                if self.ranker_ is not None:
                    scores = scores + self.ranker_.inplace_predict(rows, predict_type="margin")
                start = 0
                for i, k in zip(part, kept, strict=True):
                    best = k[int(np.argmax(scores[start : start + len(k)]))]
                    breaks[i] = tuple(candidate_bits(len(words[i]))[best].tolist())
                    start += len(k)
        return [Segmentation._trusted(w, b) for w, b in zip(words, breaks, strict=True)]

    # -- persistence ---------------------------------------------------------------------

    def save(self, path: StrPath) -> None:
        """Write the fitted model to one zip file (replaced atomically)."""
        if not hasattr(self, "gap_model_"):
            raise QsegError("this break classifier is not fitted yet; nothing to save")
        params = {k: v for k, v in self.get_params().items() if k not in ("source", "embeddings")}
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "params": params,
            "gap_model": self.classifier,
            "tagged": self.tagged_,
            "titles": self.source is not None and self.source.titles is not None,
            "embeddings": self.embeddings is not None,
            "features": [
                *(FEATURE_NAMES if self.features else ()),
                *(NAME_FEATURES if self.name_statistics else ()),
            ],
            "candidate_features": list(CANDIDATE_FEATURES) if self.joint_ is not None else [],
        }
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("meta.json", json.dumps(meta, indent=1))
            zf.writestr("gap_model.bin", self.gap_model_.to_bytes())
            if self.lexicon:
                zf.writestr("lexicon.json", json.dumps(self.lexicon_.to_json()))
            if self.contextual:
                zf.writestr("probe.npz", self.probe_.to_bytes())
            if self.joint_ is not None:
                zf.writestr("joint.ubj", bytes(self.joint_.save_raw("ubj")))
                zf.writestr("phrases.json", json.dumps(self.phrases_))
            if self.ranker_ is not None:
                zf.writestr("ranker.ubj", bytes(self.ranker_.save_raw("ubj")))
            if self.embeddings is not None:
                zf.writestr("vectors.npz", self.embeddings.to_bytes())
        atomic_write_bytes(path, buffer.getvalue())

    @staticmethod
    def check_file(path: StrPath) -> None:
        """Raise :class:`ModelError` unless ``path`` is a model this qseg reads. It reads the
        header alone, so a command can refuse a wrong file before it builds resources."""
        with _model_file(path):
            pass

    @classmethod
    def load(cls, path: StrPath, source: FeatureSource | None = None) -> BreakClassifier:
        """A model saved by :meth:`save`; ``source`` gives the counts and titles again (and
        the built-in name statistics fill in for names it lacks)."""
        with _model_file(path) as (zf, meta):
            embeddings = None
            if meta["embeddings"]:
                embeddings = WordVectors.from_bytes(zf.read("vectors.npz"))
            model = cls(source, embeddings=embeddings, **meta["params"])
            raw = zf.read("gap_model.bin")
            gap: _Trees | _Linear = (
                _Linear.from_bytes(raw) if meta["gap_model"] == "logreg" else _Trees.from_bytes(raw)
            )
            model.gap_model_ = gap
            if model.lexicon:
                model.lexicon_ = _Lexicon.from_json(json.loads(zf.read("lexicon.json")))
            if model.contextual:
                model.probe_ = BreakProbe.from_bytes(zf.read("probe.npz"))
            model.joint_ = model.ranker_ = None
            model.phrases_ = {}
            if "joint.ubj" in zf.namelist():
                model.joint_ = _booster(zf.read("joint.ubj"))
                model.phrases_ = json.loads(zf.read("phrases.json"))
            if "ranker.ubj" in zf.namelist():
                model.ranker_ = _booster(zf.read("ranker.ubj"))
            model.tagged_ = bool(meta["tagged"])
            trained_with_titles = bool(meta["titles"])
        if trained_with_titles and (source is None or source.titles is None):
            raise ModelError(f"{path}: the model was trained with Wikipedia titles; give them")
        if model._needs_source and source is None:
            raise ModelError(f"{path}: the model needs the n-gram counts it was trained with")
        if model.name_statistics and source is not None and source.names is None:
            model.source = replace(source, names=require_name_counts())
        if model.contextual:
            require_encoder()
        return model


@contextmanager
def _model_file(path: StrPath) -> Iterator[tuple[zipfile.ZipFile, dict[str, Any]]]:
    """The open model file and its checked header; any read or format error becomes a
    :class:`ModelError` naming the file."""
    try:
        with zipfile.ZipFile(path) as zf:
            meta = json.loads(zf.read("meta.json"))
            if not isinstance(meta, dict) or meta.get("format") != FORMAT:
                raise ModelError(f"{path}: not a qseg break classifier")
            if meta.get("version") != FORMAT_VERSION:
                raise ModelError(
                    f"{path}: model format version {meta.get('version')}; this qseg reads "
                    f"version {FORMAT_VERSION} (retrain with `qseg train`)"
                )
            yield zf, meta
    except (zipfile.BadZipFile, KeyError, json.JSONDecodeError, ValueError) as exc:
        raise ModelError(f"{path}: not a readable model file ({exc})") from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the model file ({exc.strerror})") from None


def _out_of_fold(
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    query_of_gap: np.ndarray,
    width: int,
    learn_and_apply: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Per gap, ``width`` values from what ``learn_and_apply(inside, outside)`` learns on the
    gaps of the other folds' queries (``inside``) and gives for the held-out ones (``outside``)."""
    out = np.zeros((len(query_of_gap), width), dtype=np.float32)
    for train, held in folds:
        inside, outside = np.isin(query_of_gap, train), np.isin(query_of_gap, held)
        out[outside] = learn_and_apply(inside, outside)
    return out


def _booster(raw: bytes) -> Any:
    import xgboost as xgb

    booster = xgb.Booster()
    booster.load_model(bytearray(raw))
    return booster


def _per_query(per_gap: np.ndarray, words: Sequence[tuple[str, ...]]) -> list[np.ndarray]:
    """Split values given gap after gap, query after query, into one array per query."""
    bounds = np.cumsum([0, *(len(w) - 1 for w in words)])
    return [per_gap[a:b] for a, b in pairwise(bounds)]


def _as_words(query: str | Sequence[str]) -> tuple[str, ...]:
    return normalize(query) if isinstance(query, str) else normalize(" ".join(query))


def _check_tags(
    words: Sequence[tuple[str, ...]], tags: Sequence[Sequence[str] | None] | None
) -> None:
    if tags is None:
        return
    if len(tags) != len(words):
        raise QsegError(f"{len(words)} queries but {len(tags)} tag lists")
    for w, t in zip(words, tags, strict=True):
        if t is not None and len(t) != len(w):
            raise QsegError(f"{len(t)} tags for the {len(w)} words of {' '.join(w)!r}")
