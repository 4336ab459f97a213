"""gensim's ``Phrases`` as an external baseline, run on qseg's n-gram counts.

gensim (``gensim.models.phrases``) finds collocations by a greedy left-to-right pass that joins
two adjacent tokens when their score is above a threshold, with connector words (``of``,
``the``...) allowed inside a phrase. It is the one method here not decoded exactly: its
segmentation is gensim's own greedy joining, kept as it is because it is the baseline. Here its
vocabulary is the n-gram store itself (phrases are joined with a space, so a phrase is the
n-gram key of its words), so ``layers=2`` stacks a second pass that joins phrases into longer
ones, as gensim users do, from the same counts.

Scorers (gensim's): ``npmi`` (normalized PMI in [-1, 1], Bouma 2009) and ``default``
(Mikolov et al.: ``(count(ab) - min_count) * |vocabulary| / (count(a) count(b))``). The method's
defaults are not gensim's: gensim's default scorer divides by the product of two counts but
multiplies by the vocabulary size, not the corpus size, so its scale follows the counts; on
Web1T-sized counts (the built-in ones) no pair reaches gensim's threshold 10 (``new york``
scores 1.3e-05) and it joins nothing, exactly ``always-split``. NPMI is scale-free, and its
threshold 0 is independence: a pair is joined when its words occur together more often than
chance would have them. Connector words are on, as gensim's documentation says to set them for
English text. ``threshold`` left out is that neutral point of the scorer: 0 for ``npmi``,
gensim's 10 for ``default``.

As a ranking, gensim's segmentation scores 0 and every other one minus the sum of
``|score - threshold|`` over the gaps where it decides otherwise (a gap inside a phrase costs
its phrase's score; joining two words gensim cannot score costs -inf), so the next ones flip
the gaps closest to the threshold.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from qseg.query import Query, normalize
from qseg.resources.counts import NgramCounts
from qseg.segmentation import Segmentation
from qseg.segmenters.base import OneByOne
from qseg.segmenters.decoder import check_k, kbest_gaps
from qseg.segmenters.spec import Param, format_spec

SCORERS = ("npmi", "default")
NEUTRAL = {"npmi": 0.0, "default": 10.0}
"""The threshold of each scorer when none is given: npmi's independence, gensim's default."""
PARAMS = {
    "scoring": Param(str, "npmi", "gensim's scorer", SCORERS),
    "threshold": Param(
        float,
        None,
        "join above this score (none: 0 for npmi, whose scores lie in [-1, 1] and 0 is "
        "independence; gensim's 10 for default)",
    ),
    "min_count": Param(int, 5, "gensim's min_count (the default scorer subtracts it)"),
    "connectors": Param(bool, True, "gensim's English connector words may sit inside a phrase"),
    "layers": Param(int, 1, "passes: 2 joins phrases into longer ones"),
}


class PhrasesSegmenter(OneByOne):
    """Segments are the phrases gensim's ``Phrases`` forms from the query's words."""

    def __init__(
        self,
        counts: NgramCounts,
        scoring: str = "npmi",
        threshold: float | None = None,
        min_count: int = 5,
        connectors: bool = True,
        layers: int = 1,
    ) -> None:
        if scoring not in SCORERS:
            raise ValueError(f"scoring must be one of {', '.join(SCORERS)}, not {scoring!r}")
        neutral = threshold is None or threshold == NEUTRAL[scoring]
        threshold = NEUTRAL[scoring] if threshold is None else threshold
        if layers not in (1, 2):
            raise ValueError(f"layers must be 1 or 2, not {layers}")
        if min_count < 1:
            raise ValueError(f"min_count must be at least 1, not {min_count}")
        if math.isnan(threshold):
            raise ValueError("threshold must be a number, not NaN")
        if scoring == "npmi" and not -1 <= threshold <= 1:
            effect = "joins nothing" if threshold > 1 else "joins every pair with a count"
            raise ValueError(
                f"the npmi scorer scores in [-1, 1]; a threshold of {threshold} {effect} "
                "(try phrases(threshold=0.5), or phrases(scoring=default) for gensim's scorer)"
            )
        from gensim.models.phrases import ENGLISH_CONNECTOR_WORDS, Phrases

        self.counts, self.scoring, self.threshold = counts, scoring, threshold
        self.min_count, self.connectors, self.layers = min_count, connectors, layers
        self._phrases = Phrases(
            min_count=min_count,
            threshold=threshold,
            scoring=scoring,
            delimiter=" ",
            connector_words=ENGLISH_CONNECTOR_WORDS if connectors else frozenset(),
        )
        self._phrases.vocab = counts  # looked up with .get() and len(): the store serves both
        self._phrases.corpus_word_count = max(counts.unigram_total, 1)
        values = {
            "scoring": scoring,
            "threshold": None if neutral else threshold,
            "min_count": min_count,
            "connectors": connectors,
            "layers": layers,
        }
        self.spec = format_spec("phrases", PARAMS, values)

    def _analysis(
        self, words: tuple[str, ...], phrases: Any = None
    ) -> tuple[tuple[int, ...], list[float | None]]:
        """gensim's breaks, and for every gap it joined the score of the phrase that joined it
        (the last pass's)."""
        phrases = self._phrases if phrases is None else phrases
        tokens: list[tuple[str, float | None]] = [(w, None) for w in words]
        joined: list[float | None] = [None] * (len(words) - 1)
        for _ in range(self.layers):
            tokens = list(phrases.analyze_sentence([t for t, _ in tokens]))
            start = 0
            for token, score in tokens:
                size = token.count(" ") + 1
                if score is not None:
                    joined[start : start + size - 1] = [score] * (size - 1)
                start += size
        breaks = tuple(int(score is None) for score in joined)
        return breaks, joined

    def breaks_of(self, words: tuple[str, ...]) -> tuple[int, ...]:
        """gensim's segmentation of the words, as break bits."""
        return self._analysis(words)[0]

    def breaks_and_scores(self, words: tuple[str, ...]) -> tuple[tuple[int, ...], list[float]]:
        """gensim's breaks, and every score it compared with the threshold on the way: any
        threshold that none of these scores lies between gives the same breaks (gensim joins
        where a score is above it), so tuning need not try it."""
        compared: list[float] = []
        scorer = self._phrases.scoring

        def recorded(**counts: int) -> float:
            score = scorer(**counts)
            compared.append(score)
            return score

        phrases = copy.copy(self._phrases)  # this call's scorer; the segmenter's is shared
        phrases.scoring = recorded
        return self._analysis(words, phrases)[0], compared

    def segment(self, query: Query) -> Segmentation:
        words = normalize(query)
        return Segmentation._trusted(words, self.breaks_of(words))

    def rank(self, query: Query, k: int) -> list[tuple[Segmentation, float]]:
        check_k(k)
        words = normalize(query)
        chosen, joined = self._analysis(words)
        if_break, if_not = [], []
        for i, brk in enumerate(chosen):
            score = joined[i]  # inside a phrase: its score; else the pair's (-inf: no count)
            if score is None:
                score = self.pair_score(words[i], words[i + 1])
            cost = math.inf if not math.isfinite(score) else max(abs(score - self.threshold), 1e-12)
            if_break.append(0.0 if brk else -cost)
            if_not.append(-cost if brk else 0.0)
        ranked = kbest_gaps(if_break, if_not, k)
        return [(Segmentation._trusted(words, breaks), score) for score, breaks in ranked]

    def pair_score(self, a: str, b: str) -> float:
        """gensim's score of two adjacent words (-inf where a count is missing)."""
        count_a, count_b = self.counts.get(a), self.counts.get(b)
        count_ab = self.counts.get(f"{a} {b}")
        if not (count_a and count_b and count_ab):
            return -math.inf
        return float(
            self._phrases.scoring(
                worda_count=count_a,
                wordb_count=count_b,
                bigram_count=count_ab,
                len_vocab=len(self.counts),
                min_count=self.min_count,
                corpus_word_count=self._phrases.corpus_word_count,
            )
        )

    def __repr__(self) -> str:
        return f"<PhrasesSegmenter {self.spec}>"
