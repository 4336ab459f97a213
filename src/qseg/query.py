"""Query normalization: the one function that turns user text into the words qseg works on.

A query is lower-cased and split on whitespace. Apostrophes, hyphens, periods, digits and ``&``
stay inside words (the Webis corpus has ``u.s.``, ``x-ray``, ``mother's``). The four characters
that the text forms of a segmentation reserve -- ``|``, ``"``, ``(`` and ``)`` -- separate words
like whitespace, so that every normalized query round-trips through every text form.
Non-ASCII text is brought to Unicode NFKC form first (full-width letters, ligatures), and its
invisible format characters (Unicode category Cf: zero-width space and joiners, the soft
hyphen, the byte order mark editors leave at the start of files, bidirectional marks) are
dropped: pasted from a web page, ``\u200bnew york`` is ``new york``, not a first word that
looks like ``new`` and matches nothing.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from qseg._words import normal_words
from qseg.errors import QsegError

MAX_QUERY_WORDS = 1000
"""Longest query accepted. Decoding is linear in the query length, so the limit only guards
against runaway input (a whole document pasted as one line)."""

_RESERVED = str.maketrans({'"': " ", "|": " ", "(": " ", ")": " "})


class QueryError(QsegError):
    """A query that cannot be segmented (empty, longer than :data:`MAX_QUERY_WORDS`, or not
    Unicode text)."""


NORMALIZATION_VERSION = 2
"""The version of :func:`normalize`'s output: raise it with any change to it, so that caches
of normalized keys (the built-in stores) are built anew rather than reused."""


def words_of(text: str) -> list[str] | tuple[str, ...]:
    """The normalized words of any text (no length limit; may be empty)."""
    words = normal_words(text)
    if words is not None:
        return words
    if not text.isascii():
        # lower-casing can leave text that NFKC changes again, hence NFKC on both sides
        text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).lower())
        text = "".join(c for c in text if c.isascii() or unicodedata.category(c) != "Cf")
    return text.lower().translate(_RESERVED).split()


Query = str | Sequence[str]
"""A query as every segmenter takes it: text, or a list of its words."""


def normalize(text: Query) -> tuple[str, ...]:
    """Return the words of a query: NFKC, lower case, reserved characters as separators. A
    list of words is taken as the words joined by spaces."""
    if not isinstance(text, str):
        text = _joined(text)
    words = normal_words(text)
    if words is None:
        _check_unicode(text)
        words = tuple(words_of(text))
    if not words:
        raise QueryError("empty query: it has no words")
    if len(words) > MAX_QUERY_WORDS:
        raise QueryError(f"query has {len(words)} words; the limit is {MAX_QUERY_WORDS}")
    return words


def _check_unicode(text: str) -> None:
    """:class:`QueryError` for text that is not Unicode: a lone surrogate (what
    ``errors="surrogateescape"`` makes of bytes that are not UTF-8) has no UTF-8 form, so no
    store, table or kernel could look its word up."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QueryError(
            f"not Unicode text: a lone surrogate, U+{ord(text[exc.start]):04X}, at character "
            f"{exc.start} (bytes that were not UTF-8?)"
        ) from None


def _joined(words: object) -> str:
    """A word list's text, or :class:`QueryError` for anything else than text or words."""
    if (
        isinstance(words, Sequence)
        and not isinstance(words, bytes | bytearray)
        and all(isinstance(word, str) for word in words)
    ):
        return " ".join(words)
    raise QueryError(
        f"a query is text or a list of words (str), not {type(words).__name__}: {words!r:.60}"
    )


def normalize_key(text: str) -> str:
    """The normalized words of ``text`` joined by single spaces: the key of n-gram tables."""
    if normal_words(text) is not None:
        return text
    return " ".join(normalize(text))


def ngram_key(text: str) -> str | None:
    """The key of an n-gram read from a count file, or ``None`` if it is not a query n-gram.

    Web1T and similar files hold n-grams with punctuation tokens such as ``(`` or ``"``. An
    n-gram that contains one of the reserved characters ``|"()`` is not a query n-gram: its
    words would shift when normalized (``( new york`` would become the 2-gram ``new york``),
    so it is skipped rather than merged into another n-gram.
    """
    if normal_words(text) is not None:
        return text
    if any(c in text for c in '|"()'):
        return None
    return " ".join(normalize(text))
