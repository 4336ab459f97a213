"""Out-of-domain judges of candidate default models (issue 40, items 1 and 4), shared by
``default_report.py`` (``python scripts/NAME.py`` puts this folder on the import path).

A candidate is a :class:`Candidate`: a recipe of ``_recipes`` (trained here as each judge
needs), a fixed segmenter (a method spec such as ``wiki(unseen_titles=true)``, a shipped
model's name or a model file), or both (a shipped model and the recipe that trained it: the
model where a judge needs one trained on everything, the recipe where it needs one that has
not seen the queries). The judges:

- :meth:`Judges.in_domain`: Webis-QSeC-10 5-fold cross-validation (fold split 0, majority
  protocol) and QueryNER dev, as ``_recipes.measure`` computes them (the same folds and
  fits), keeping the segmentations for the other judges;
- :meth:`Judges.left_out`: leave one corpus out, trained on QueryNER train only and scored on
  every Webis query, trained on Webis only and scored on QueryNER dev;
- :func:`qvrs`: paper 000's QVRS (oracle over quoted versions) on the IR collections, through
  ``qseg ir-eval`` and its embedded engine;
- :func:`long_queries`: how many queries of five or more words come back as one segment;
- :func:`function_word_gaps`: break accuracy at gaps next to a function word against gaps
  between two content words;
- :func:`styles`: a model of two kinds of query in each style (``auto``, ``web``,
  ``product``): each cross-validation fold's model once, styled each way;
  :func:`style_examples` picks queries whose styles differ.

The counting functions (:func:`count_long`, :func:`count_gaps`, :func:`differing`,
:func:`verdict`) take plain segmentations or figures.
"""

from __future__ import annotations

import json
import shlex
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from _qseg import qseg as run_qseg

import qseg
from lab.recipes import SHARED, Corpora, Recipe, RoutedRecipe, _words
from qseg import models
from qseg.corpora import ir
from qseg.evaluation.cross_validation import query_folds
from qseg.evaluation.ir.versions import ir_words
from qseg.evaluation.matching import choose_reference, evaluate
from qseg.segmentation import Reference, Segmentation
from qseg.segmenters.base import Segmenter
from qseg.segmenters.registry import METHODS, parse_spec
from qseg.segmenters.spec import format_spec, looks_like_spec

FUNCTION_WORDS = frozenset(
    [
        "a",
        "and",
        "at",
        "by",
        "for",
        "from",
        "in",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
        "without",
        "&",
    ]
)
"""The function words of the report (its conventions table and :func:`function_word_gaps`):
articles, conjunctions and the prepositions of product and web queries. Fixed here, not taken
from the model's own list (``qseg.segmenters.learned.gap_features.FUNCTION_WORDS``, which also has
"de", "la", "vs" ...), so that the judge does not move when the model's inputs change."""

LONG = 5
"""A long query has at least this many words."""

Outputs = dict[str, Segmentation]
"""A segmenter's segmentations by query id."""

COLLECTIONS = ("nfcorpus", "cranfield", "vaswani")
IR_MEASURES = ("nDCG@10", "AP(rel=1)@10")
"""QVRS measures: nDCG@10 on the graded judgments and MAP@10 (AP@10, grade >= 1 relevant),
as paper 000 reports them."""


# -- candidates --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A segmenter to judge: ``segmenter`` (a method spec, shipped model or model file) used
    as it is, and/or ``recipe`` trained as a judge needs (held-out figures)."""

    name: str
    segmenter: str | None = None
    recipe: Recipe | RoutedRecipe | None = None
    key: str = ""
    """A short name for ``qseg ir-eval --system KEY=...`` (default: from ``name``)."""

    def __post_init__(self) -> None:
        if self.segmenter is None and self.recipe is None:
            raise ValueError(f"candidate {self.name!r}: give a segmenter or a recipe")
        if not self.key:
            key = "".join(c if c.isalnum() or c in "-_." else "-" for c in self.name)
            object.__setattr__(self, "key", key.strip("-") or "system")

    @property
    def unsupervised(self) -> bool:
        """A method that learns nothing: its plain output is held out everywhere."""
        return self.recipe is None and self.segmenter is not None and is_method(self.segmenter)


def is_method(spec: str) -> bool:
    """Whether ``spec`` names a method of the registry that is not trained (not a model)."""
    name = spec.split("(", 1)[0].strip().lower()
    return looks_like_spec(spec) and name in METHODS and not METHODS[name].trains


def as_candidate(item: Candidate | Recipe | RoutedRecipe | str) -> Candidate:
    """A candidate from a recipe (by its name), a spec or model name, or a candidate."""
    if isinstance(item, Candidate):
        return item
    if isinstance(item, Recipe | RoutedRecipe):
        return Candidate(item.name, recipe=item)
    return Candidate(item, segmenter=item, key=item.split("(", 1)[0])


UNKEYED = ("name", "notes", "jobs")


def recipe_key(recipe: Recipe) -> tuple[Any, ...]:
    """What a recipe's trained models depend on: every field but its name, notes and jobs."""
    return tuple(getattr(recipe, f.name) for f in fields(recipe) if f.name not in UNKEYED)


def without_domain(spec: str) -> str:
    """``spec`` with the domain input off (a model of one corpus cannot learn the domain)."""
    method, params = parse_spec(spec)
    return format_spec(method.name, method.params, params | {"domain": False})


def has_domain(spec: str) -> bool:
    return bool(parse_spec(spec)[1].get("domain"))


def with_estimators(spec: str, most: int) -> str:
    """``spec`` with at most ``most`` boosting rounds (the quick mode's small boosters)."""
    method, params = parse_spec(spec)
    if "n_estimators" not in params or params["n_estimators"] <= most:
        return spec
    return format_spec(method.name, method.params, params | {"n_estimators": most})


@dataclass(frozen=True)
class Scale:
    """How much the judges train and score: every ``every``-th query of Webis and QueryNER
    train (QueryNER dev and the unlabelled sets whole), boosters of at most ``estimators``
    rounds. The full report is ``Scale()``; ``--quick`` is :data:`QUICK`."""

    every: int = 1
    estimators: int | None = None

    @property
    def full(self) -> bool:
        return self.every == 1 and self.estimators is None

    def corpora(self, corpora: Corpora) -> Corpora:
        if self.every == 1:
            return corpora
        webis = {k: corpora.webis_votes[k] for k in list(corpora.webis_votes)[:: self.every]}
        train = {k: corpora.queryner_train[k] for k in list(corpora.queryner_train)[:: self.every]}
        return Corpora(webis, train, corpora.queryner_dev)

    def recipe(self, recipe: Any) -> Any:
        """``recipe`` (a :class:`Recipe` or a routed recipe's) at this scale."""
        if self.estimators is None:
            return recipe
        if isinstance(recipe, RoutedRecipe):
            return replace(recipe, web=self.recipe(recipe.web), product=self.recipe(recipe.product))
        return replace(recipe, spec=with_estimators(recipe.spec, self.estimators))

    def describe(self) -> str:
        if self.full:
            return "all queries, the recipes' own boosters"
        parts = []
        if self.every > 1:
            parts.append(f"every {self.every}th Webis and QueryNER train query")
        if self.estimators is not None:
            parts.append(f"boosters of at most {self.estimators} rounds")
        return ", ".join(parts)


QUICK = Scale(every=4, estimators=30)


# -- counting ------------------------------------------------------------------------------------


def is_function_gap(words: Sequence[str], gap: int) -> bool:
    """Whether the gap after word ``gap`` has a function word on either side."""
    return words[gap] in FUNCTION_WORDS or words[gap + 1] in FUNCTION_WORDS


@dataclass
class GapCounts:
    """Gaps next to a function word and between two content words: how many, how many the
    segmentation gets right (its break or no break as the reference's), how many broken."""

    function: int = 0
    function_correct: int = 0
    function_broken: int = 0
    content: int = 0
    content_correct: int = 0
    content_broken: int = 0

    @property
    def function_accuracy(self) -> float | None:
        return self.function_correct / self.function if self.function else None

    @property
    def content_accuracy(self) -> float | None:
        return self.content_correct / self.content if self.content else None


def count_gaps(
    pairs: Iterable[tuple[Segmentation, Segmentation]],
    function_words: frozenset[str] = FUNCTION_WORDS,
) -> GapCounts:
    """Break accuracy at function-word gaps and at content gaps of ``(predicted, reference)``
    pairs of the same words (``predicted`` may be the reference: then ``*_broken`` are its
    break counts)."""
    counts = GapCounts()
    for predicted, reference in pairs:
        if predicted.words != reference.words:
            raise ValueError(f"different words: {predicted.words} and {reference.words}")
        words = predicted.words
        for gap, (brk, ref) in enumerate(zip(predicted.breaks, reference.breaks, strict=True)):
            if words[gap] in function_words or words[gap + 1] in function_words:
                counts.function += 1
                counts.function_correct += brk == ref
                counts.function_broken += brk
            else:
                counts.content += 1
                counts.content_correct += brk == ref
                counts.content_broken += brk
    return counts


def count_long(segmentations: Iterable[Segmentation], least: int = LONG) -> tuple[int, int]:
    """``(long, whole)``: the segmentations of at least ``least`` words, and how many of those
    are one segment."""
    long = whole = 0
    for seg in segmentations:
        if len(seg.words) >= least:
            long += 1
            whole += not any(seg.breaks)
    return long, whole


# -- the judges ----------------------------------------------------------------------------------


@dataclass
class Run:
    """A candidate's segmentations of the labelled queries in one setting: Webis (``None``:
    no figure, e.g. a model trained on all of it) and QueryNER dev, with notes."""

    webis: Outputs | None
    queryner: Outputs | None
    notes: list[str] = field(default_factory=list)


SHIPPED_NOTE = "trained on all of Webis and QueryNER train: no held-out figure"
DOMAIN_NOTE = "trained on one corpus, so without the domain input (`domain=false`)"
NO_CORPUS_NOTE = "the recipe trains on no other corpus"
WITHOUT = "trained without the corpus"
"""The ``setting`` of a table row from a model trained without the corpus of each column."""


class Judges:
    """Trains each candidate as the judges need, once per process, and keeps its outputs.

    ``corpora`` are cut to ``scale`` here; ``log`` gets one line per model trained; the fold
    models of the recipes of ``keep_folds`` are kept (:meth:`fold_models`)."""

    def __init__(
        self,
        corpora: Corpora,
        shared: Path = SHARED,
        scale: Scale = Scale(),
        seed: int = 0,
        log: Callable[[str], None] = print,
        keep_folds: Sequence[Recipe] = (),
    ) -> None:
        self.corpora = scale.corpora(corpora)
        self.shared = shared
        self.scale = scale
        self.seed = seed
        self.log = log
        self.references: Outputs = {
            k: choose_reference("majority", v) for k, v in self.corpora.webis_votes.items()
        }
        self._cv: dict[tuple[Any, ...], tuple[Outputs, Outputs, Any]] = {}
        self._keep = {recipe_key(r) for r in keep_folds}
        self._folds: dict[tuple[Any, ...], list[tuple[list[str], Any]]] = {}
        self._out: dict[tuple[str, tuple[Any, ...]], tuple[Outputs | None, list[str]]] = {}
        self._plain: dict[str, Run] = {}
        self._segmenters: dict[str, Segmenter] = {}
        self._files: dict[str, str] = {}
        self._folder = tempfile.TemporaryDirectory(prefix="qseg-judges-")

    def close(self) -> None:
        self._folder.cleanup()

    def __enter__(self) -> Judges:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # training

    def _fit(self, recipe: Recipe, webis: Mapping[str, Sequence[Reference]], what: str) -> Any:
        started = time.perf_counter()
        model = self.scale.recipe(recipe).fit(dict(webis), self.corpora)
        self.log(f"  trained {recipe.name}: {what} ({time.perf_counter() - started:.0f} s)")
        return model

    def cross_validated(self, recipe: Recipe) -> tuple[Outputs, Outputs, Any]:
        """``_recipes.measure``'s segmentations: Webis out of fold (5 folds of ``seed``),
        QueryNER dev from the model trained on all the recipe's queries; and that model."""
        key = recipe_key(recipe)
        if key not in self._cv:
            votes = self.corpora.webis_votes
            webis: Outputs = {}
            folds: list[tuple[list[str], Any]] = []
            for fold, (train, test) in enumerate(query_folds(list(votes), 5, self.seed), 1):
                model = self._fit(recipe, {i: votes[i] for i in train}, f"fold {fold} of 5")
                predicted = model.predict([_words(votes[i]) for i in test])
                webis.update(zip(test, predicted, strict=True))
                if key in self._keep:
                    folds.append((list(test), model))
            if key in self._keep:
                self._folds[key] = folds
            model = self._fit(recipe, votes, "all its queries")
            dev = self.corpora.queryner_dev
            queryner = dict(zip(dev, model.predict([s.words for s in dev.values()]), strict=True))
            self._cv[key] = (webis, queryner, model)
        return self._cv[key]

    def fold_models(self, recipe: Recipe) -> tuple[list[tuple[list[str], Any]], Any]:
        """The models of :meth:`cross_validated`: each fold's test query ids and model, and
        the model trained on all the recipe's queries (trained again if its folds were not
        kept: give the recipe in ``keep_folds`` to train it once)."""
        key = recipe_key(recipe)
        if key not in self._folds:
            self._keep.add(key)
            self._cv.pop(key, None)
            self.cross_validated(recipe)
        return self._folds[key], self._cv[key][2]

    @property
    def dev_gold(self) -> dict[str, list[Reference]]:
        """QueryNER dev as references (one annotation a query)."""
        return {k: [Reference(s, 1)] for k, s in self.corpora.queryner_dev.items()}

    def recipe_scores(self, recipe: Recipe) -> list[float | None]:
        """``_recipes.measure``'s four figures (Webis CV break and query accuracy, QueryNER
        dev break and query accuracy), from :meth:`cross_validated`."""
        webis, queryner, _ = self.cross_validated(recipe)
        return scores(webis, self.corpora.webis_votes) + scores(queryner, self.dev_gold)

    def _left_out_one(self, recipe: Recipe, keep: str) -> tuple[Outputs | None, list[str]]:
        """Segmentations of the corpus left out by ``recipe`` trained on ``keep`` alone."""
        key = (keep, recipe_key(recipe))
        if key not in self._out:
            notes: list[str] = []
            if keep not in recipe.corpora:
                self._out[key] = (None, [NO_CORPUS_NOTE])
                return self._out[key]
            alone = replace(recipe, corpora=(keep,))
            if has_domain(recipe.spec):
                alone = replace(alone, spec=without_domain(recipe.spec))
                notes.append(DOMAIN_NOTE)
            if keep == "queryner":
                model = self._fit(alone, {}, "QueryNER train only")
                votes = self.corpora.webis_votes
                words = [_words(v) for v in votes.values()]
                outputs = dict(zip(votes, model.predict(words), strict=True))
            else:
                model = self._fit(alone, self.corpora.webis_votes, "Webis only")
                dev = self.corpora.queryner_dev
                words = [s.words for s in dev.values()]
                outputs = dict(zip(dev, model.predict(words), strict=True))
            self._out[key] = (outputs, notes)
        return self._out[key]

    def segmenter(self, spec: str) -> Segmenter:
        if spec not in self._segmenters:
            self._segmenters[spec] = qseg.segmenter(spec)
        return self._segmenters[spec]

    def _plain_run(self, spec: str) -> Run:
        """An unsupervised method on every Webis query and QueryNER dev."""
        if spec not in self._plain:
            segmenter = self.segmenter(spec)
            votes = self.corpora.webis_votes
            texts = [refs[0].segmentation.query for refs in votes.values()]
            webis = dict(zip(votes, segmenter.segment_many(texts), strict=True))
            self._plain[spec] = Run(webis, self._dev(segmenter))
        return self._plain[spec]

    def _dev(self, segmenter: Segmenter) -> Outputs:
        dev = self.corpora.queryner_dev
        return dict(zip(dev, segmenter.segment_many(s.query for s in dev.values()), strict=True))

    # the settings

    def in_domain(self, candidate: Candidate) -> Run:
        """Webis 5-fold cross-validation and QueryNER dev (a shipped model without a recipe:
        QueryNER dev only)."""
        if candidate.recipe is not None:
            webis, queryner, _ = self.cross_validated(candidate.recipe)
            return Run(webis, queryner)
        assert candidate.segmenter is not None
        if candidate.unsupervised:
            return self._plain_run(candidate.segmenter)
        return Run(None, self._dev(self.segmenter(candidate.segmenter)), [SHIPPED_NOTE])

    def left_out(self, candidate: Candidate) -> Run:
        """Trained on QueryNER train only and scored on every Webis query; trained on Webis
        only and scored on QueryNER dev. Unsupervised methods: their plain outputs."""
        if candidate.recipe is not None:
            webis, web_notes = self._left_out_one(candidate.recipe, "queryner")
            queryner, product_notes = self._left_out_one(candidate.recipe, "webis")
            return Run(webis, queryner, list(dict.fromkeys(web_notes + product_notes)))
        assert candidate.segmenter is not None
        if candidate.unsupervised:
            return self._plain_run(candidate.segmenter)
        return Run(None, None, [SHIPPED_NOTE])

    def full(self, candidate: Candidate) -> Segmenter:
        """The candidate trained on everything: its segmenter, else its recipe trained on all
        its corpora."""
        if candidate.segmenter is not None:
            return self.segmenter(candidate.segmenter)
        assert candidate.recipe is not None
        return self.cross_validated(candidate.recipe)[2]

    def system(self, candidate: Candidate) -> str:
        """What ``qseg ir-eval --system`` takes for the candidate: its spec, or its recipe's
        full model saved to a temporary model file."""
        if candidate.segmenter is not None:
            return candidate.segmenter
        if candidate.key not in self._files:
            path = Path(self._folder.name) / f"{candidate.key}.qseg"
            save_model(self.full(candidate), path)
            self._files[candidate.key] = str(path)
        return self._files[candidate.key]


def save_model(model: Any, path: Path) -> None:
    """Save a trained classifier for another process: carrying its titles if they are not the
    built-in ones (the built-in counts and titles are found where they are installed)."""
    resources = model.model_.resources
    other = [k for k, e in resources.items() if e is not None and not e.get("builtin", True)]
    if set(other) - {"titles"}:
        raise SystemExit(
            f"a model trained on other {', '.join(sorted(set(other) - {'titles'}))} than the "
            "built-in ones cannot be passed to qseg ir-eval by the report; add their flags here"
        )
    models.save(model, path, carry_titles="titles" in other)


# -- the tables' figures -------------------------------------------------------------------------


def scores(outputs: Outputs | None, gold: Mapping[str, Sequence[Reference]]) -> list[float | None]:
    """Break and query accuracy of ``outputs`` on ``gold`` (majority protocol), or Nones."""
    if outputs is None:
        return [None, None]
    result = evaluate({"system": outputs}, gold)[0]
    return [result.break_accuracy, result.query_accuracy]


def held_out(judges: Judges, candidates: Sequence[Candidate]) -> list[dict[str, Any]]:
    """Per candidate: Webis CV and QueryNER dev break / query accuracy (in-domain), then the
    same trained without the corpus scored (left out), with the notes of each."""
    dev, votes = judges.dev_gold, judges.corpora.webis_votes
    rows = []
    for candidate in candidates:
        started = time.perf_counter()
        inside, outside = judges.in_domain(candidate), judges.left_out(candidate)
        rows.append(
            {
                "name": candidate.name,
                "in_domain": scores(inside.webis, votes) + scores(inside.queryner, dev),
                "left_out": scores(outside.webis, votes) + scores(outside.queryner, dev),
                "in_domain_notes": inside.notes,
                "left_out_notes": outside.notes,
                "seconds": time.perf_counter() - started,
            }
        )
        judges.log(f"held-out: {rows[-1]}")
    return rows


def unlabelled_sets(shared: Path = SHARED) -> dict[str, list[str]]:
    """The unlabelled query sets by name: the queries of the three IR collections (NFCorpus's
    keyword-style test queries, as ``qseg ir-eval`` reads them) and paper 000's 500 queries,
    each as the words a search engine sees (lower-cased alphanumeric runs: punctuation
    dropped, function words kept)."""
    data = shared / "data" / "ir"
    sets = {
        "NFCorpus": ir.known_collection("nfcorpus", data / "nfcorpus").queries,
        "Cranfield": ir.known_collection("cranfield", data / "cranfield").queries,
        "Vaswani": ir.known_collection("vaswani", data / "vaswani").queries,
        "Saha Roy 500": ir.read_tsv(shared / "data" / "saharoy-sigir12" / "queries.tsv"),
    }
    return {
        name: [" ".join(w) for w in map(ir_words, queries.values()) if w]
        for name, queries in sets.items()
    }


def long_queries(
    judges: Judges, candidates: Sequence[Candidate], least: int = LONG
) -> dict[str, Any]:
    """Per corpus, the queries of at least ``least`` words and how many of them come back as
    one segment: from the gold (Webis majority, QueryNER dev), from each candidate in its
    held-out setting (:meth:`Judges.in_domain` on the labelled corpora, :meth:`Judges.full`
    on the unlabelled sets) and, for the trained ones, from the model without the corpus."""
    sets = unlabelled_sets(judges.shared)
    corpora = ["Webis-QSeC-10 (majority)", "QueryNER dev", *sets]
    dev = judges.corpora.queryner_dev
    gold = [count_long(judges.references.values(), least), count_long(dev.values(), least)]
    rows: list[dict[str, Any]] = [
        {"name": "gold", "counts": [*gold, *([None] * len(sets))], "notes": []}
    ]
    for candidate in candidates:
        inside = judges.in_domain(candidate)
        segmenter = judges.full(candidate)
        unlabelled = [count_long(segmenter.segment_many(t), least) for t in sets.values()]
        labelled = [_long(inside.webis, least), _long(inside.queryner, least)]
        rows.append(
            {"name": candidate.name, "counts": labelled + unlabelled, "notes": inside.notes}
        )
        if candidate.recipe is not None:
            outside = judges.left_out(candidate)
            counts = [_long(outside.webis, least), _long(outside.queryner, least)]
            rows.append(
                {
                    "name": candidate.name,
                    "setting": WITHOUT,
                    "counts": counts + [None] * len(sets),
                    "notes": outside.notes,
                }
            )
        judges.log(f"long queries: {rows[-1]}")
    totals = [
        gold[0][0],
        gold[1][0],
        *(sum(len(t.split()) >= least for t in texts) for texts in sets.values()),
    ]
    queries = [len(judges.references), len(dev), *map(len, sets.values())]
    return {"corpora": corpora, "queries": queries, "long": totals, "rows": rows, "least": least}


def _long(outputs: Outputs | None, least: int) -> tuple[int, int] | None:
    return None if outputs is None else count_long(outputs.values(), least)


def function_word_gaps(judges: Judges, candidates: Sequence[Candidate]) -> dict[str, Any]:
    """Per labelled corpus, break accuracy at gaps next to a function word and between two
    content words: the gold's break rate at each, then every candidate in its held-out
    setting and, for the trained ones, without the corpus."""
    gold = {"webis": judges.references, "queryner": judges.corpora.queryner_dev}

    def cells(run: Run) -> list[dict[str, Any] | None]:
        out = []
        for corpus, outputs in (("webis", run.webis), ("queryner", run.queryner)):
            if outputs is None:
                out.append(None)
                continue
            reference = gold[corpus]
            out.append(asdict(count_gaps((outputs[k], reference[k]) for k in reference)))
        return out

    gold_counts = [asdict(count_gaps((s, s) for s in g.values())) for g in gold.values()]
    rows: list[dict[str, Any]] = []
    for candidate in candidates:
        inside = judges.in_domain(candidate)
        rows.append({"name": candidate.name, "cells": cells(inside), "notes": inside.notes})
        if candidate.recipe is not None:
            outside = judges.left_out(candidate)
            rows.append(
                {
                    "name": candidate.name,
                    "setting": WITHOUT,
                    "cells": cells(outside),
                    "notes": outside.notes,
                }
            )
    return {
        "corpora": ["Webis-QSeC-10 (majority)", "QueryNER dev"],
        "gold": gold_counts,
        "rows": rows,
    }


STYLES = ("auto", "web", "product")
"""The styles of a model of two kinds of query: each query's kind inferred, or one kind's
conventions for every query."""

RIGHT_STYLE = {"webis": "web", "queryner": "product"}
"""The fixed style whose conventions each labelled corpus follows."""


def styles(
    judges: Judges, recipe: Recipe | RoutedRecipe, chosen: Sequence[str] = STYLES
) -> list[dict[str, Any]]:
    """Per style, ``recipe``'s Webis cross-validation and QueryNER dev break / query accuracy
    (:meth:`Judges.recipe_scores`' folds and models, each styled with
    ``BreakModel.with_style``; ``auto`` is the recipe's own figures)."""
    folds, full = judges.fold_models(recipe)
    votes, dev = judges.corpora.webis_votes, judges.corpora.queryner_dev
    rows = []
    for style in chosen:
        webis: Outputs = {}
        for test, model in folds:
            styled = getattr(model, "model_", model).with_style(style)
            webis.update(zip(test, styled.predict([_words(votes[i]) for i in test]), strict=True))
        words = [s.words for s in dev.values()]
        styled = getattr(full, "model_", full).with_style(style)
        queryner = dict(zip(dev, styled.predict(words), strict=True))
        figures = scores(webis, votes) + scores(queryner, judges.dev_gold)
        rows.append({"style": style, "figures": figures})
        judges.log(f"styles: {rows[-1]}")
    return rows


def style_cost(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[float]]:
    """Per labelled corpus, what ``auto`` costs against the corpus's own fixed style
    (:data:`RIGHT_STYLE`): ``[break, query]`` accuracy of that style minus auto's (negative:
    auto is better)."""
    by_style = {row["style"]: row["figures"] for row in rows}
    auto = by_style["auto"]
    cost = {}
    for offset, corpus in ((0, "webis"), (2, "queryner")):
        right = by_style[RIGHT_STYLE[corpus]]
        cost[corpus] = [right[offset + i] - auto[offset + i] for i in (0, 1)]
    return cost


def differing(
    answers: Mapping[str, Sequence[Segmentation]],
    first: str = "web",
    second: str = "product",
    per_kind: int = 2,
    function_words: frozenset[str] = FUNCTION_WORDS,
) -> list[int]:
    """Indices of example queries: the first ``per_kind`` whose ``first`` and ``second``
    answers differ at a gap next to a function word, then the first ``per_kind`` that differ
    only between content words (an entity span kept or split)."""
    near: list[int] = []
    apart: list[int] = []
    pairs = zip(answers[first], answers[second], strict=True)
    for index, (a, b) in enumerate(pairs):
        gaps = [g for g, (x, y) in enumerate(zip(a.breaks, b.breaks, strict=True)) if x != y]
        if not gaps:
            continue
        function = any(is_function_gap(a.words, g) for g in gaps)
        chosen = near if function else apart
        if len(chosen) < per_kind:
            chosen.append(index)
        if len(near) == len(apart) == per_kind:
            break
    return near + apart


def style_examples(
    judges: Judges, spec: str, per_kind: int = 2, chosen: Sequence[str] = STYLES
) -> list[dict[str, Any]]:
    """Webis and QueryNER dev queries whose ``spec(style=web)`` and ``spec(style=product)``
    answers differ (:func:`differing`, in corpus order), each with its gold and its answer
    in every style (``qseg.segmenter(f"{spec}(style=...)")``)."""
    gold = {
        "Webis-QSeC-10 (majority)": list(judges.references.values()),
        "QueryNER dev": list(judges.corpora.queryner_dev.values()),
    }
    found = []
    for corpus, segs in gold.items():
        texts = [s.query for s in segs]
        answers = {
            style: list(judges.segmenter(f"{spec}(style={style})").segment_many(texts))
            for style in chosen
        }
        for index in differing(answers, per_kind=per_kind):
            found.append(
                {
                    "corpus": corpus,
                    "gold": segs[index].to_quoted(),
                    "styles": {style: answers[style][index].to_quoted() for style in chosen},
                }
            )
    return found


NOISE = 0.01
"""A difference in query accuracy within which two recipes are not told apart."""


def verdict(web: float, product: float, noise: float = NOISE) -> str:
    """What an idea does, from its differences in query accuracy on web and product queries
    to its base: "helps both", "helps web, hurts product", "within noise" ..."""

    def word(delta: float) -> str:
        return "helps" if delta > noise else "hurts" if delta < -noise else "same"

    w, p = word(web), word(product)
    if w == p:
        return {"helps": "helps both", "hurts": "hurts both", "same": "within noise"}[w]
    if w == "same":
        return f"{p} product, within noise on web"
    if p == "same":
        return f"{w} web, within noise on product"
    return f"{w} web, {p} product"


# -- QVRS through qseg ir-eval ----------------------------------------------------------------


def ir_arguments(collection: str, shared: Path) -> list[str]:
    """``qseg ir-eval`` flags of a collection in ``shared/data/ir``, as ``ir_report.py`` runs
    them (Cranfield and Vaswani without NFCorpus's stopword list; NFCorpus's documents are
    stored without it), on the built-in resources every candidate was trained with."""
    data = shared / "data" / "ir"
    arguments = ["ir-eval", "--collection", collection, "--data", str(data / collection)]
    if collection != "nfcorpus":
        arguments += ["--stopwords", str(data / "nfcorpus" / "raw" / "stopwords.large")]
    return arguments


def qvrs(
    judges: Judges,
    candidates: Sequence[Candidate],
    collections: Sequence[str] = COLLECTIONS,
    measures: Sequence[str] = IR_MEASURES,
    bqv: bool = True,
) -> list[dict[str, Any]]:
    """Each collection's ``qseg ir-eval`` of every candidate (its spec, or its recipe's full
    model saved to a temporary file): the unsegmented query, each candidate's all-quoted
    version and QVRS with p-values against the unsegmented query (paired t-test), BQV_BF."""
    systems = {c.key: judges.system(c) for c in candidates}
    shown = {
        c.key: (c.segmenter if c.segmenter is not None else f"{c.key}.qseg") for c in candidates
    }
    flags = [f for key, spec in systems.items() for f in ("--system", f"{key}={spec}")]
    extra = ["--measures", " ".join(measures), *([] if bqv else ["--no-bqv"])]
    out = []
    for collection in collections:
        started = time.perf_counter()
        arguments = ir_arguments(collection, judges.shared)
        result = json.loads(run_qseg(*arguments, *flags, *extra, "--format", "json", "--quiet"))
        command = [*arguments, *(f for k, s in shown.items() for f in ("--system", f"{k}={s}"))]
        out.append(
            {
                "collection": collection,
                "command": _shown(["qseg", *command, *extra], judges.shared),
                "queries": result["queries"],
                "table": result["table"],
                "systems": {c.key: c.name for c in candidates},
                "saved": [c.key for c in candidates if c.segmenter is None],
                "searches": result["searches"],
                "cache_hits": result["cache_hits"],
                "seconds": time.perf_counter() - started,
            }
        )
        judges.log(
            f"ir-eval {collection}: {result['searches']} searches, {result['cache_hits']} "
            f"from the cache, {out[-1]['seconds']:.1f} s"
        )
    return out


def _shown(command: Sequence[str], shared: Path) -> str:
    """A command line as the report shows it: ``../shared`` for the shared folder, quoted
    arguments where the shell needs them."""
    prefix = str(shared)
    return " ".join(
        shlex.quote("../shared" + a[len(prefix) :] if a.startswith(prefix) else a) for a in command
    )
