"""Nested segmentations (paper 001's binary trees) from flat segmenters.

Two ways, one per kind of evidence:

- :func:`split_tree`, for any segmenter: recursive binary splitting at the weakest boundary,
  the method of Huang et al. (2010) that paper 001 cites. A fragment of the query is ranked as
  a query of its own (:meth:`~qseg.segmenters.base.Segmenter.rank`, every segmentation of it
  where the method lists that many), and it is split in two at the gap whose best segmentation
  with a break there scores highest; ties go to the gap the fragment's best segmentation breaks
  first, then to the leftmost. Each half is split the same way, down to single words.
- :func:`merge_tree`, for per-gap break probabilities (a trained model's): the two adjacent
  parts with the lowest break probability between them are joined first, bottom-up, until one
  tree remains (ties: the leftmost gap).

Both give binary trees. :func:`nest` picks :func:`merge_tree` where the segmenter gives break
probabilities, else :func:`split_tree`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from qseg.query import normalize
from qseg.segmentation import NestedSegmentation
from qseg.segmenters.base import Segmenter

MAX_RANKED = 512
"""Segmentations ranked per fragment: every one for fragments of up to 10 words."""


def split_tree(segmenter: Segmenter, query: str) -> NestedSegmentation:
    """Huang et al.'s top-down tree: split each fragment at its weakest boundary."""
    words = normalize(query)
    return NestedSegmentation.from_tree(_split(segmenter, words))


def _split(segmenter: Segmenter, words: tuple[str, ...]) -> str | tuple[Any, ...]:
    if len(words) == 1:
        return words[0]
    if len(words) == 2:
        return words
    ranked = segmenter.rank(" ".join(words), MAX_RANKED)
    best: dict[int, float] = {}
    for segmentation, score in ranked:  # best first: the first with a break at a gap is its best
        for gap, brk in enumerate(segmentation.breaks):
            if brk and gap not in best:
                best[gap] = score
    first = ranked[0][0].breaks
    gaps = range(len(words) - 1)
    cut = max(gaps, key=lambda g: (best.get(g, -math.inf), first[g], -g))
    return (_split(segmenter, words[: cut + 1]), _split(segmenter, words[cut + 1 :]))


def merge_tree(words: Sequence[str], break_probabilities: Sequence[float]) -> NestedSegmentation:
    """The bottom-up tree: join the adjacent parts with the weakest break between them first."""
    if len(break_probabilities) != len(words) - 1:
        raise ValueError(f"{len(words)} words need {len(words) - 1} break probabilities")
    parts: list[str | tuple[Any, ...]] = list(words)
    gaps = [float(p) for p in break_probabilities]
    while len(parts) > 1:
        g = min(range(len(gaps)), key=lambda i: (gaps[i], i))
        parts[g : g + 2] = [(parts[g], parts[g + 1])]
        del gaps[g]
    return NestedSegmentation.from_tree(parts[0])


def nest(segmenter: Segmenter, query: str) -> NestedSegmentation:
    """A binary tree over the query: from the segmenter's break probabilities where it gives
    them (:func:`merge_tree`), else by Huang et al.'s splitting (:func:`split_tree`)."""
    probabilities = getattr(segmenter, "break_probabilities", None)
    if probabilities is None:
        return split_tree(segmenter, query)
    words = normalize(query)
    return merge_tree(words, probabilities([words])[0])
