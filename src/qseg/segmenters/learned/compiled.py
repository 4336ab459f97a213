"""The compiled inference path of joint models: what it takes from a model, and when it applies.

:func:`compile_model` hands the compiled kernel (``_joint_kernel.pyx``) everything a joint
:class:`~qseg.segmenters.learned.break_model.BreakModel` segments with: the stores it reads, its
trees (padded to complete trees, :func:`complete_trees`), and hash tables made once of its
word vectors' vocabulary, its lexicon and its phrase rates (a few tens of milliseconds when the
model is first used). The kernel then decides a query of 2 to :data:`MAX_COMPILED_WORDS` words
in one call (from 13 words as the Python path does: gaps judged in windows, candidates from
the k-best of the gap model). Models it does not cover (the contextual probe, linear gap
models, decoding gap by gap, deeper trees) return ``None`` and keep the Python path, which
stays the reference the tests compare the kernel with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from qseg.segmenters.learned._domain_kernel import DomainKernel
from qseg.segmenters.learned._gap_probabilities import GapProbabilities
from qseg.segmenters.learned._joint_kernel import JointKernel
from qseg.segmenters.learned._key_table import KeyTable
from qseg.segmenters.learned.domain import _SEED, BITS, DomainModel
from qseg.segmenters.learned.gap_features import (
    _WINDOW_ARRAY,
    FEATURE_NAMES,
    FUNCTION_WORDS,
    MAX_SPAN,
    POS_CLASSES,
    TAG_INDEX,
)
from qseg.segmenters.learned.lexicon import matchable
from qseg.segmenters.learned.name_features import _COUNT_AT, _RATE_AT
from qseg.segmenters.learned.trainable import check_decoding
from qseg.segmenters.learned.trees import TreeEnsemble

MAX_COMPILED_WORDS = 64
"""The longest query the kernel decides (its candidates are 64-bit masks); longer ones go the
Python way."""


MAX_TREE_DEPTH = 8
"""The deepest trees the kernel evaluates (padded to complete trees: 2^depth leaves each);
a model with deeper ones keeps the Python path."""


@dataclass(frozen=True)
class CompleteTrees:
    """A tree ensemble with every tree padded to a complete binary tree of ``depth`` levels:
    inner node i has children 2i + 1 and 2i + 2; a leaf above the last level becomes a
    dummy split (feature 0) whose leaves below all hold its value, so every walk takes
    ``depth`` steps and ends on the same value as in the original tree. A split sending a
    missing value right reads its feature at ``feature + width`` (``_tree_walk.h``)."""

    thresholds: np.ndarray  # float32, trees x (2^depth - 1)
    features: np.ndarray  # uint32: feature, plus width where a missing value goes right
    leaves: np.ndarray  # float32, trees x 2^depth
    width: int  # the features of a row
    depth: int
    base: float
    logistic: bool


def complete_trees(trees: TreeEnsemble) -> CompleteTrees | None:
    """``trees`` as :class:`CompleteTrees`, or ``None`` if deeper than
    :data:`MAX_TREE_DEPTH` (built a level at a time for all trees at once)."""
    left, right = trees.left, trees.right
    level = trees.roots.reshape(-1, 1).astype(np.int64)  # per tree, the nodes of a level
    thresholds, features = [], []
    depth = 0
    while (left[level] >= 0).any():
        if depth == MAX_TREE_DEPTH:
            return None
        split = left[level] >= 0
        thresholds.append(np.where(split, trees.value[level], 0).astype(np.float32))
        feature = trees.feature[level] + (trees.default_left[level] == 0) * trees.n_features
        features.append(np.where(split, feature, 0).astype(np.uint32))
        # a leaf above the last level stands on both sides of a dummy split
        children = np.stack(
            [np.where(split, left[level], level), np.where(split, right[level], level)], axis=2
        )
        level = children.reshape(len(level), -1)
        depth += 1
    count = len(trees.roots)
    return CompleteTrees(
        np.hstack(thresholds) if thresholds else np.zeros((count, 0), np.float32),
        np.hstack(features) if features else np.zeros((count, 0), np.uint32),
        np.ascontiguousarray(trees.value[level], dtype=np.float32),
        trees.n_features,
        depth,
        trees.base,
        trees.logistic,
    )


def domain_kernel(model: DomainModel) -> DomainKernel:
    """The query-kind classifier compiled: the probability of its second kind per query."""
    return DomainKernel(model.weights, model.bias, _SEED, BITS)


def compile_model(model: Any) -> JointKernel | None:
    """The kernel of a joint model (a :class:`~qseg.segmenters.learned.break_model.BreakModel`,
    which imports this module), or ``None`` if the kernel does not cover it. Its decoding
    settings are checked here, where the kernel is made (a model made in memory may hold any):
    one it cannot use is the one-line :class:`~qseg.errors.QsegError` the Python path raises
    too."""
    source, inputs = model.source, model.inputs
    if model.joint is not None:
        check_decoding(model.decoding)
    if (
        model.joint is None
        or model.probe is not None
        or model.tagged
        or source is None
        or not isinstance(model.gap_model, TreeEnsemble)
        or (inputs.name_statistics and source.names is None)
    ):
        return None
    ensembles = [complete_trees(t) for t in (model.gap_model, model.joint)]
    ranker = complete_trees(model.ranker) if model.ranker is not None else None
    if any(t is None for t in ensembles) or (model.ranker is not None and ranker is None):
        return None
    kind = -1.0
    domain = None
    if model.domain is not None:
        if model.style == "auto":
            domain = domain_kernel(model.domain)
        else:
            kind = 1.0 if model.style == model.domain.labels[1] else 0.0
    titles = source.titles
    names = source.names
    lexicon: Any = None
    stats: Any = None
    prior = 0.0
    if model.lexicon is not None:
        lexicon, stats = [], []
        for table in model.lexicon.tables:
            keys = matchable(list(table))
            lexicon.append(KeyTable(keys))
            stats.append(np.array([table[k] for k in keys], dtype=np.float64).reshape(-1, 2))
        prior = model.lexicon.prior
    vectors = model.vectors
    phrases = matchable(list(model.phrases))
    gaps = GapProbabilities(
        counts=source.counts.view,
        words=source.words.view,
        titles=titles.view if titles is not None else None,
        names=names.view if names is not None else None,
        title_words=min(titles.max_words, 10) if titles is not None else 0,
        # an exact store has no n-gram longer than its longest: spans longer are not looked
        # up (a compact store may report one present, falsely, and the Python path reads
        # that count: all are looked up there)
        counted=min(source.counts.max_order, MAX_SPAN) if source.counts.view.exact else MAX_SPAN,
        log_n=math.log(source.corpus_size),
        names_log_n=math.log(max(names.unigram_total, 1)) if names is not None else 0.0,
        function_words=FUNCTION_WORDS,
        tag_classes=TAG_INDEX,
        classes=len(POS_CLASSES),
        gap_width=len(FEATURE_NAMES),
        window=np.ascontiguousarray(_WINDOW_ARRAY.ravel()),
        name_counts_at=np.array(_COUNT_AT, dtype=np.int64),
        name_rates_at=np.array(_RATE_AT, dtype=np.int64),
        features=inputs.features,
        name_statistics=inputs.name_statistics,
        pair_counts=inputs.pair_counts,
        vocabulary=KeyTable(vectors.vocabulary) if vectors is not None else None,
        vectors=vectors._table if vectors is not None else None,
        domain=domain,
        kind=kind,
        lexicon=lexicon,
        lexicon_stats=stats,
        prior=prior,
        trees=ensembles[0],
        n_features=model.n_features,
    )
    return JointKernel(
        gaps,
        joint_trees=ensembles[1],
        ranker_trees=ranker,
        phrases=KeyTable(phrases),
        rates=np.array([model.phrases[k] for k in phrases], dtype=np.float64),
        longest_phrase=max((k.count(" ") + 1 for k in model.phrases), default=0),
        max_candidates=model.decoding.max_candidates,
        title_only_from=model.decoding.title_only_from,
    )
