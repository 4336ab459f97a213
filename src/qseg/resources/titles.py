"""Wikipedia title sets: normalized titles, one membership test per candidate segment."""

from __future__ import annotations

from functools import cached_property

from qseg.errors import InputError
from qseg.fileio import StrPath, read_lines
from qseg.resources.counts import parse_ngram


class TitleSet(frozenset[str]):
    """A frozen set of titles, each normalized like a query and joined by single spaces.

    A ``frozenset`` subclass, so that the membership test segmenters run per candidate
    segment stays a C-level operation.
    """

    @classmethod
    def from_file(cls, path: StrPath) -> TitleSet:
        """Read one title a line."""
        source = str(path)
        titles = set()
        for lineno, line in read_lines(path):
            if "\t" in line:
                raise InputError(source, lineno, "expected one title a line, found a tab")
            titles.add(parse_ngram(line, source, lineno))
        if not titles:
            raise InputError(source, None, "no titles in file (it is empty)")
        return cls(titles)

    @cached_property
    def max_words(self) -> int:
        """Words in the longest title."""
        return max((t.count(" ") + 1 for t in self), default=0)

    @cached_property
    def extendable(self) -> frozenset[str]:
        """Multiword proper prefixes of titles (see :attr:`NgramCounts.extendable`)."""
        prefixes = set()
        for title in self:
            if title.count(" ") >= 2:
                words = title.split(" ")
                prefixes.update(" ".join(words[:end]) for end in range(2, len(words)))
        return frozenset(prefixes)
