"""A small synthetic world of queries for tests that need trained models but not ../shared.

Queries are made of known phrases and single words; the gold segmentation puts a break
between the units. The counts give every phrase a high count and the pairs across units a
low one, and the phrases are titles: enough signal for a model to learn in a second.
"""

from __future__ import annotations

import random
from functools import cache

import numpy as np

from qseg.resources.bundle import Resources
from qseg.resources.counts import NgramCounts
from qseg.resources.querylog import QueryLog
from qseg.resources.titles import TitleSet
from qseg.resources.vectors import WordVectors
from qseg.segmentation import Reference, Segmentation

PHRASES = [
    "new york",
    "new york yankees",
    "san francisco",
    "los angeles",
    "hotel deals",
    "cheap flights",
    "car rental",
    "red sox",
    "ticket prices",
    "stainless steel",
    "chest freezer",
    "coffee maker",
    "ice cream",
    "real estate",
    "credit card",
    "café münchen",
]
WORDS = ["cheap", "best", "tickets", "reviews", "near", "online", "used", "buy", "free", "2024"]

SMALL = "n_estimators=10, max_depth=2"
"""Spec parameters that keep the boosters of a test model small."""
TRAINED_SPECS = {
    "joint": f"joint(name_statistics=false, word_vectors=false, contextual=false, "
    f"inner_folds=3, {SMALL})",
    "features": f"features({SMALL})",
    "embeddings": f"embeddings(classifier=logreg, {SMALL})",
}
"""A small trained model of each trainable method, on :func:`resources`."""


@cache
def gold(n: int = 150, seed: int = 0) -> tuple[Segmentation, ...]:
    """``n`` annotated queries of one to four units."""
    rng = random.Random(seed)
    queries = []
    for _ in range(n):
        units = [
            rng.choice(PHRASES) if rng.random() < 0.6 else rng.choice(WORDS)
            for _ in range(rng.randint(1, 4))
        ]
        queries.append(Segmentation.from_pipe("|".join(units)))
    return tuple(queries)


@cache
def resources() -> Resources:
    """Counts (words, phrases and their sub-n-grams high; pairs across units low), titles
    (the phrases), word vectors and a query log (other toy queries), all in memory."""
    counts: dict[str, int] = {}
    words = {w for text in PHRASES + WORDS for w in text.split()}
    for word in words:
        counts[word] = 50_000
    for phrase in PHRASES:
        parts = phrase.split()
        for a in range(len(parts)):
            for b in range(a + 2, len(parts) + 1):
                counts[" ".join(parts[a:b])] = 20_000
    for seg in gold():
        for left, right in zip(seg.segments, seg.segments[1:], strict=False):
            counts.setdefault(f"{left[-1]} {right[0]}", 3)
    rng = np.random.default_rng(0)
    vocabulary = tuple(sorted(words))
    vectors = WordVectors(vocabulary, rng.normal(size=(len(vocabulary), 8)).astype(np.float32))
    return Resources(
        ngrams=NgramCounts(counts),
        titles=TitleSet(PHRASES),
        words=None,
        vectors=vectors,
        query_log=QueryLog([q.query for q in gold(300, seed=1)]),
    )


def train(spec: str, res: Resources | None = None, n: int = 150):
    """A trained model of a trainable spec on the toy queries."""
    from qseg.segmenters.registry import create

    model = create(spec, res or resources())
    queries = gold(n)
    return model.fit([q.words for q in queries], list(queries))


@cache
def votes(n: int = 300, seed: int = 0, annotators: int = 10) -> dict[str, tuple[Reference, ...]]:
    """``n`` distinct toy queries (by id) with the votes of ``annotators`` annotators, as
    Webis-QSeC-10 gives them: most give the gold segmentation, the others join two units,
    split a phrase or join the whole query (each query has its own share of dissent, so the
    vote shares vary)."""
    rng = random.Random(seed)
    out = {}
    distinct = list(dict.fromkeys(gold(4 * n, seed)))[:n]  # each query once, as in Webis
    for number, seg in enumerate(distinct):
        dissent = rng.choice((0.0, 0.1, 0.3, 0.5))
        given: dict[Segmentation, int] = {}
        for _ in range(annotators):
            breaks = list(seg.breaks)
            if breaks and rng.random() < dissent:
                if rng.random() < 0.5:
                    gap = rng.randrange(len(breaks))
                    breaks[gap] = 1 - breaks[gap]
                else:
                    breaks = [0] * len(breaks)
            other = Segmentation(seg.words, breaks)
            given[other] = given.get(other, 0) + 1
        ranked = sorted(given.items(), key=lambda item: (-item[1], item[0].breaks))
        out[f"toy-{seed}-{number}"] = tuple(Reference(s, v) for s, v in ranked)
    assert len(out) == n, f"the toy world has only {len(out)} distinct queries"
    return out
