"""How unsure a segmenter is of a query: the order in which to annotate queries so that each
answer teaches a model the most (active learning by uncertainty sampling).

Two measures, compared in docs/adapting.md's simulations (where ``entropy`` reached with 95
and 141 annotated queries the accuracy random order reached with 200, ``margin`` with 137 and
186): the default is ``entropy`` for a segmenter that has it, else ``margin``.

- ``margin``: the difference between the scores of the segmenter's two best segmentations
  (``rank(q, 2)``); the smaller, the less sure. Any segmenter has it. A query of one word, or
  one the segmenter gives a single answer for, is the surest of all.
- ``entropy``: the sum over the query's gaps of the entropy of the break probability, for
  segmenters that give break probabilities (trained models): how unsure each break is,
  whatever the decoder then makes of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from qseg.errors import QsegError
from qseg.segmenters.base import Segmenter

MEASURES = ("entropy", "margin")
"""The measures of uncertainty, the better in the simulations first."""


def default_measure(segmenter: Segmenter) -> str:
    """``entropy`` for a segmenter that gives break probabilities, else ``margin``."""
    return "entropy" if hasattr(segmenter, "break_probabilities") else "margin"


def uncertainties(
    segmenter: Segmenter,
    queries: Sequence[tuple[str, ...]],
    measure: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Per query (normalized words), how unsure ``segmenter`` is of it by ``measure`` (default:
    :func:`default_measure`): larger is less sure
    (``-inf``: nothing to choose, a single possible answer). ``progress`` is told how many
    queries are done, now and then."""
    measure = measure or default_measure(segmenter)
    check_measure(segmenter, measure)
    found = np.full(len(queries), -np.inf)
    if measure == "entropy":
        probabilities = segmenter.break_probabilities  # type: ignore[attr-defined]
        for start in range(0, len(queries), 1024):
            chunk = list(queries[start : start + 1024])
            for i, p in enumerate(probabilities(chunk), start=start):
                p = np.clip(np.asarray(p, dtype=np.float64), 1e-12, 1 - 1e-12)
                if len(p):
                    found[i] = float(-(p * np.log(p) + (1 - p) * np.log1p(-p)).sum())
            if progress is not None:
                progress(min(start + 1024, len(queries)))
        return found
    for i, words in enumerate(queries):
        if len(words) > 1:
            ranked = segmenter.rank(words, 2)
            if len(ranked) == 2:
                margin = float(ranked[0][1]) - float(ranked[1][1])
                found[i] = -margin if math.isfinite(margin) else -np.inf
        if progress is not None and (i + 1) % 256 == 0:
            progress(i + 1)
    if progress is not None:
        progress(len(queries))
    return found


def check_measure(segmenter: Segmenter, measure: str) -> None:
    """:class:`QsegError` unless ``measure`` is one ``segmenter`` has."""
    if measure not in MEASURES:
        raise QsegError(f"unknown measure {measure!r}: {' or '.join(MEASURES)}")
    if measure == "entropy" and not hasattr(segmenter, "break_probabilities"):
        raise QsegError(
            f"{segmenter.spec} gives no break probabilities: measure its uncertainty by margin"
        )


def most_uncertain(
    segmenter: Segmenter,
    queries: Sequence[tuple[str, ...]],
    n: int | None = None,
    measure: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[int]:
    """The positions of the ``n`` queries (all if ``None``) ``segmenter`` is least sure of,
    least sure first; ties in the order given."""
    values = uncertainties(segmenter, queries, measure, progress)
    order = np.argsort(-values, kind="stable")
    return [int(i) for i in order[: len(queries) if n is None else n]]
