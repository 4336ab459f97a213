"""The store format: round trips in both modes, quantization bounds, and damaged files."""

from __future__ import annotations

import json
import random
import re
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

from qseg.errors import PathError
from qseg.resources import NgramCounts, TitleSet
from qseg.resources._store import hash_keys
from qseg.resources.store import (
    FORMAT_VERSION,
    HEADER_REGION,
    MAGIC,
    Store,
    StoreError,
    StoreWriter,
    build_from_entries,
)


def random_entries(n: int, seed: int = 1) -> dict[str, int]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(2000)]
    entries = {}
    while len(entries) < n:
        words = rng.choices(vocab, k=rng.randint(1, 5))
        entries[" ".join(words)] = rng.choice([1, 2, 40, 977, 10**6, 23_135_851_162])
    return entries


@pytest.mark.parametrize("mode", ["exact", "compact"])
def test_round_trip_through_a_file(tmp_path, mode):
    entries = random_entries(5000)
    path = tmp_path / "counts.qseg"
    store = build_from_entries(entries, kind="counts", mode=mode, path=path)
    assert store.path == path and Store.is_store(path)
    reopened = Store.open(path)
    assert reopened.info == store.info
    assert reopened.info.entries == 5000
    assert reopened.info.max_words == 5
    keys = list(entries)
    values, found, _ = reopened.view.lookup_many(keys)
    assert found.all()
    expected = np.array([entries[k] for k in keys], dtype=np.float64)
    error = np.abs(values.astype(np.float64) - expected) / expected
    if mode == "exact":
        assert (values == expected).all()
    else:
        assert error.max() <= reopened.info.max_relative_error + 1e-12
        assert reopened.info.max_relative_error < 0.002
        assert (values[expected <= 40] == expected[expected <= 40]).all()  # small counts exact
    reopened.verify()


def test_exact_stores_have_no_false_positives_and_compact_ones_the_stated_rate(tmp_path):
    entries = random_entries(20000)
    absent = [f"absent {i} x" for i in range(200_000)]
    exact = build_from_entries(entries, kind="counts", mode="exact")
    compact = build_from_entries(entries, kind="counts", mode="compact")
    assert not exact.view.lookup_many(absent)[1].any()
    rate = compact.view.lookup_many(absent)[1].mean()
    assert compact.info.false_positive_rate < 3e-4
    assert rate <= 3 * compact.info.false_positive_rate


def test_prefixes_are_flagged_extendable_and_stored_without_a_value():
    counts = NgramCounts({"a b c d": 5, "a b": 2})
    assert counts.view.lookup("a b") == (True, 2, True)
    assert counts.view.lookup("a b c") == (True, 0, True)
    assert counts.view.lookup("a b c d") == (True, 5, False)
    assert "a b c" not in counts and counts.count("a b c") == 0 and len(counts) == 2


def test_compact_size_is_under_four_bytes_a_key():
    store = build_from_entries(random_entries(200_000), kind="counts", mode="compact")
    layout_bits = (
        store.header["layout"]["fingerprint_bits"] + store.header["layout"]["value_bits"] + 1
    )
    assert layout_bits == 30
    data_bytes = store.header["data_size"]
    assert data_bytes / store.info.keys < 4.0


def test_titles_compact_store_answers_membership(tmp_path):
    titles = [f"title {i}" for i in range(3000)]
    store = build_from_entries(
        dict.fromkeys(titles, 1), kind="titles", mode="compact", path=tmp_path / "t.qseg"
    )
    title_set = TitleSet.from_file(store.path)
    assert all(t in title_set for t in titles)
    assert len(title_set) == 3000
    with pytest.raises(StoreError, match="compact store keeps hashes"):
        list(title_set)


def test_a_titles_store_is_not_accepted_as_counts(tmp_path):
    path = tmp_path / "t.qseg"
    build_from_entries({"new york": 1}, kind="titles", path=path)
    with pytest.raises(StoreError, match="a store of titles, not of counts"):
        NgramCounts.from_file(path)


def test_hash_collisions_in_exact_stores_are_resolved_by_the_key_bytes():
    keys = ["a", "b", "c"]
    collide = int(hash_keys(["b"], 0)[0])
    with StoreWriter(None, kind="counts", mode="exact", n_keys=3, key_bytes=3) as writer:
        same = np.full(3, collide, dtype=np.uint64)  # three keys stored under b's hash
        writer.add(same, np.array([1, 2, 3], dtype=np.uint64), np.zeros(3, bool), keys)
        store = writer.finish()
    assert store.view.lookup("b") == (True, 2, False)  # found past "a" by comparing bytes
    assert store.view.lookup("a")[0] is False  # "a" hashes elsewhere


def test_writer_refuses_unsorted_or_too_many_entries():
    with (
        StoreWriter(None, kind="counts", mode="compact", n_keys=2) as writer,
        pytest.raises(StoreError, match="sorted by hash"),
    ):
        writer.add(np.array([5, 1], dtype=np.uint64), np.ones(2, np.uint64), np.zeros(2))
    with (
        StoreWriter(None, kind="counts", mode="compact", n_keys=1) as writer,
        pytest.raises(StoreError, match="more entries than the 1 announced"),
    ):
        writer.add(np.array([1, 5], dtype=np.uint64), np.ones(2, np.uint64), np.zeros(2))


def test_an_interrupted_build_leaves_nothing(tmp_path):
    path = tmp_path / "x.qseg"
    with pytest.raises(RuntimeError), StoreWriter(path, kind="counts", mode="exact", n_keys=1):
        raise RuntimeError("interrupted")
    assert list(tmp_path.iterdir()) == []


def test_an_interruption_while_arrays_view_the_buffer_stays_the_interruption(tmp_path):
    """Ctrl-C while a step works on the buffer: its arrays (kept by the traceback) still view
    it, so it cannot be closed yet; the caller sees the interruption, not a BufferError, and
    the temporary file is gone."""
    path = tmp_path / "x.qseg"
    with (
        pytest.raises(KeyboardInterrupt),
        StoreWriter(path, kind="counts", mode="exact", n_keys=1) as writer,
    ):
        view = writer._section("sizes")  # noqa: F841 - held, as an interrupted step's are
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def store_file(tmp_path):
    path = tmp_path / "s.qseg"
    build_from_entries(random_entries(1000), kind="counts", mode="compact", path=path)
    return path


def test_truncated_store_is_refused(store_file):
    data = store_file.read_bytes()
    store_file.write_bytes(data[:-100])
    with pytest.raises(StoreError, match="truncated store"):
        Store.open(store_file)


def test_wrong_version_is_refused(store_file):
    data = bytearray(store_file.read_bytes())
    struct.pack_into("<I", data, 8, FORMAT_VERSION + 1)
    store_file.write_bytes(bytes(data))
    with pytest.raises(StoreError, match=f"format version {FORMAT_VERSION + 1}; this qseg reads"):
        Store.open(store_file)


def test_corrupt_header_is_refused(store_file):
    data = bytearray(store_file.read_bytes())
    data[40] ^= 0xFF
    store_file.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="corrupt store header"):
        Store.open(store_file)


def test_not_a_store(tmp_path):
    path = tmp_path / "plain.txt"
    path.write_text("new york\t5\n")
    with pytest.raises(StoreError, match="not a qseg store"):
        Store.open(path)
    with pytest.raises(PathError, match="no such file"):
        Store.open(tmp_path / "missing.qseg")


def test_damaged_data_is_refused_on_open_up_to_the_verify_size(store_file):
    data = bytearray(store_file.read_bytes())
    data[HEADER_REGION + 3] ^= 0xFF
    store_file.write_bytes(bytes(data))
    message = f"{store_file}: section 'sizes' is damaged"
    with pytest.raises(StoreError, match=message):
        Store.open(store_file)  # small: verified on open
    store = Store.open(store_file, verify=False)  # the envelope and the header only
    with pytest.raises(StoreError, match=message):
        store.verify()
    with pytest.raises(StoreError, match=message):
        Store.open(store_file, verify=True)


def _patch_header(store_file, change) -> None:
    """Rewrite a store's JSON header (with a valid checksum) after ``change(header)``."""
    data = store_file.read_bytes()
    length = int.from_bytes(data[12:16], "little")
    header = json.loads(data[32 : 32 + length])
    change(header)
    body = json.dumps(header, sort_keys=True).encode()
    prefix = data[:12] + len(body).to_bytes(4, "little") + zlib.crc32(body).to_bytes(4, "little")
    patched = prefix + data[20:32] + body
    store_file.write_bytes(patched + data[len(patched) :])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda h: h.pop("entries"), "missing or malformed field"),
        (lambda h: h.update(max_words="x"), "longest key 'x' is not an integer"),
        (lambda h: h.update(max_words=10**30), "longest key"),
        (lambda h: h.update(unigram_total="x"), "1-gram total"),
        (lambda h: h["sections"].update(extra=[0, 1, 0]), "sections"),
        (lambda h: h["layout"].update(value_bits=40), "value bits 40"),
        (lambda h: h.update(max_relative_error=-1), "max relative error"),
    ],
)
def test_every_header_field_a_store_reads_is_checked(store_file, change, message):
    _patch_header(store_file, change)
    with pytest.raises(StoreError, match=f"damaged store header: .*{re.escape(message)}"):
        Store.open(store_file, verify=False)


def test_a_header_whose_sections_leave_the_file_is_refused(store_file):
    """A header with a valid checksum can still describe sections outside the data region
    (written by another tool, or damaged before its checksum was taken)."""
    data = store_file.read_bytes()
    length = int.from_bytes(data[12:16], "little")
    header = json.loads(data[32 : 32 + length])
    header["layout"]["n_keys"] *= 1000
    body = json.dumps(header, sort_keys=True).encode()
    prefix = data[:12] + len(body).to_bytes(4, "little") + zlib.crc32(body).to_bytes(4, "little")
    patched = prefix + data[20:32] + body
    store_file.write_bytes(patched + data[len(patched) :])
    with pytest.raises(StoreError, match=r"damaged store header: section '\w+' does not fit"):
        Store.open(store_file, verify=False)


def _reference_hash(key: str, seed: int) -> int:
    """The store's key hash written out: FNV-1a over the UTF-8 bytes, then MurmurHash3's
    64-bit finalizer (part of the file format: a change would silently break every store)."""
    state = 0xCBF29CE484222325 ^ seed
    for byte in key.encode("utf-8"):
        state = ((state ^ byte) * 0x100000001B3) % 2**64
    for shift, mult in ((33, 0xFF51AFD7ED558CCD), (33, 0xC4CEB9FE1A85EC53)):
        state ^= state >> shift
        state = (state * mult) % 2**64
    return state ^ (state >> 33)


def test_store_starts_with_magic_and_hashes_are_stable(store_file):
    data = store_file.read_bytes()
    assert data[:8] == MAGIC == b"QSEGSTOR" and data[-16:-8] == b"QSEGEND!"
    keys = ["a", "new york", "café münchen", "東京", ""]
    for seed in (0, 7):
        assert [int(h) for h in hash_keys(keys, seed)] == [_reference_hash(k, seed) for k in keys]


FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # files of at most 1 MiB
from qseg.errors import QsegError
from qseg.resources.store import build_from_entries
try:
    build_from_entries({f"w{i} x{i}": i + 1 for i in range(100_000)}, kind="counts",
                       path=sys.argv[1])
except QsegError as exc:
    print(exc)
"""


def test_a_store_that_does_not_fit_is_refused_before_it_is_mapped(tmp_path):
    """A file size limit stands in for a full disk: the space is reserved before the store is
    mapped for writing, so the build fails with one line instead of SIGBUS."""
    target = tmp_path / "big.qseg"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(target)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{target}: cannot reserve ")
    assert "(File too large)" in done.stdout
    assert list(tmp_path.iterdir()) == []
