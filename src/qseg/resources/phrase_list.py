"""A team's list of phrases (a catalog's names, product lines, brands) as a compact store:
built once into the cache from the file's bytes, memory-mapped after that, so a list of a
million phrases opens in milliseconds and every process of a service shares its pages.

The file has one phrase a line (``.gz`` too), normalized like a query. Blank lines and
phrases of one word (a word is never split anyway) are skipped; a line of more words than a
query may have is refused naming the line, as is a file that is not UTF-8 text.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from qseg.errors import InputError, PathError
from qseg.fileio import StrPath, cache_dir, open_binary, read_lines
from qseg.resources.built_once import build_once, build_tag, cached_from, say
from qseg.resources.counts import parse_ngram
from qseg.resources.store import Store, build_from_entries
from qseg.resources.titles import TitleSet

MAX_PHRASE_WORDS = 64
"""The most words of a listed phrase: the most a query segmented on the compiled path has."""


def read_phrase_file(path: StrPath) -> dict[str, int]:
    """The phrases of a file, each normalized like a query (see the module)."""
    source = str(path)
    phrases: dict[str, int] = {}
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        if "\t" in line:
            raise InputError(source, lineno, "expected one phrase a line, found a tab")
        phrase = parse_ngram(line, source, lineno)
        words = phrase.count(" ") + 1
        if words > MAX_PHRASE_WORDS:
            raise InputError(
                source,
                lineno,
                f"a phrase of {words} words; a phrase has at most {MAX_PHRASE_WORDS}",
            )
        if words > 1:
            phrases[phrase] = 1
    if not phrases:
        raise InputError(source, None, "no phrase of two words or more in the file")
    return phrases


def phrase_list(path: StrPath) -> TitleSet:
    """The phrases of ``path`` as a store, from the cache if this file's bytes were built
    before (``phrases-<digest>.qseg``), else built there now (a few seconds a million)."""
    source = Path(path)
    digest = hashlib.sha256()
    try:
        with open_binary(source) as stream:  # (a .gz one: its text, as it is read)
            while block := stream.read(1 << 20):
                digest.update(block)
    except OSError as exc:  # a damaged .gz, a read error
        raise PathError(source, f"cannot be read ({exc.strerror or exc})") from None
    fingerprint = digest.hexdigest()[:16]
    origin = {"phrases": fingerprint}

    def build(target: Path | None) -> Store:
        entries = read_phrase_file(source)
        say(f"building the phrase list of {source} (once: it is kept in the cache)")
        return build_from_entries(entries, kind="titles", path=target, source=origin)

    path_in_cache = cache_dir() / f"phrases-{fingerprint}-{build_tag()}.qseg"
    store = build_once(path_in_cache, cached_from(origin), build)
    listed = TitleSet.__new__(TitleSet)
    listed._attach(store)
    return listed
