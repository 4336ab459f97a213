"""Stores built once into the cache folder and shared by every later process: the tag every
cache file's name carries, loading a verified store or building it under a lock beside it, in
memory (or a temporary folder) where the cache cannot be written, and the one line a build
says on stderr. The built-in resources (:mod:`.default`) and phrase lists
(:mod:`.phrase_list`) are built this way."""

from __future__ import annotations

import sys
import tempfile
import threading
from collections.abc import Callable
from functools import cache, wraps
from pathlib import Path
from typing import Any, TypeVar

from qseg._version import VERSION
from qseg.errors import CacheError
from qseg.fileio import cache_dir, clear_leftovers, file_lock, lock_path
from qseg.query import NORMALIZATION_VERSION
from qseg.resources.store import FORMAT_VERSION, Store, StoreError

T = TypeVar("T")


@cache
def build_tag() -> str:
    """What every cache file's name carries besides its source's name and version: the qseg
    release, the store format and the query normalization, so that an upgrade changing any of
    them builds anew instead of reusing a stale store."""
    return f"qseg{VERSION}-format{FORMAT_VERSION}-norm{NORMALIZATION_VERSION}"


def cached_from(source: dict[str, Any]) -> Callable[[Path], Store | None]:
    """:func:`cached_store`, also refusing a store whose header names another source (a file
    copied or renamed into the cache): it is built again rather than used."""

    def load(path: Path) -> Store | None:
        store = cached_store(path)
        return store if store is not None and store.header.get("source") == source else None

    return load


def cached_store(path: Path) -> Store | None:
    """A store built by an earlier process, its checksums verified, or ``None`` (absent, or
    damaged: build again, never use it)."""
    if not Store.is_store(path):
        return None
    try:
        return Store.open(path, verify=True)
    except StoreError:
        return None


def build_once(
    path: Path, load: Callable[[Path], T | None], build: Callable[[Path | None], T]
) -> T:
    """What ``load`` reads from the cache file ``path``, else what ``build(path)`` makes (and
    writes there) under a lock beside it: of processes and threads that start at once, one
    builds and the others wait and read it. Where the cache folder cannot be written,
    ``build(None)``: the same, in memory, for this process only."""
    if (cached := load(path)) is not None:
        return cached
    if (reason := _unwritable(path.parent)) is not None:
        _note_uncached(path.parent, reason)
        return build(None)
    with file_lock(lock_path(path), lambda: say(f"waiting for another process to build {path}")):
        if (cached := load(path)) is not None:
            return cached
        clear_leftovers(path)  # of a build that was killed
        return build(path)


def _unwritable(folder: Path) -> str | None:
    """Why the cache folder cannot be written (``None``: it can)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


_NOTED: set[Path] = set()


def _note_uncached(folder: Path, reason: str) -> None:
    """Say once a process that the cache cannot keep what is built."""
    if folder not in _NOTED:
        _NOTED.add(folder)
        say(
            f"the cache folder {folder} cannot be written ({reason}): the built-in resources "
            "are built in memory, again in every process; set QSEG_CACHE to a writable "
            "folder to build them once"
        )


def in_temporary_folder(build: Callable[[Path], Store], name: str) -> Store:
    """A store that is built from a file (not in memory) when the cache cannot be written:
    built in a temporary folder, then held in memory."""
    try:
        with tempfile.TemporaryDirectory(prefix="qseg-") as folder:
            return build(Path(folder) / name).in_memory()
    except OSError as exc:
        raise nowhere(exc) from None


def nowhere(exc: OSError) -> CacheError:
    """The error where nothing can be built to a file: no cache, no temporary folder."""
    return CacheError(
        f"neither the cache folder {cache_dir()} nor a temporary folder can be written "
        f"({exc.strerror or exc}): set QSEG_CACHE to a writable folder"
    )


def say(message: str) -> None:
    """A line on stderr about a first-use build (it happens once, and may take a while)."""
    print(f"qseg: {message}", file=sys.stderr, flush=True)


def once_a_process(function: Callable[[], T]) -> Callable[[], T]:
    """``functools.cache`` for the built-in resources, and one caller at a time: threads that
    ask at once get the one result (a build in memory, where the cache cannot be written,
    would otherwise run in each of them)."""
    cached = cache(function)
    lock = threading.Lock()

    @wraps(function)
    def once() -> T:
        with lock:
            return cached()

    once.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    return once
