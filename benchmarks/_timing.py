"""What the speed benchmarks share: a query's time segmented alone, and percentiles of
times. Imported after a benchmark pins itself to one core (it loads nothing numeric)."""

from __future__ import annotations

import time
from typing import Any


def single_pass(segmenter: Any, texts: list[str]) -> list[float]:
    """Seconds of each query segmented one at a time (``segment``)."""
    clock = time.perf_counter
    took = []
    for text in texts:
        started = clock()
        segmenter.segment(text)
        took.append(clock() - started)
    return took


def percentile(values: list[float], share: float) -> float:
    """The value at ``share`` (0 to 1) of the sorted values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def windows(texts: list[str], length: int, count: int = 300) -> list[str]:
    """``count`` windows of ``length`` words of the queries put one after the other: queries
    of a given length made of real query words."""
    words = " ".join(texts).split()
    step = max(1, len(words) // count)
    return [" ".join(words[i : i + length]) for i in range(0, step * count, step)]
