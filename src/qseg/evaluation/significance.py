"""McNemar's test for two segmenters on the same queries (paper 004 reports significance with
it at p < 0.05).

Each unit (a query, or a gap between two words) is decided right or wrong by each system
against its reference under the protocol; only the units where the two systems differ count:
``only_a`` right by A alone, ``only_b`` by B alone. Under the null hypothesis both are equally
likely, so the p-value is the exact two-sided binomial test of ``only_a`` out of
``only_a + only_b`` at 1/2 (exact at any count, where the chi-square form needs large ones); the
chi-square statistic with continuity correction is given beside it for comparison with papers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from qseg.errors import QsegError
from qseg.evaluation.matching import check_protocol, judged, match
from qseg.segmentation import Reference, Segmentation


@dataclass(frozen=True)
class McNemar:
    """The paired comparison of systems ``a`` and ``b`` over one kind of unit."""

    a: str
    b: str
    unit: str
    """``queries`` (query accuracy) or ``gaps`` (break accuracy)."""
    units: int
    only_a: int
    only_b: int
    statistic: float
    p_value: float

    def row(self) -> dict[str, str | int | float]:
        return {
            "a": self.a,
            "b": self.b,
            "unit": self.unit,
            "units": self.units,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "chi2_corrected": self.statistic,
            "p_value": self.p_value,
        }


def mcnemar(a: str, b: str, unit: str, units: int, only_a: int, only_b: int) -> McNemar:
    """The test from the discordant counts."""
    from scipy.stats import binomtest

    discordant = only_a + only_b
    if discordant == 0:
        return McNemar(a, b, unit, units, 0, 0, 0.0, 1.0)
    statistic = (abs(only_a - only_b) - 1) ** 2 / discordant if only_a != only_b else 0.0
    p_value = float(binomtest(only_a, discordant, 0.5).pvalue)
    return McNemar(a, b, unit, units, only_a, only_b, statistic, min(p_value, 1.0))


def compare(
    systems: Mapping[str, Mapping[str, Segmentation]],
    a: str,
    b: str,
    gold: Mapping[str, Sequence[Reference]],
    protocol: str = "majority",
) -> tuple[McNemar, McNemar]:
    """McNemar's test of systems ``a`` and ``b`` on the gold queries: by query, and by gap."""
    check_protocol(protocol)
    for name in (a, b):
        if name not in systems:
            raise QsegError(f"--compare: no system named {name!r}; have {', '.join(systems)}")
    if a == b:
        raise QsegError("--compare needs two different systems")
    queries = [0, 0, 0]  # units, right by a alone, right by b alone
    gaps = [0, 0, 0]
    of_b = {q: (p, r) for q, p, r in judged(b, systems[b], gold, protocol)}
    for query_id, predicted, reference in judged(a, systems[a], gold, protocol):
        # every protocol keeps or drops a query for both systems alike
        pairs = ((predicted, reference), of_b[query_id])
        _tally(queries, *(match(query_id, p, r).correct for p, r in pairs))
        right_a, right_b = (
            [x == y for x, y in zip(p.breaks, r.breaks, strict=True)] for p, r in pairs
        )
        for x, y in zip(right_a, right_b, strict=True):
            _tally(gaps, x, y)
    return (
        mcnemar(a, b, "queries", *queries),
        mcnemar(a, b, "gaps", *gaps),
    )


def _tally(counts: list[int], right_a: bool, right_b: bool) -> None:
    counts[0] += 1
    counts[1] += right_a and not right_b
    counts[2] += right_b and not right_a


def mcnemar_table(tests: Sequence[McNemar]) -> tuple[list[str], list[list[str]]]:
    """Header and rows for :func:`qseg.tables.render_table`."""
    header = ["McNemar", "units", "right by A alone", "right by B alone", "chi2 (corrected)", "p"]
    rows = [
        [
            f"{t.a} vs {t.b}, {t.unit}",
            str(t.units),
            str(t.only_a),
            str(t.only_b),
            f"{t.statistic:.3f}",
            f"{t.p_value:.4g}" + (" *" if t.p_value < 0.05 else ""),
        ]
        for t in tests
    ]
    return header, rows
