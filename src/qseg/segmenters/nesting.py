"""Nested segmentations (paper 001's binary trees) from flat segmenters.

Two ways, one per kind of evidence:

- :func:`split_tree`, for any segmenter: recursive binary splitting at the weakest boundary,
  the method of Huang et al. (2010) that paper 001 cites. A fragment of the query is ranked as
  a query of its own (:meth:`~qseg.segmenters.base.Segmenter.rank`, every segmentation of it
  where the method lists that many), and it is split in two at the gap whose best segmentation
  with a break there scores highest; among gaps that tie (for example every break of the
  fragment's best segmentation), at the one whose best segmentation without a break there
  scores lowest, the boundary that is costliest to join; then the leftmost. Each half is split
  the same way, down to single words.
- :func:`merge_tree`, for per-gap break probabilities (a trained model's): the two adjacent
  parts with the lowest break probability between them are joined first, bottom-up, until one
  tree remains (ties: the leftmost gap).

Both give binary trees, and both can be held to a flat segmentation (``breaks``): every one
of its segments is then a node of the tree (its inside joined before anything across its
ends). :func:`nest` takes a segmenter's own ``nested_tree`` where it has one (the query-log
method's, paper 000), else :func:`merge_tree` where it gives break probabilities, else
:func:`split_tree`, the last two held to the segmenter's own flat segmentation, so that a
method's tree and its flat answer never disagree (a trained model's flat answer comes from
joint decoding, not from its gap probabilities alone); queries of more than
:data:`MAX_NESTED_WORDS` words are refused (the trees of paper 001 are of short queries, and
splitting ranks every fragment).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from qseg.query import QueryError, normalize
from qseg.segmentation import NestedSegmentation
from qseg.segmenters.base import Segmenter

MAX_RANKED = 512
"""Segmentations ranked per fragment: every one for fragments of up to 10 words."""

MAX_NESTED_WORDS = 40
"""The longest query :func:`nest` takes."""


def split_tree(
    segmenter: Segmenter, query: str, breaks: Sequence[int] | None = None
) -> NestedSegmentation:
    """Huang et al.'s top-down tree: split each fragment at its weakest boundary; with
    ``breaks``, a fragment holding some of them is split at one of those."""
    words = normalize(query)
    return NestedSegmentation.from_tree(
        _split(segmenter, words, breaks if breaks is not None else (0,) * (len(words) - 1))
    )


def _split(
    segmenter: Segmenter, words: tuple[str, ...], breaks: Sequence[int]
) -> str | tuple[Any, ...]:
    if len(words) == 1:
        return words[0]
    if len(words) == 2:
        return words
    ranked = segmenter.rank(" ".join(words), MAX_RANKED)
    split: dict[int, float] = {}  # gap -> the best score with a break there
    joined: dict[int, float] = {}  # gap -> the best score without one
    for segmentation, score in ranked:  # best first: the first seen is the best
        for gap, brk in enumerate(segmentation.breaks):
            (split if brk else joined).setdefault(gap, score)
    gaps = [g for g in range(len(words) - 1) if breaks[g]] or range(len(words) - 1)
    cut = max(gaps, key=lambda g: (split.get(g, -math.inf), -joined.get(g, -math.inf), -g))
    return (
        _split(segmenter, words[: cut + 1], breaks[:cut]),
        _split(segmenter, words[cut + 1 :], breaks[cut + 1 :]),
    )


def merge_tree(
    words: Sequence[str],
    break_probabilities: Sequence[float],
    breaks: Sequence[int] | None = None,
) -> NestedSegmentation:
    """The bottom-up tree: join the adjacent parts with the weakest break between them first;
    with ``breaks``, every gap inside their segments before any of those breaks."""
    if len(break_probabilities) != len(words) - 1:
        raise ValueError(f"{len(words)} words need {len(words) - 1} break probabilities")
    parts: list[str | tuple[Any, ...]] = list(words)
    gaps = [float(p) for p in break_probabilities]
    held = list(breaks) if breaks is not None else [0] * len(gaps)
    while len(parts) > 1:
        g = min(range(len(gaps)), key=lambda i: (held[i], gaps[i], i))
        parts[g : g + 2] = [(parts[g], parts[g + 1])]
        del gaps[g], held[g]
    return NestedSegmentation.from_tree(parts[0])


def nest(segmenter: Segmenter, query: str) -> NestedSegmentation:
    """A binary tree over the query: from the segmenter's break probabilities where it gives
    them (:func:`merge_tree`), else by Huang et al.'s splitting (:func:`split_tree`)."""
    words = normalize(query)
    if len(words) > MAX_NESTED_WORDS:
        raise QueryError(
            f"a nested segmentation takes at most {MAX_NESTED_WORDS} words; this query has "
            f"{len(words)}"
        )
    own = getattr(segmenter, "nested_tree", None)
    if own is not None:  # a method with its own nested output (the query-log method)
        return own(words)
    flat = segmenter.segment(query).breaks
    probabilities = getattr(segmenter, "break_probabilities", None)
    if probabilities is None:
        return split_tree(segmenter, query, flat)
    return merge_tree(words, probabilities([words])[0], flat)
