"""A query log held as an index: how often an n-gram's words occur in the log's queries, in
order and together or anywhere, for the query-log segmentation of Mishra et al. (2011) and
paper 000's Wiki-Boost.

Unlike n-gram counts, the method needs query-level facts: for an n-gram ``M`` of ``n`` words,

- ``k``: the (weighted) number of queries that contain every word of ``M`` (in any order);
- ``N``: how many of those contain ``M`` as a contiguous n-gram, in order;
- ``E``: how many would, were each query's words in random order: the expected number of
  times a shuffled query holds the n-gram, ``prod_w c_w! / (c_w - m_w)! / (l (l-1) ... (l-n+2))``
  for a query of ``l`` words holding word ``w`` ``c_w`` times where the n-gram has it ``m_w``
  times; ``(l - n + 1)! / l!`` when the words are all different. It is the probability that
  the shuffled query holds the n-gram whenever the n-gram can occur in it only once (one of its
  words occurs in the query no more often than in the n-gram: nearly always), and above that
  probability otherwise (``ha ha`` in ``ha ha ha``), which only makes the test stricter;
- ``count``: occurrences of ``M`` in the log, for probabilities ``count / tokens``.

The log is read once (one query a line, optionally ``<TAB>count``: the lines of ``qseg build
ngrams --from text``, read by the same parser) into numpy arrays: the words, each word's
token positions and each word's distinct queries. An n-gram is answered by intersecting the
query lists of its words and following the positions of its first word, in numpy, then
memoized. Held in memory (its load time and peak memory: ``benchmarks/querylog.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from qseg.errors import InputError
from qseg.fileio import StrPath
from qseg.query import words_of
from qseg.resources.builders.sources import text_batches

_MEMO = 1 << 18
"""N-grams whose statistics are kept (an LRU cache)."""
_MAX_TOTAL = 1 << 62
"""The most word tokens (counts included) a log may hold: every sum stays in 64 bits."""


@dataclass(frozen=True)
class NgramStats:
    """Log statistics of one n-gram (see the module docstring)."""

    together: int  # k
    contiguous: int  # N
    expected: float  # E
    count: int

    @property
    def significance(self) -> float:
        """Hoeffding's exponent: ``P(N - E >= t) <= exp(-2 t^2 / k)``, so ``2 (N - E)^2 / k``
        when ``N > E`` (the n-gram is more often contiguous than chance), else 0."""
        excess = self.contiguous - self.expected
        if excess <= 0 or self.together == 0:
            return 0.0
        return 2.0 * excess * excess / self.together


def _within(small: np.ndarray, big: np.ndarray) -> np.ndarray:
    """The values of ``small`` that are in ``big`` (both ascending, distinct), in
    O(|small| log |big|): a binary search per value, no sort of both."""
    if not len(small) or not len(big):
        return small[:0]
    at = np.minimum(np.searchsorted(big, small), len(big) - 1)
    return small[big[at] == small]


class QueryLog:
    """The queries of a log, indexed for :meth:`stats` and :meth:`count`."""

    def __init__(self, queries: Iterable[str | tuple[str, int]], *, source: str = "memory") -> None:
        weights: Counter[tuple[str, ...]] = Counter()
        for item in queries:
            text, weight = (item, 1) if isinstance(item, str) else item
            words = tuple(words_of(text))
            if words and weight > 0:
                weights[words] += weight
        self._index(weights, source)

    @classmethod
    def from_file(cls, path: StrPath) -> QueryLog:
        """One query a line, optionally followed by ``<TAB>count``; blank lines and count 0
        are skipped. A log without one usable line is refused, naming the file."""
        weights: Counter[tuple[str, ...]] = Counter()
        for lines, counts, _ in text_batches([Path(path)]):
            for line, count in zip(lines, counts.tolist(), strict=True):
                weights[tuple(line.split(" "))] += count
        log = cls.__new__(cls)
        log._index(weights, str(path))
        return log

    def _index(self, weights: Counter[tuple[str, ...]], source: str) -> None:
        if not weights:
            raise InputError(source, None, "no usable queries (every line is blank or has count 0)")
        self.source = source
        vocab: dict[str, int] = {}
        ids: list[int] = []
        lengths: list[int] = []
        for words in weights:
            ids.extend(vocab.setdefault(w, len(vocab)) for w in words)
            lengths.append(len(words))
        self.queries = sum(weights.values())
        self.total_tokens = sum(w * len(q) for q, w in weights.items())
        if self.total_tokens >= _MAX_TOTAL:
            raise InputError(
                source,
                None,
                f"the counts add up to {self.total_tokens} words, more than qseg can add up "
                f"(2^62); is a count column wrong?",
            )
        self.vocabulary = vocab
        self.tokens = np.array(ids, dtype=np.int32)
        self.lengths = np.array(lengths, dtype=np.int64)
        self.weights = np.array(list(weights.values()), dtype=np.int64)
        # each token's query; each word's token positions and distinct queries, ascending
        self._owner = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
        self._order = np.argsort(self.tokens, kind="stable")
        self._bounds = np.searchsorted(self.tokens[self._order], np.arange(len(vocab) + 1))
        self._word_owners = self._owner[self._order]  # per word, its tokens' queries, ascending
        pairs = np.unique(self.tokens.astype(np.int64) << 32 | self._owner)
        owners, queries = pairs >> 32, (pairs & 0xFFFFFFFF).astype(np.int32)
        bounds = np.searchsorted(owners, np.arange(len(vocab) + 1))
        self._postings = [queries[bounds[i] : bounds[i + 1]] for i in range(len(vocab))]
        self.stats = lru_cache(maxsize=_MEMO)(self._stats)

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k != "stats"}  # the memo: rebuilt

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self.stats = lru_cache(maxsize=_MEMO)(self._stats)

    @property
    def distinct_queries(self) -> int:
        return len(self.lengths)

    def count(self, words: Sequence[str]) -> int:
        """Occurrences of the n-gram in the log (each query times its count)."""
        return self.stats(tuple(words)).count

    def _positions(self, word: int) -> np.ndarray:
        return self._order[self._bounds[word] : self._bounds[word + 1]]

    def _stats(self, words: tuple[str, ...]) -> NgramStats:
        ids = [self.vocabulary.get(w, -1) for w in words]
        if -1 in ids:
            return NgramStats(0, 0, 0.0, 0)
        n, needed = len(ids), Counter(ids)
        postings = sorted((self._postings[i] for i in needed), key=len)
        candidates = postings[0]
        for other in postings[1:]:
            candidates = _within(candidates, other)
        # per candidate query: how many arrangements of its words put the n-gram's words at
        # given places (prod of c_w! / (c_w - m_w)!); a query without enough of a word drops
        arrangements = np.ones(len(candidates))
        for word, times in needed.items():
            owners = self._word_owners[self._bounds[word] : self._bounds[word + 1]]
            have = np.searchsorted(owners, candidates, "right") - np.searchsorted(
                owners, candidates, "left"
            )
            for j in range(times):
                arrangements *= np.maximum(have - j, 0)
        keep = arrangements > 0
        candidates, arrangements = candidates[keep], arrangements[keep]
        if not len(candidates):
            return NgramStats(0, 0, 0.0, 0)
        weights = self.weights[candidates]
        lengths = self.lengths[candidates].astype(np.float64)
        for j in range(n - 1):  # over the l (l - 1) ... (l - n + 2) ways to place the rest
            arrangements /= lengths - j
        # contiguous occurrences: around each position of the rarest word, the other tokens
        rarest = min(range(n), key=lambda j: len(self._positions(ids[j])))
        starts = self._positions(ids[rarest]) - rarest
        starts = starts[(starts >= 0) & (starts + n - 1 < len(self.tokens))]
        starts = starts[self._owner[starts + n - 1] == self._owner[starts]]
        for j in range(n):
            if j != rarest:
                starts = starts[self.tokens[starts + j] == ids[j]]
        owners = self._owner[starts]
        return NgramStats(
            together=int(weights.sum()),
            contiguous=int(self.weights[np.unique(owners)].sum()),
            expected=float((weights * arrangements).sum()),
            count=int(self.weights[owners].sum()),
        )

    def __repr__(self) -> str:
        return (
            f"<QueryLog {self.queries} queries ({self.distinct_queries} distinct), "
            f"{len(self.vocabulary)} words, {self.source}>"
        )
