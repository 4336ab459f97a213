"""What the training queries themselves teach: break rates of words and word pairs, and how
often an n-gram is made a segment where it occurs.

Both are learned out of fold when they feed a model trained on the same queries (so that the
model does not learn to trust memorized labels) and from all training queries for segmenting.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from qseg.segmentation import Segmentation

LEXICON_FEATURES: tuple[str, ...] = (
    "left_break_rate",
    "left_seen",
    "right_break_rate",
    "right_seen",
    "pair_break_rate",
    "pair_seen",
)
_SMOOTHING = 2.0


def gap_keys(words: Sequence[str]) -> Iterator[tuple[str, str, str]]:
    """Per gap: the word before it, the word after it, and the pair."""
    for g in range(len(words) - 1):
        yield words[g], words[g + 1], f"{words[g]} {words[g + 1]}"


@dataclass
class Lexicon:
    """Break rates per left word, right word and word pair, smoothed toward the prior."""

    prior: float
    tables: tuple[dict[str, tuple[float, float]], ...]
    """Left word, right word, word pair -> (sum of break shares, count); a merged lexicon's
    counts are weighted sums (:meth:`merged`)."""

    @classmethod
    def learn(cls, keys: Sequence[tuple[str, str, str]], rates: np.ndarray) -> Lexicon:
        tables: tuple[dict[str, list[float]], ...] = ({}, {}, {})
        for key, rate in zip(keys, rates, strict=True):
            for table, k in zip(tables, key, strict=True):
                entry = table.setdefault(k, [0.0, 0])
                entry[0] += float(rate)
                entry[1] += 1
        prior = float(rates.mean()) if len(rates) else 0.5
        frozen: tuple[dict[str, tuple[float, float]], ...] = tuple(
            {k: (v[0], int(v[1])) for k, v in t.items()} for t in tables
        )
        return cls(prior, frozen)

    @property
    def gaps(self) -> float:
        """The (weighted) number of gaps it was learnt from: each has one left word."""
        return float(sum(count for _, count in self.tables[0].values()))

    def merged(self, other: Lexicon, weight: float) -> Lexicon:
        """This lexicon with ``other``'s sums and counts added, each times ``weight``: a
        base model's lexicon with what a domain's annotations teach (:mod:`.adaptation`)."""
        tables = []
        for own, more in zip(self.tables, other.tables, strict=True):
            table = dict(own)
            for key, (total, count) in more.items():
                before = table.get(key, (0.0, 0.0))
                table[key] = (before[0] + weight * total, before[1] + weight * count)
            tables.append(table)
        mine, theirs = self.gaps, weight * other.gaps
        prior = (
            (self.prior * mine + other.prior * theirs) / (mine + theirs) if theirs else self.prior
        )
        return Lexicon(prior, tuple(tables))

    def encode(self, keys: Sequence[tuple[str, str, str]]) -> np.ndarray:
        """One row of :data:`LEXICON_FEATURES` per gap."""
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
    def from_json(cls, data: Any) -> Lexicon:
        """A lexicon written by :meth:`to_json` (``ValueError`` naming what is wrong if not)."""
        if not isinstance(data, dict) or set(data) != {"prior", "tables"}:
            raise ValueError("a lexicon is an object with a prior and tables")
        prior, tables = data["prior"], data["tables"]
        if not _finite_number(prior):
            raise ValueError(f"the lexicon prior must be a number, not {prior!r}")
        if not isinstance(tables, list) or len(tables) != 3:
            raise ValueError("a lexicon has three tables (left word, right word, pair)")
        frozen = []
        for table in tables:
            if not isinstance(table, dict):
                raise ValueError("a lexicon table maps keys to [break sum, count]")
            entries: dict[str, tuple[float, float]] = {}
            for key, value in table.items():
                if (
                    type(value) is not list
                    or len(value) != 2
                    or type(value[1]) is not int
                    or type(value[0]) not in (int, float)
                    # float sums of shares; NaN and infinities fail the comparison
                    or not 0 <= value[0] <= value[1] + 1e-6
                ):
                    raise ValueError(
                        f"lexicon entry {key!r} is not [break sum, count] with "
                        "0 <= break sum <= count"
                    )
                entries[key] = (float(value[0]), int(value[1]))
            check_keys(entries, "lexicon entry")
            frozen.append(entries)
        return cls(float(prior), tuple(frozen))


def phrase_rates(
    queries: Sequence[tuple[str, ...]], dists: Sequence[Mapping[tuple[int, ...], float]]
) -> dict[str, float]:
    """Multiword n-gram -> share of its occurrences in queries that annotators made a segment."""
    return {
        k: (made + 0.05) / (seen + 0.1) for k, (made, seen) in phrase_counts(queries, dists).items()
    }


def phrase_counts(
    queries: Sequence[tuple[str, ...]], dists: Sequence[Mapping[tuple[int, ...], float]]
) -> dict[str, tuple[float, int]]:
    """Multiword n-gram -> (share of votes making it a segment, summed; its occurrences)."""
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
    return {k: (as_segment.get(k, 0.0), c) for k, c in seen.items()}


def check_phrase_rates(data: Any) -> dict[str, float]:
    """Phrase rates read back from JSON (``ValueError`` unless they map n-grams to finite
    numbers)."""
    if not isinstance(data, dict) or not all(_finite_number(v) for v in data.values()):
        raise ValueError("phrase rates must map n-grams to finite numbers")
    check_keys(data, "phrase")
    return data


def check_keys(keys: Iterable[str], what: str) -> None:
    """``ValueError`` naming the first key (a ``what``) that no query's span can equal: one
    holding a line break or a lone surrogate. The compiled kernel's key tables cannot hold it,
    so a model file with one is refused where it is read, not at every query."""
    keys = list(keys)
    if _all_matchable(keys):
        return
    for key in keys:
        problem = _key_problem(key)
        if problem:
            raise ValueError(f"{what} {key!r} {problem}")


def matchable(keys: list[str]) -> list[str]:
    """``keys`` without those no query's span can equal (:func:`check_keys`): what the
    kernel's key tables hold of a model made in memory, with the Python path's answers (it
    never finds those keys either)."""
    if _all_matchable(keys):
        return keys
    return [key for key in keys if _key_problem(key) is None]


def _all_matchable(keys: list[str]) -> bool:
    """Whether no key holds a line break or a lone surrogate: one pass over all of them (the
    culprits are looked for only if there are any)."""
    joined = "".join(keys)
    return "\n" not in joined and (joined.isascii() or _key_problem(joined) is None)


def _key_problem(key: str) -> str | None:
    """Why no query's span can equal ``key`` (normalized words joined by single spaces hold
    neither a line break nor a lone surrogate), or ``None``."""
    if "\n" in key:
        return "holds a line break (an n-gram is words joined by spaces)"
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (it is not Unicode text)"
    return None


def _finite_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)
