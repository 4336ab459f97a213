"""The random annotation model of paper 001 (section 4.3): all structures equally likely.

For a query of ``n`` words the model draws flat segmentations uniformly from the ``2^(n-1)``
break vectors and nested segmentations uniformly from the ``Catalan(n-1)`` binary trees. The
distances of paper 001 between two structures are ``total / (n - 1)`` for an integer ``total``
(the sum of ``|b^k - b'^k|`` over the boundaries), so the exact distributions are integer counts
of ordered pairs per total, found by enumeration:

- flat: for a fixed break vector, xor with all others is a bijection, so the totals from one
  vector to all vectors are the popcounts of all vectors; the pair counts are ``2^(n-1)`` times
  the popcount histogram (a binomial, as the tests check);
- nested: all binary trees are generated as height vectors and every ordered pair is compared.

Nested counts take seconds for 11 words (16,796 trees, 282 million ordered pairs), so they are
cached on disk in ``cache_dir()/agreement`` as well as in memory.
"""

from __future__ import annotations

import json
from fractions import Fraction
from functools import cache
from typing import Literal

import numpy as np

from qseg.errors import RandomModelError
from qseg.fileio import atomic_write, cache_dir

Kind = Literal["flat", "nested"]
KINDS: tuple[Kind, ...] = ("flat", "nested")

MAX_FLAT_WORDS = 25
"""Longest query for the flat model (2^24 break vectors to count)."""

MAX_NESTED_WORDS = 11
"""Longest query for the nested model (Catalan(10) = 16,796 trees, 282 million pairs)."""

_CACHE_VERSION = 1


def _check(n: int, kind: Kind) -> None:
    if kind not in KINDS:
        raise RandomModelError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    limit = MAX_FLAT_WORDS if kind == "flat" else MAX_NESTED_WORDS
    if not 2 <= n <= limit:
        raise RandomModelError(
            f"the {kind} random model is enumerated for queries of 2 to {limit} words, not {n}"
        )


@cache
def binary_trees(n: int) -> np.ndarray:
    """Boundary heights of every binary tree over ``n`` words, one tree a row (read-only)."""
    _check(n, "nested")
    return _trees(n)


@cache
def _trees(n: int) -> np.ndarray:
    if n == 1:
        trees = np.zeros((1, 0), dtype=np.int8)
    else:
        parts = []
        for cut in range(1, n):
            left, right = _trees(cut), _trees(n - cut)
            left_root = left.max(axis=1, initial=-1).astype(np.int16)
            right_root = right.max(axis=1, initial=-1).astype(np.int16)
            rows_left = np.repeat(np.arange(len(left)), len(right))
            rows_right = np.tile(np.arange(len(right)), len(left))
            root = 1 + np.maximum(left_root[rows_left], right_root[rows_right])
            parts.append(
                np.hstack([left[rows_left], root[:, None].astype(np.int8), right[rows_right]])
            )
        trees = np.vstack(parts)
    trees.setflags(write=False)
    return trees


def expected_height(n: int) -> Fraction:
    """Mean root height of the binary trees over ``n`` words (paper 001, Table 5, "Expected")."""
    trees = binary_trees(n)
    return Fraction(int(trees.max(axis=1).astype(np.int64).sum()), len(trees))


def pair_counts(n: int, kind: Kind, power: int = 1) -> np.ndarray:
    """Ordered pairs of random structures of ``n`` words per distance total (index = total).

    The distance is ``d_power = total / (n - 1)`` (eq. 4-5); for flat structures d1 = d2.
    """
    if power not in (1, 2):
        raise RandomModelError(f"power must be 1 (d1) or 2 (d2), not {power}")
    _check(n, kind)
    if kind == "flat":
        return _flat_counts(n)
    return _nested_counts(n, power)


@cache
def _flat_counts(n: int) -> np.ndarray:
    vectors = np.arange(2 ** (n - 1), dtype=np.uint32)
    popcounts = np.bitwise_count(vectors)
    counts = np.bincount(popcounts, minlength=n).astype(np.int64) * 2 ** (n - 1)
    counts.setflags(write=False)
    return counts


@cache
def _nested_counts(n: int, power: int) -> np.ndarray:
    from qseg.resources.built_once import build_tag

    name = f"nested-d{power}-{n}-v{_CACHE_VERSION}-{build_tag()}.json"  # qseg's release too
    path = cache_dir() / "agreement" / name
    try:
        counts = np.array(json.loads(path.read_text()), dtype=np.int64)
    except (OSError, ValueError):
        counts = _enumerate_nested(n, power)
        try:
            with atomic_write(path) as out:
                json.dump(counts.tolist(), out)
        except OSError:
            pass  # a read-only cache only costs the enumeration again
    counts.setflags(write=False)
    return counts


def _enumerate_nested(n: int, power: int) -> np.ndarray:
    """Count the totals of all ordered pairs of trees, a block of rows at a time.

    ``table[i, h]`` holds ``|h^k - b_i^k|`` against every tree, so a row's totals are the sum
    of ``n - 1`` looked-up vectors: no (rows x trees x boundaries) array is ever formed.
    """
    heights = binary_trees(n).astype(np.int16)
    values = heights**power
    tallest = int(heights.max(initial=0))
    top = tallest**power * (n - 1)
    kind = np.int16 if top < 2**15 else np.int32
    table = np.abs(
        np.arange(tallest + 1, dtype=np.int16)[None, :, None] ** power - values.T[:, None, :]
    ).astype(kind)
    counts = np.zeros(top + 1, dtype=np.int64)
    for start in range(0, len(heights), 256):
        block = heights[start : start + 256]
        totals = table[0][block[:, 0]]
        for i in range(1, n - 1):
            totals += table[i][block[:, i]]
        counts += np.bincount(totals.ravel(), minlength=top + 1)
    return counts


@cache
def survival(n: int, kind: Kind, power: int = 1) -> np.ndarray:
    """``P(total >= t)`` for ``t = 0 .. max + 1`` under the random model (``P_d`` of eq. 7)."""
    counts = pair_counts(n, kind, power)
    tail = np.cumsum(counts[::-1])[::-1] / counts.sum()
    result = np.append(tail, 0.0)
    result.setflags(write=False)
    return result


def distribution(n: int, kind: Kind, power: int = 1) -> list[tuple[Fraction, Fraction]]:
    """The exact distribution of the distance: ``(d, probability)`` for every possible ``d``."""
    counts = pair_counts(n, kind, power)
    pairs = int(counts.sum())
    return [
        (Fraction(total, n - 1), Fraction(int(count), pairs))
        for total, count in enumerate(counts)
        if count
    ]
