"""Annotation biases (paper 001, section 6), as statistics, tables and PNG plots.

- Bias 1, flat: how many segments annotators make by query length, and how even the segment
  lengths are (population standard deviation of the segment lengths of every annotation with
  2 or 3 segments; paper 001's example: 3 + 4 words give 0.5, 2 + 5 give 1.5). Next to each
  observed mean stands its expectation under the random model for the same query lengths:
  every segmentation into that many segments equally likely.
- Bias 2, nested: root heights of the trees by query length against the mean over all binary
  trees (paper 001, Table 5).
- Bias 4, flat: where boundaries fall around a preposition: on both sides, none, only on its
  left (before it) or only on its right (after it). Occurrences at the start or end of a query
  have a side without a boundary variable; paper 001 leaves them out, here they are counted in
  a row of their own, so each column totals 100% and the other rows are paper 001's figures.
  The random flat model expects 25% for each of the four positions.

Each statistic reads only the annotations of its kind (flat or nested) and ignores the rest.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from qseg.corpora.annotations import Annotation, Structure
from qseg.evaluation import random_model
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.tables import Table

PREPOSITIONS: frozenset[str] = frozenset(
    [
        "aboard",
        "about",
        "above",
        "across",
        "after",
        "against",
        "along",
        "amid",
        "among",
        "around",
        "as",
        "at",
        "before",
        "behind",
        "below",
        "beneath",
        "beside",
        "besides",
        "between",
        "beyond",
        "but",
        "by",
        "concerning",
        "despite",
        "down",
        "during",
        "except",
        "for",
        "from",
        "in",
        "inside",
        "into",
        "like",
        "near",
        "of",
        "off",
        "on",
        "onto",
        "opposite",
        "out",
        "outside",
        "over",
        "past",
        "per",
        "since",
        "than",
        "through",
        "throughout",
        "till",
        "to",
        "toward",
        "towards",
        "under",
        "underneath",
        "unlike",
        "until",
        "unto",
        "up",
        "upon",
        "versus",
        "via",
        "vs",
        "with",
        "within",
        "without",
    ]
)
"""The single-word English prepositions that Bias 4 looks at (``to`` included, as in paper 001's
``how to | choose a bike size``); pass another set to :func:`bias_statistics` to change it."""

POSITIONS = ("both", "none", "right", "left", "edge")
"""Boundary positions around a preposition, in paper 001's Table 6 order, then the excluded."""

SD_SEGMENTS = (2, 3)


@dataclass(frozen=True)
class BiasStatistics:
    """Counts behind the tables and plots; see the module docstring for their meaning."""

    segments: dict[int, Counter[int]] = field(default_factory=dict)
    """Flat: query length -> number of segments -> annotations."""
    spreads: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    """Flat: number of segments (2, 3) -> ``(query length, sd of segment lengths)`` each."""
    heights: dict[int, Counter[int]] = field(default_factory=dict)
    """Nested: query length -> root height -> annotations."""
    prepositions: dict[str, Counter[str]] = field(default_factory=dict)
    """Flat: preposition -> position (:data:`POSITIONS`) -> occurrences."""


def _segment_lengths_sd(seg: Segmentation) -> float:
    return _pstdev([b - a for a, b in seg.spans])


def _pstdev(values: list[int]) -> float:
    """The population standard deviation of a few small integers, in floats (the statistics
    module's exact fractions cost far more, on every annotation)."""
    n = len(values)
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / n)


def bias_statistics(
    annotations: Mapping[str, Sequence[Annotation | Structure]],
    prepositions: frozenset[str] = PREPOSITIONS,
) -> BiasStatistics:
    """Count every bias statistic over all annotations of all items."""
    stats = BiasStatistics()
    for annots in annotations.values():
        for annotation in annots:
            s = annotation.segmentation if isinstance(annotation, Annotation) else annotation
            n = len(s.words)
            if isinstance(s, NestedSegmentation):
                stats.heights.setdefault(n, Counter())[s.height] += 1
                continue
            k = len(s.spans)
            stats.segments.setdefault(n, Counter())[k] += 1
            if k in SD_SEGMENTS:
                stats.spreads.setdefault(k, []).append((n, _segment_lengths_sd(s)))
            for p, word in enumerate(s.words):
                if word in prepositions:
                    stats.prepositions.setdefault(word, Counter())[_position(s, p)] += 1
    return stats


def _position(seg: Segmentation, p: int) -> str:
    if p == 0 or p == len(seg.words) - 1:
        return "edge"
    before, after = seg.breaks[p - 1], seg.breaks[p]
    return {(1, 1): "both", (0, 0): "none", (0, 1): "right", (1, 0): "left"}[(before, after)]


@cache
def random_spread(n: int, k: int) -> float:
    """Mean sd of segment lengths over all segmentations of ``n`` words into ``k`` segments."""
    sds = [
        _pstdev([b - a for a, b in itertools.pairwise((0, *cuts, n))])
        for cuts in itertools.combinations(range(1, n), k - 1)
    ]
    return statistics.fmean(sds)


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}" if whole else "-"


def bias_tables(stats: BiasStatistics) -> list[Table]:
    """Tables of every statistic that has data (flat ones, nested ones, or both)."""
    tables: list[Table] = []
    if stats.segments:
        most = max(max(c) for c in stats.segments.values())
        shown = min(most, 5)
        header = ["words", "annotations", "mean segments"]
        header += [str(k) for k in range(1, shown)] + [f"{shown}+" if most > shown else str(shown)]
        rows = []
        for n, counts in sorted(stats.segments.items()):
            total = sum(counts.values())
            mean = sum(k * c for k, c in counts.items()) / total
            cells = [_pct(counts[k], total) for k in range(1, shown)]
            cells.append(_pct(sum(c for k, c in counts.items() if k >= shown), total))
            rows.append([str(n), str(total), f"{mean:.2f}", *cells])
        tables.append(
            ("Segments per flat annotation by query length (% of annotations)", header, rows)
        )
    if stats.spreads:
        header = ["segments", "annotations", "mean sd", "random mean sd", "sd in [0.5, 1]"]
        rows = []
        for k, pairs in sorted(stats.spreads.items()):
            sds = [sd for _, sd in pairs]
            expected = statistics.fmean(random_spread(n, k) for n, _ in pairs)
            within = sum(0.5 <= sd <= 1 for sd in sds)
            rows.append(
                [
                    str(k),
                    str(len(sds)),
                    f"{statistics.fmean(sds):.3f}",
                    f"{expected:.3f}",
                    f"{_pct(within, len(sds))}%",
                ]
            )
        tables.append(
            (
                "Standard deviation of segment lengths (annotations with 2 or 3 segments)",
                header,
                rows,
            )
        )
    if stats.heights:
        header = ["words", "trees", "mean height", "expected (random binary tree)"]
        rows = []
        for n, counts in sorted(stats.heights.items()):
            total = sum(counts.values())
            mean = sum(h * c for h, c in counts.items()) / total
            expected_height = (
                f"{float(random_model.expected_height(n)):.2f}"
                if 2 <= n <= random_model.MAX_NESTED_WORDS
                else "-"
            )
            rows.append([str(n), str(total), f"{mean:.2f}", expected_height])
        tables.append(("Root heights of nested annotations (paper 001, Table 5)", header, rows))
    if stats.prepositions:
        overall: Counter[str] = Counter()
        for by_position in stats.prepositions.values():
            overall.update(by_position)
        total = sum(overall.values())
        rows = [[pos, str(overall[pos]), _pct(overall[pos], total)] for pos in POSITIONS]
        tables.append(
            (
                "Boundaries around prepositions (paper 001, Table 6; its rows leave out 'edge')",
                ["position", "occurrences", "%"],
                rows,
            )
        )
        frequent = sorted(stats.prepositions.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
        header = ["preposition", "occurrences", *(f"{pos} %" for pos in POSITIONS)]
        rows = []
        for word, by_position in frequent[:12]:
            n_occ = sum(by_position.values())
            rows.append([word, str(n_occ), *(_pct(by_position[pos], n_occ) for pos in POSITIONS)])
        tables.append(
            ("Boundaries around the most frequent prepositions (% of occurrences)", header, rows)
        )
    return tables


def plot_bias(stats: BiasStatistics, folder: str | Path, prefix: str = "") -> list[Path]:
    """Draw paper 001's Figure 3 panels that have data as PNG files; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def save(fig: plt.Figure, name: str) -> None:
        path = out / f"{prefix}{name}.png"
        tmp = path.with_name(f".{path.name}.tmp.png")
        fig.tight_layout()
        fig.savefig(tmp, dpi=100)
        plt.close(fig)
        tmp.replace(path)
        written.append(path)

    if stats.segments:
        fig, ax = plt.subplots(figsize=(7.5, 4))
        lengths = sorted(stats.segments)
        most = max(max(c) for c in stats.segments.values())
        bottom = [0.0] * len(lengths)
        for k in range(1, most + 1):
            shares = [100 * stats.segments[n][k] / sum(stats.segments[n].values()) for n in lengths]
            if any(shares):
                ax.bar(
                    [str(n) for n in lengths],
                    shares,
                    bottom=bottom,
                    label=f"{k} segment{'s' * (k > 1)}",
                )
                bottom = [b + s for b, s in zip(bottom, shares, strict=True)]
        ax.set_xlabel("query length (words)")
        ax.set_ylabel("% of annotations")
        ax.set_title("Segments per flat annotation")
        ax.legend(fontsize="small", bbox_to_anchor=(1.02, 1), loc="upper left")
        save(fig, "segments-by-length")
    if stats.spreads:
        fig, ax = plt.subplots(figsize=(6, 4))
        for k, pairs in sorted(stats.spreads.items()):
            values = Counter(round(sd, 2) for _, sd in pairs)
            xs = sorted(values)
            ax.plot(
                xs, [100 * values[x] / len(pairs) for x in xs], marker="o", label=f"{k} segments"
            )
        ax.set_xlabel("standard deviation of segment lengths")
        ax.set_ylabel("% of annotations")
        ax.set_title("Evenness of segment lengths")
        ax.legend()
        save(fig, "segment-length-sd")
    if stats.heights:
        fig, ax = plt.subplots(figsize=(6, 4))
        for n, counts in sorted(stats.heights.items()):
            total = sum(counts.values())
            hs = sorted(counts)
            ax.plot(hs, [100 * counts[h] / total for h in hs], marker="o", label=f"{n} words")
        ax.set_xlabel("root height")
        ax.set_ylabel("% of trees")
        ax.set_title("Tree heights of nested annotations")
        ax.legend()
        save(fig, "tree-heights")
    if stats.prepositions:
        overall: Counter[str] = Counter()
        for by_position in stats.prepositions.values():
            overall.update(by_position)
        total = sum(overall.values())
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.bar(POSITIONS, [100 * overall[p] / total for p in POSITIONS])
        ax.set_ylabel("% of preposition occurrences")
        ax.set_title("Boundaries around prepositions")
        save(fig, "prepositions")
    return written
