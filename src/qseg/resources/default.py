"""The built-in default resources: Google Web1T counts as shipped by the ``wordsegment`` package.

``wordsegment`` (Grant Jenks, Apache-2.0) carries Peter Norvig's extracts of the Google Web 1T
5-gram corpus: 333,213 frequent words and 286,358 lines of frequent 2-grams with their Web1T
counts (258,437 distinct 2-grams once case variants are added up). Only 1- and 2-grams
exist there, so the default n-gram segmenters can form segments of at most two words.
For real work, build or load full counts and pass ``--ngrams``.

The first use builds an exact store from these files into the cache folder (``QSEG_CACHE``,
else ``$XDG_CACHE_HOME/qseg``, else ``~/.cache/qseg``); later processes memory-map it. Where
the folder cannot be written, the store is built in memory instead.
"""

from __future__ import annotations

import os
from functools import cache
from importlib import metadata
from importlib import resources as importlib_resources
from pathlib import Path

from qseg.resources.counts import NgramCounts, read_count_file
from qseg.resources.store import FORMAT_VERSION, Store, StoreError, build_from_entries


def cache_dir() -> Path:
    """Where built-in resources are cached."""
    if os.environ.get("QSEG_CACHE"):
        return Path(os.environ["QSEG_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "qseg"


def _wordsegment_counts() -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in ("unigrams.txt", "bigrams.txt"):
        path = importlib_resources.files("wordsegment").joinpath(name)
        for key, value in read_count_file(str(path))[0].items():
            counts[key] = counts.get(key, 0) + value
    return counts


@cache
def default_counts() -> NgramCounts:
    """Web1T 1-gram and 2-gram counts from ``wordsegment``, built once and memory-mapped."""
    version = metadata.version("wordsegment")
    path = cache_dir() / f"default-counts-wordsegment-{version}-format{FORMAT_VERSION}.qseg"
    if Store.is_store(path):
        try:
            return NgramCounts(store=Store.open(path))
        except StoreError:
            pass  # damaged cache: build it again
    entries = _wordsegment_counts()
    source = {"package": f"wordsegment {version}", "files": ["unigrams.txt", "bigrams.txt"]}
    try:
        store = build_from_entries(entries, kind="counts", path=path, source=source)
    except OSError:
        store = build_from_entries(entries, kind="counts", source=source)
    return NgramCounts(store=store)
