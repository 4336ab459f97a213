"""Query-log segmentation: Mishra et al. (WWW 2011), alone and with paper 000's Wiki-Boost.

Paper 000 compares "Mishra et al." and "Mishra et al. + Wiki" (its Appendix A). Three steps:

- **Seg-Phase-1** (Mishra et al.): an n-gram is a segment when its words occur contiguously and
  in order in the log's queries more often than chance. Among the ``k`` log queries holding all
  its words, ``N`` hold it in order and ``E`` would if each query's words were shuffled
  (:mod:`qseg.resources.querylog`); Hoeffding's inequality bounds the chance of ``N - E >= t``
  by ``exp(-2 t^2 / k)``, so the n-gram's score is ``2 (N - E)^2 / k`` and it may be a segment
  when that bound is at most ``delta``. A query's segmentation maximizes the sum of the scores
  of its multiword segments (an exact dynamic program; single words score 0).
- **Wiki-Boost** (Algorithm 1): a Wikipedia title is segmented by Seg-Phase-1 into ``s1..sn``
  and scored by ``max(PMI(s1..s(n-1); sn), PMI(s1; s2..sn))`` with n-gram frequencies from the
  log; a single word scores its probability in the log.
- **Seg-Phase-2**: joins adjacent Seg-Phase-1 segments into titles where that raises the
  product of the scores of the output segments (an exact dynamic program over the segments).

What the sources leave open, and what qseg chose (docs/query-log.md says the same):

1. PMI is the ratio ``p(ab) / (p(a) p(b))``, not its log: Seg-Phase-2 multiplies scores, and a
   product of log-PMIs, which may be negative, orders nothing. Probabilities are counts over the
   log's word tokens, for every n.
2. A title that Seg-Phase-1 leaves whole (n = 1, where the formula has no two parts) is scored
   over its words: ``max(PMI(w1..w(m-1); wm), PMI(w1; w2..wm))``. A Seg-Phase-1 segment that is
   not a title is scored the same way; Seg-Phase-2 only ever joins segments into titles.
3. A title that never occurs in the log (as that n-gram: in order, side by side) has PMI 0 and
   is never joined; a word
   the log lacks scores 1 (it can only stand alone, so its score is common to every candidate).
4. Titles are looked up as they are needed: the same as scoring every title first (Algorithm 1),
   without segmenting millions of titles no query asks for. No stemming (the paper stems titles
   and log alike; qseg's queries and references are unstemmed surface words).
5. ``delta`` (0.05 by default) and n-grams of up to ``max_words`` words (5) in Seg-Phase-1.

As a ranking, Seg-Phase-1 ranks every segmentation made of significant n-grams by its sum of
scores; with Wiki-Boost, the coarsenings of the Seg-Phase-1 segmentation by the log of the
product of their scores. :meth:`QueryLogSegmenter.nested_tree` is paper 000's nested output:
words join inside Seg-Phase-1 segments first, then segments inside Seg-Phase-2 segments, then
those (within each level, the adjacent pair with the higher PMI first).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from qseg.errors import InputError
from qseg.query import Query, normalize
from qseg.segmentation import NestedSegmentation, Segmentation, break_spans
from qseg.segmenters.base import OneByOne
from qseg.segmenters.decoder import WeightTable, check_k, kbest_breaks
from qseg.segmenters.nesting import merge_tree
from qseg.segmenters.spec import Param, format_spec

if TYPE_CHECKING:
    from qseg.resources.querylog import QueryLog
    from qseg.resources.titles import TitleSet

PARAMS = {
    "wiki": Param(
        bool, True, "Wiki-Boost and Seg-Phase-2 after Seg-Phase-1 (paper 000's '+ Wiki')"
    ),
    "delta": Param(float, 0.05, "an n-gram is a segment iff Hoeffding's bound is <= delta"),
    "max_words": Param(int, 5, "longest n-gram Seg-Phase-1 considers"),
}

Spans = Sequence[tuple[int, int]]


def _table_score(table: WeightTable, breaks: Sequence[int]) -> float | None:
    """The score of a break vector under a weight table; ``None`` if a multiword segment has
    no weight (the method does not list that segmentation)."""
    total = 0.0
    for start, end in break_spans(breaks):
        if end - start >= 2:
            weight = dict(table[start]).get(end)
            if weight is None:
                return None
            total += weight
    return total


class QueryLogSegmenter(OneByOne):
    """Seg-Phase-1 on a query log, then (``wiki=True``) Wiki-Boost and Seg-Phase-2."""

    def __init__(
        self,
        log: QueryLog,
        titles: TitleSet | None = None,
        *,
        wiki: bool = True,
        delta: float = 0.05,
        max_words: int = 5,
    ) -> None:
        if not 0 < delta <= 1:
            raise ValueError(f"delta must be in (0, 1], not {delta}")
        if max_words < 2:
            raise ValueError(f"max_words must be at least 2, not {max_words}")
        if wiki:
            if titles is None:
                raise ValueError("wiki=true needs Wikipedia titles")
            if titles.max_words < 2:
                where = titles.store.path or titles.info.source.get("file", "titles")
                raise InputError(
                    where, None, "no multiword titles: Wiki-Boost needs titles of 2 or more words"
                )
        self.log, self.titles, self.wiki = log, titles, wiki
        self.delta, self.max_words = delta, max_words
        self._threshold = -math.log(delta)
        self.spec = format_spec(
            "querylog", PARAMS, {"wiki": wiki, "delta": delta, "max_words": max_words}
        )
        self._phase1 = lru_cache(maxsize=1 << 16)(self._phase1_breaks)
        self._boost = lru_cache(maxsize=1 << 16)(self._boost_score)

    def __getstate__(self) -> dict[str, object]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_phase1", "_boost")}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._phase1 = lru_cache(maxsize=1 << 16)(self._phase1_breaks)
        self._boost = lru_cache(maxsize=1 << 16)(self._boost_score)

    # Seg-Phase-1
    def phase1_table(self, words: tuple[str, ...]) -> WeightTable:
        """The significant n-grams of the query as a weight table (start -> (end, score))."""
        stats, n = self.log.stats, len(words)
        table = []
        for i in range(n - 1):
            row = []
            for end in range(i + 2, min(n, i + self.max_words) + 1):
                found = stats(words[i:end])
                if not found.contiguous:
                    break  # no longer n-gram from here occurs either
                score = found.significance
                if score > 0 and score >= self._threshold:
                    row.append((end, score))
            table.append(row)
        return table

    def _phase1_breaks(self, words: tuple[str, ...]) -> tuple[int, ...]:
        return kbest_breaks(self.phase1_table(words), len(words), 1)[0][1]

    # Wiki-Boost
    def _ratio(self, words: tuple[str, ...], cut: int, whole: int) -> float:
        count = self.log.count
        return whole * self.log.total_tokens / (count(words[:cut]) * count(words[cut:]))

    def _boost_score(self, words: tuple[str, ...]) -> float | None:
        """log of the Wiki-Boost score of a multiword segment; ``None`` when the log never has
        it (as that n-gram, in order)."""
        whole = self.log.count(words)
        if not whole:
            return None
        parts = break_spans(self._phase1(words))
        if len(parts) == 1:
            parts = tuple((i, i + 1) for i in range(len(words)))
        ratio = max(self._ratio(words, parts[-1][0], whole), self._ratio(words, parts[0][1], whole))
        return math.log(ratio)

    def _unit_score(self, words: tuple[str, ...]) -> float:
        """log score of a Seg-Phase-1 segment left as it is."""
        if len(words) == 1:
            count = self.log.count(words)
            return math.log(count / self.log.total_tokens) if count else 0.0
        boost = self._boost(words)
        return 0.0 if boost is None else boost

    # Seg-Phase-2
    def phase2_table(self, words: tuple[str, ...], units: Spans) -> tuple[float, WeightTable]:
        """The log score of the Seg-Phase-1 segments apart, and the gain of each join of two
        or more of them into a title, as a weight table over the segments."""
        assert self.titles is not None
        scores = [self._unit_score(words[a:b]) for a, b in units]
        longest = self.titles.max_words
        table = []
        for i in range(len(units) - 1):
            row = []
            for j in range(i + 2, len(units) + 1):
                a, b = units[i][0], units[j - 1][1]
                if b - a > longest:
                    break
                span = words[a:b]
                if " ".join(span) in self.titles:
                    boost = self._boost(span)
                    if boost is not None:
                        row.append((j, boost - math.fsum(scores[i:j])))
            table.append(row)
        return math.fsum(scores), table

    def _ranked(self, words: tuple[str, ...], k: int) -> list[tuple[float, tuple[int, ...]]]:
        if not self.wiki:
            return kbest_breaks(self.phase1_table(words), len(words), k)
        units = break_spans(self._phase1(words))
        base, table = self.phase2_table(words, units)
        ranked = []
        for gain, joins in kbest_breaks(table, len(units), k):
            breaks = [0] * (len(words) - 1)
            for (_, end), brk in zip(units, joins, strict=False):
                breaks[end - 1] = brk
            ranked.append((base + gain, tuple(breaks)))
        return ranked

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        check_k(k)
        words = normalize(query)
        return [(Segmentation._trusted(words, b), s) for s, b in self._ranked(words, k)]

    def segment(self, query: Query) -> Segmentation:
        words = normalize(query)
        return Segmentation._trusted(words, self._ranked(words, 1)[0][1])

    def score(self, segmentation: Segmentation) -> float | None:
        """The score :meth:`rank` gives a segmentation, ``None`` for one it does not list."""
        words, breaks = segmentation.words, segmentation.breaks
        if not self.wiki:
            return _table_score(self.phase1_table(words), breaks)
        phase1 = self._phase1(words)
        if any(b and not b1 for b1, b in zip(phase1, breaks, strict=True)):
            return None  # not a coarsening of the Seg-Phase-1 segmentation
        units = break_spans(phase1)
        base, table = self.phase2_table(words, units)
        joins = [breaks[end - 1] for _, end in units[:-1]]
        gain = _table_score(table, joins)
        return None if gain is None else base + gain

    def nested_tree(self, words: tuple[str, ...]) -> NestedSegmentation:
        """Paper 000's nested output: a binary tree whose lowest joins are inside Seg-Phase-1
        segments, then inside Seg-Phase-2 segments, then between them."""
        if len(words) == 1:
            return NestedSegmentation.from_tree(words[0])
        phase1 = self._phase1(words)
        phase2 = self._ranked(words, 1)[0][1]
        strengths = []
        for g in range(len(words) - 1):
            level = phase1[g] + phase2[g]  # 0 inside both, 1 between joined segments, 2 apart
            pair = words[g : g + 2]
            whole = self.log.count(pair)
            ratio = self._ratio(pair, 1, whole) if whole else 0.0
            strengths.append(level + 1 / (1 + ratio))
        return merge_tree(words, strengths)

    def __repr__(self) -> str:
        return f"<QueryLogSegmenter {self.spec} on {self.log!r}>"
