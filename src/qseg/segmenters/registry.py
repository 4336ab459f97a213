"""The one table of segmentation methods: name -> parameters -> factory.

Every method is declared here once, trainable or not: its name, a one-line summary, what it
needs, its typed parameters with defaults (:mod:`.spec`), whether it must be trained, and its
factory. :func:`create` builds the segmenter a spec names; a trainable method comes back
untrained (``qseg train`` fits and saves it; :mod:`qseg.models` loads a saved one from a path).
Specs round-trip: ``create(spec).spec == canonical_spec(spec)``.

The trainable methods' factory imports the classifier only when called, so listing and parsing
methods, and the rule-based methods, stay clear of scikit-learn, XGBoost and torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from qseg.resources.bundle import Resources
from qseg.segmenters.base import Segmenter
from qseg.segmenters.learned.trainable import PRESETS, Preset, estimator_params
from qseg.segmenters.rules.baselines import ConstantSegmenter
from qseg.segmenters.rules.naive import NaiveSegmenter
from qseg.segmenters.rules.phrases import PARAMS as PHRASES_PARAMS
from qseg.segmenters.rules.phrases import PhrasesSegmenter
from qseg.segmenters.rules.pmi import PAPER_TAU, PmiSegmenter
from qseg.segmenters.rules.querylog import PARAMS as QUERYLOG_PARAMS
from qseg.segmenters.rules.querylog import QueryLogSegmenter
from qseg.segmenters.rules.wiki import MEDIAN_BIGRAM_COUNT, WikiSegmenter
from qseg.segmenters.spec import Method, Param, SpecError, format_spec, parse

__all__ = [
    "BEST_SPEC",
    "METHODS",
    "Method",
    "Param",
    "SpecError",
    "canonical_spec",
    "create",
    "default_spec",
    "parse_spec",
]


def _naive(res: Resources) -> Segmenter:
    return NaiveSegmenter(res.require_ngrams())


def _wiki(res: Resources, unseen_titles: bool, median: int) -> Segmenter:
    return WikiSegmenter(
        titles=res.require_titles("wiki"),
        counts=res.require_ngrams(),
        unseen_titles=unseen_titles,
        median=median,
    )


def _pmi(res: Resources, tau: float) -> Segmenter:
    return PmiSegmenter(res.require_probabilities(), tau)


def _phrases(res: Resources, **params: Any) -> Segmenter:
    return PhrasesSegmenter(res.require_ngrams(), **params)


def _querylog(res: Resources, wiki: bool, delta: float, max_words: int) -> Segmenter:
    log = res.require_query_log("querylog")
    titles = res.require_titles("querylog") if wiki else None
    return QueryLogSegmenter(log, titles, wiki=wiki, delta=delta, max_words=max_words)


def _always_split(res: Resources) -> Segmenter:
    return ConstantSegmenter(split=True)


def _never_split(res: Resources) -> Segmenter:
    return ConstantSegmenter(split=False)


def _trainable(preset: Preset) -> Callable[..., Segmenter]:
    def build(res: Resources, **params: Any) -> Segmenter:
        from qseg.segmenters.learned.supervised import BreakClassifier

        if preset.needs_vectors and res.vectors is None:
            raise ValueError("needs word vectors: give `Resources(vectors=...)`")
        return BreakClassifier(res, **estimator_params(preset, params))

    return build


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method(
            "naive",
            "|s|^|s| * freq(s) scoring, exact decoding (Hagen et al. 2011, section 4)",
            "n-gram counts",
            _naive,
        ),
        Method(
            "wiki",
            "Wikipedia-title normalization, the median-2-gram rule (Hagen et al. 2011, section 5)",
            "n-gram counts and Wikipedia titles",
            _wiki,
            {
                "unseen_titles": Param(
                    bool, False, "titles without an n-gram count also get the title weight"
                ),
                "median": Param(int, MEDIAN_BIGRAM_COUNT, "count given to unseen sub-2-grams"),
            },
        ),
        Method(
            "pmi",
            "break iff PMI of adjacent words < tau (Hagen et al. 2011, section 6.2)",
            "word and 2-gram probabilities",
            _pmi,
            {"tau": Param(float, PAPER_TAU, "PMI threshold (log10); tune with `qseg tune pmi`")},
        ),
        Method(
            "phrases",
            "gensim's Phrases (greedy collocation joining) on the n-gram counts: a baseline",
            "n-gram counts (and gensim)",
            _phrases,
            PHRASES_PARAMS,
        ),
        Method(
            "querylog",
            "Mishra et al.'s query-log segments, Wiki-Boost (Saha Roy et al. 2012, Appendix A)",
            "a query log (and Wikipedia titles for wiki=true)",
            _querylog,
            QUERYLOG_PARAMS,
        ),
        Method(
            "always-split",
            "every word its own segment: a floor (Bergsma and Wang 2007's baseline 1)",
            "nothing",
            _always_split,
        ),
        Method(
            "never-split",
            "the whole query one segment: a floor (Bergsma and Wang 2007's baseline 2)",
            "nothing",
            _never_split,
        ),
        *(
            Method(p.name, p.summary, p.needs, _trainable(p), p.params, trains=True)
            for p in PRESETS.values()
        ),
    )
}


def parse_spec(spec: str) -> tuple[Method, dict[str, Any]]:
    """The method a spec names and its full parameters (defaults filled in)."""
    return parse(spec, METHODS)


def canonical_spec(spec: str) -> str:
    """The spec with the method name lower-cased and parameters at their default dropped."""
    method, params = parse_spec(spec)
    return format_spec(method.name, method.params, params)


def create(spec: str, resources: Resources | None = None) -> Segmenter:
    """Build the segmenter a spec names, from ``resources`` (defaults where allowed); a
    trainable method's segmenter is untrained."""
    method, params = parse_spec(spec)
    try:
        return method.build(resources or Resources(), **params)
    except ValueError as exc:
        raise SpecError(f"{method.name}: {exc}") from None


BEST_SPEC = "wiki(unseen_titles=true)"
"""The default method where Wikipedia titles are available: the strongest of the n-gram
methods on Webis-QSeC-10, with the corpus's resources and with the built-in ones."""


def default_spec(resources: Resources) -> str:
    """:data:`BEST_SPEC` where titles are given or built in, else ``naive``."""
    return BEST_SPEC if resources.optional_titles() is not None else "naive"
