"""Immutable, memory-mapped stores of n-gram counts and title sets.

A store maps keys (normalized n-grams, words joined by single spaces) to a value: a count for
n-gram stores, membership for title stores. Every key also carries an *extendable* bit, set when
it is a proper prefix of a longer key, so that segmenters stop extending a candidate segment as
soon as no stored n-gram can follow. Proper prefixes of stored keys that have no value of their
own are stored with value 0.

Keys are placed by a 64-bit hash (see ``_store.pyx``): sorted by hash and grouped into 2^b
buckets by the hash's top b bits, with on average 8 to 16 keys a bucket. A one-byte size per
bucket and a 64-bit start index per 64 buckets locate a bucket's records.

Two modes:

- **exact**: per key its full 64-bit hash, its exact value, and its UTF-8 bytes, which every
  lookup compares. No false positives, exact counts.
- **compact**: per key a record of ``fingerprint_bits`` (default 16) hash bits that follow the
  bucket bits, ``value_bits`` for the value and the extendable bit, bit-packed. Counts are
  quantized on a log scale: ``value_bits`` = 13 gives 8,191 levels between 1 and the largest
  count; counts below ~1/step are exact, and the largest relative error over all stored counts
  is measured at build time and kept in the header. A key that is not stored is reported as
  present with probability (keys per bucket) x 2^-fingerprint_bits (the false-positive rate in
  the header); two stored keys that share bucket and fingerprint ("shadowed", counted in the
  header) return the first one's value. Records cost about 30 bits and the index under 1 bit,
  so about 3.9 bytes a key.

File layout (version 1): a 32-byte prefix (magic ``QSEGSTOR``, format version, header length,
header CRC-32, header region size), a JSON header, padding to 64 KiB, the data sections aligned
to 64 bytes, and a 16-byte footer (magic ``QSEGEND!`` and the file size). Opening reads only
the prefix, the header and the footer, checks magic, version, CRC and size, and memory-maps
the file read-only: nothing is read into memory, and processes that open the same file share
one copy in the page cache. The header must describe sections inside the data region
(:func:`check_header`); the compiled lookups never read outside a section whatever its bytes
say. ``verify`` recomputes the CRC-32 of every section, on open for stores of up to
:data:`VERIFY_ON_OPEN` bytes. Stores are written to a temporary file in the target folder and
renamed into place only when complete.

Why this module is long (about 770 lines): it is the store's format, the writer and the
reader of the same sections side by side, so that a change to the layout is made to both; the
compiled lookups are in ``_store.pyx`` and the bit packing in :mod:`.packed`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import mmap
import os
import struct
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Self, cast

import numpy as np

from qseg.errors import DataError, PathError
from qseg.fileio import NEW_FILE_MODE, StrPath, mark_live
from qseg.query import QueryError, normalize_key
from qseg.resources._store import StoreView, count_buckets, hash_keys, pack_compact

MAGIC = b"QSEGSTOR"
FOOTER_MAGIC = b"QSEGEND!"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIIIIQ")  # magic, version, header length, header crc, 0, region
_FOOTER = struct.Struct("<8sQ")
_ALIGN = 64
HEADER_REGION = 1 << 16
"""Bytes reserved for the prefix and the JSON header; the data sections start here."""
VERIFY_ON_OPEN = 64 << 20
"""Stores up to this size (64 MiB) have their checksums verified when opened (CRC-32 of that
much is quick next to a process's start); larger ones only on request."""
EXT_BIT = np.uint64(1 << 63)
KINDS = ("counts", "titles")
MODES = ("exact", "compact")
DEFAULT_FINGERPRINT_BITS = 16
DEFAULT_COUNT_BITS = 13
MAX_VALUE_BITS = 24
"""The most count bits of a compact store: its decode table has 2^bits entries (128 MiB)."""


class StoreError(DataError):
    """A store that cannot be built or opened."""


def _align(offset: int) -> int:
    return (offset + _ALIGN - 1) // _ALIGN * _ALIGN


def bucket_bits_for(n_keys: int) -> int:
    """b with 2^b buckets holding 8 to 16 keys each (at least 2 buckets)."""
    return max(1, math.floor(math.log2(max(n_keys, 16) / 8)))


@dataclass(frozen=True)
class Quantizer:
    """Log-scale count codes: 0 for 0, 1 + round(ln(count) / step) otherwise."""

    bits: int
    step: float

    @classmethod
    def for_max(cls, bits: int, max_count: int) -> Quantizer:
        levels = (1 << bits) - 2
        return cls(bits, math.log(max_count) / levels if max_count > 1 else 1.0)

    def encode(self, counts: np.ndarray) -> np.ndarray:
        codes = np.zeros(len(counts), dtype=np.uint64)
        positive = counts > 0
        codes[positive] = 1 + np.rint(np.log(counts[positive].astype(np.float64)) / self.step)
        return codes

    def table(self) -> np.ndarray:
        """Decoded count of every code (those past 2^63 held there: a store of counts up to 1,
        whose step is 1, has codes no count reaches)."""
        codes = np.arange(1 << self.bits, dtype=np.float64)
        exponents = np.minimum((codes - 1) * self.step, 63 * math.log(2))
        decoded = np.rint(np.exp(exponents)).astype(np.uint64)
        decoded[0] = 0
        return decoded


class StoreWriter:
    """Fills a store from batches of entries sorted by hash; see the module docstring.

    ``path=None`` builds in anonymous memory. Otherwise the store is written to a temporary
    file beside ``path`` and renamed into place by :meth:`finish`; :meth:`abort` (or leaving a
    ``with`` block by an exception) removes the temporary file.
    """

    def __init__(
        self,
        path: StrPath | None,
        *,
        kind: str,
        mode: str,
        n_keys: int,
        key_bytes: int = 0,
        max_value: int = 1,
        fingerprint_bits: int = DEFAULT_FINGERPRINT_BITS,
        value_bits: int | None = None,
        seed: int = 0,
        header: dict[str, Any] | None = None,
        count_step: float | None = None,
    ) -> None:
        """``count_step``: the quantizer's step (a compact store written again from its
        codes, :mod:`.packed`); by default it is made for ``max_value``."""
        if kind not in KINDS:
            raise StoreError(f"store kind must be one of {KINDS}, not {kind!r}")
        if mode not in MODES:
            raise StoreError(f"store mode must be one of {MODES}, not {mode!r}")
        if value_bits is None:
            value_bits = DEFAULT_COUNT_BITS if kind == "counts" else 1
        bucket_bits = bucket_bits_for(n_keys)
        if mode == "compact" and not (
            fingerprint_bits >= 1
            and bucket_bits + fingerprint_bits <= 64
            and fingerprint_bits + value_bits + 1 <= 57
        ):
            raise StoreError(f"{fingerprint_bits} fingerprint bits do not fit the record")
        self.path = None if path is None else Path(path)
        self.kind, self.mode, self.n_keys = kind, mode, n_keys
        self.seed = seed
        self.quantizer = (
            Quantizer(value_bits, count_step)
            if count_step is not None
            else Quantizer.for_max(value_bits, max(max_value, 1))
        )
        self.layout: dict[str, Any] = {
            "exact": mode == "exact",
            "seed": seed,
            "n_keys": n_keys,
            "bucket_bits": bucket_bits,
        }
        offset = 0
        if mode == "compact":
            self.layout |= {"fingerprint_bits": fingerprint_bits, "value_bits": value_bits}
        sections = section_sizes(self.layout, key_bytes)
        self.section_sizes = sections
        for name, size in sections.items():
            self.layout[name] = offset
            offset = _align(offset + size)
        self.data_size = offset
        self.header = dict(header or {})
        self._tmp: Path | None = None
        if self.path is None:
            self._buffer = mmap.mmap(-1, max(self.data_size, 1))
            self._array = np.frombuffer(self._buffer, dtype=np.uint8)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(
                prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
            )
            mark_live(fd)
            self._tmp = Path(tmp)
            self._file = os.fdopen(fd, "r+b")
            self._reserve(HEADER_REGION + self.data_size + _FOOTER.size)
            self._buffer = mmap.mmap(self._file.fileno(), 0)
            whole = np.frombuffer(self._buffer, dtype=np.uint8)
            self._array = whole[HEADER_REGION : HEADER_REGION + self.data_size]
        self._written = 0
        self._key_bytes_written = 0
        self._last_hash = -1
        self._entries = 0
        self._max_error = 0.0
        self._shadowed = 0
        self._last_fp_key = -1

    def _reserve(self, total: int) -> None:
        """Give the file its size and its disk blocks before it is mapped: writing through a
        mapping into a sparse file on a full disk kills the process with SIGBUS, where a
        reservation fails here with an error."""
        try:
            self._file.truncate(total)
            try:
                os.posix_fallocate(self._file.fileno(), 0, total)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # no fallocate there
                    raise
        except OSError as exc:
            self._file.close()
            assert self._tmp is not None
            self._tmp.unlink(missing_ok=True)
            raise PathError(
                self.path or "store",
                f"cannot reserve {total:,} bytes for the store ({exc.strerror or exc})",
            ) from None

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, exc_type: object, *_: object) -> None:
        if exc_type is not None:
            self.abort()

    def _section(self, name: str, dtype: type = np.uint8) -> np.ndarray:
        start = self.layout[name]
        return self._array[start : start + self.section_sizes[name]].view(dtype)

    def add(
        self,
        hashes: np.ndarray,
        values: np.ndarray,
        extendable: np.ndarray,
        keys: Sequence[str] | Any = None,
        *,
        coded: bool = False,
    ) -> None:
        """Append entries whose hashes continue the sorted order.

        Exact stores need the keys: a sequence of ``str`` or a pyarrow string array. ``coded``:
        the values of a compact store are already its value codes.
        """
        n = len(hashes)
        if n == 0:
            return
        hashes = np.ascontiguousarray(hashes, dtype=np.uint64)
        values = np.ascontiguousarray(values, dtype=np.uint64)
        ext = np.ascontiguousarray(extendable, dtype=np.uint8)
        if self._written + n > self.n_keys:
            raise StoreError(f"more entries than the {self.n_keys} announced")
        if np.any(hashes[1:] < hashes[:-1]) or int(hashes[0]) < self._last_hash:
            raise StoreError("entries must arrive sorted by hash")
        if np.any(values >= EXT_BIT):
            raise StoreError("values must be below 2^63")
        sizes = self._section("sizes")
        if self.mode == "exact":
            if keys is None or len(keys) != n:
                raise StoreError("an exact store needs the key of every entry")
            first = self._written
            self._section("hashes", np.uint64)[first : first + n] = hashes
            self._section("values", np.uint64)[first : first + n] = values | (
                ext.astype(np.uint64) << np.uint64(63)
            )
            ends, blob = _utf8_column(keys)
            offsets = self._section("key_offsets", np.uint64)
            offsets[first + 1 : first + n + 1] = self._key_bytes_written + ends
            start = self.layout["key_bytes"] + self._key_bytes_written
            self._array[start : start + len(blob)] = blob
            self._key_bytes_written += len(blob)
            overflow = count_buckets(sizes, hashes, 64 - self.layout["bucket_bits"])
        else:
            codes = values if coded else self.quantizer.encode(values)
            positive = values > 0
            if positive.any() and not coded:
                decoded = self.quantizer.table()[codes[positive]].astype(np.float64)
                actual = values[positive].astype(np.float64)
                self._max_error = max(
                    self._max_error, float(np.max(np.abs(decoded - actual) / actual))
                )
            bucket_fp = hashes >> np.uint64(
                64 - self.layout["bucket_bits"] - self.layout["fingerprint_bits"]
            )
            same = bucket_fp[1:] == bucket_fp[:-1]
            self._shadowed += int(same.sum()) + int(int(bucket_fp[0]) == self._last_fp_key)
            self._last_fp_key = int(bucket_fp[-1])
            overflow = pack_compact(
                self._section("records"),
                sizes,
                hashes,
                codes,
                ext,
                self._written,
                64 - self.layout["bucket_bits"],
                64 - self.layout["bucket_bits"] - self.layout["fingerprint_bits"],
                (1 << self.layout["fingerprint_bits"]) - 1,
                self.layout["value_bits"],
                self.layout["fingerprint_bits"] + self.layout["value_bits"] + 1,
            )
        if overflow >= 0:
            raise StoreError(f"bucket {overflow} holds over 255 keys; the hash is degenerate")
        self._entries += int(np.count_nonzero(values))
        self._written += n
        self._last_hash = int(hashes[-1])

    def abort(self) -> None:
        """Discard the store being built. Arrays of the step that was interrupted (its
        traceback keeps them) may still view the buffer: it then goes with them, and the
        interruption is what the caller sees, not an error of closing the buffer."""
        try:
            with contextlib.suppress(BufferError):
                self._close()
        finally:
            if self._tmp is not None:
                self._tmp.unlink(missing_ok=True)
                self._tmp = None

    def _close(self) -> None:
        self._array = None  # type: ignore[assignment]
        if self.path is not None and not self._file.closed:
            self._file.close()  # the buffer keeps its own handle of the file
        if not self._buffer.closed:
            self._buffer.close()

    def finish(self) -> Store:
        """Seal the store (index, header, footer), move it into place and open it."""
        if self._written != self.n_keys:
            raise StoreError(f"{self._written} entries written, {self.n_keys} announced")
        self._write_bases()
        header = self._header()
        if self.path is None:
            view = StoreView(self._buffer, self.layout, _decode_table(header))
            return Store(view, header, StoreInfo.from_header(header, self.data_size), None)
        body = json.dumps(header, sort_keys=True).encode("utf-8")
        if _PREFIX.size + len(body) > HEADER_REGION:
            raise StoreError(f"store header of {len(body)} bytes does not fit {HEADER_REGION}")
        total = HEADER_REGION + self.data_size + _FOOTER.size
        self._buffer[: _PREFIX.size + len(body)] = (
            _PREFIX.pack(MAGIC, FORMAT_VERSION, len(body), zlib.crc32(body), 0, HEADER_REGION)
            + body
        )
        self._buffer[total - _FOOTER.size :] = _FOOTER.pack(FOOTER_MAGIC, total)
        self._buffer.flush()
        os.fsync(self._file.fileno())
        os.fchmod(self._file.fileno(), NEW_FILE_MODE)  # mkstemp made it private
        self._close()
        os.replace(self._tmp, self.path)  # type: ignore[arg-type]
        self._tmp = None
        return Store.open(self.path)

    def _write_bases(self) -> None:
        """Start index of every block of 64 buckets: the running sum of bucket sizes."""
        sizes = self._section("sizes").astype(np.uint64)
        blocks = np.add.reduceat(sizes, np.arange(0, len(sizes), 64))
        self._section("bases", np.uint64)[:] = np.concatenate(([0], np.cumsum(blocks)[:-1]))

    def _header(self) -> dict[str, Any]:
        header = {
            "kind": self.kind,
            "mode": self.mode,
            "layout": self.layout,
            "sections": {
                name: [
                    self.layout[name],
                    size,
                    zlib.crc32(self._section(name)),  # type: ignore[arg-type]  # an ndarray is a buffer
                ]
                for name, size in self.section_sizes.items()
            },
            "data_size": self.data_size,
            "entries": self._entries,
            "count_step": self.quantizer.step if self.mode == "compact" else None,
            "max_relative_error": self._max_error if self.mode == "compact" else 0.0,
            "shadowed_keys": self._shadowed if self.mode == "compact" else 0,
        }
        header.update(self.header)
        return header


def section_sizes(layout: dict[str, Any], key_bytes: int) -> dict[str, int]:
    """The size of every data section of a store with this layout, in file order."""
    n_keys, n_buckets = layout["n_keys"], 1 << layout["bucket_bits"]
    sizes = {"sizes": n_buckets, "bases": ((n_buckets + 63) // 64) * 8}
    if layout["exact"]:
        return sizes | {
            "hashes": n_keys * 8,
            "values": n_keys * 8,
            "key_offsets": (n_keys + 1) * 8,
            "key_bytes": key_bytes + 8,
        }
    record_bits = layout["fingerprint_bits"] + layout["value_bits"] + 1
    return sizes | {"records": (n_keys * record_bits + 7) // 8 + 8}


def _int(value: Any, low: int, high: int, what: str) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ValueError(f"{what} {value!r} is not an integer in [{low}, {high}]")
    return value


def check_header(header: Any) -> None:
    """Check that a header describes a store whose sections all lie inside its data region,
    so that a view of it reads nothing outside the file; ``ValueError`` says what is wrong.
    The cost does not depend on the data's size."""
    if not isinstance(header, dict):
        raise ValueError("not a JSON object")
    try:
        if header["kind"] not in KINDS or header["mode"] not in MODES:
            raise ValueError(f"kind {header['kind']!r} or mode {header['mode']!r} unknown")
        layout, listed = header["layout"], header["sections"]
        data_size = _int(header["data_size"], 0, 1 << 50, "data size")
        exact = header["mode"] == "exact"
        if layout["exact"] is not exact:
            raise ValueError("layout and mode disagree")
        _int(layout["n_keys"], 0, 1 << 40, "key count")
        buckets = _int(layout["bucket_bits"], 1, 40, "bucket bits")
        _int(layout["seed"], 0, (1 << 64) - 1, "seed")
        if not exact:
            fp = _int(layout["fingerprint_bits"], 1, 64 - buckets, "fingerprint bits")
            _int(layout["value_bits"], 1, min(MAX_VALUE_BITS, 56 - fp), "value bits")
            step = header["count_step"]
            if not isinstance(step, float | int) or not 0 < step < math.inf:
                raise ValueError(f"count step {step!r}")
        keys = _int(layout["n_keys"], 0, 1 << 40, "key count")
        _int(header["entries"], 0, keys, "entry count")
        _int(header["shadowed_keys"], 0, keys, "shadowed key count")
        _int(header.get("max_words", 0), 0, 1000, "longest key")
        _int(header.get("unigram_total", 0), 0, (1 << 64) - 1, "1-gram total")
        error = header["max_relative_error"]
        if not isinstance(error, float | int) or not 0 <= error < math.inf:
            raise ValueError(f"max relative error {error!r}")
        key_bytes = listed["key_bytes"][1] - 8 if exact else 0
        expected = section_sizes(layout, _int(key_bytes, 0, 1 << 50, "key bytes"))
        if not isinstance(listed, dict) or set(listed) != set(expected):
            raise ValueError(f"sections {sorted(listed)} are not {sorted(expected)}")
        for name, size in expected.items():
            offset = _int(layout[name], 0, data_size, f"section {name!r} offset")
            if offset % 8 or offset + size > data_size or listed[name][:2] != [offset, size]:
                raise ValueError(f"section {name!r} does not fit the data region")
            _int(listed[name][2], 0, (1 << 32) - 1, f"section {name!r} checksum")
    except (KeyError, TypeError, IndexError) as exc:
        raise ValueError(f"missing or malformed field ({type(exc).__name__}: {exc})") from None


def _utf8_column(keys: Sequence[str] | Any) -> tuple[np.ndarray, np.ndarray]:
    """End offsets (uint64, from 0) and concatenated UTF-8 bytes of a column of keys."""
    if hasattr(keys, "buffers"):  # a pyarrow string array: use its buffers as they are
        import pyarrow as pa

        column = cast(Any, keys).cast(pa.large_string())
        offsets = np.frombuffer(column.buffers()[1], dtype=np.int64)
        offsets = offsets[column.offset : column.offset + len(column) + 1]
        data = column.buffers()[2]
        raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
        blob = raw[offsets[0] : offsets[-1]]
        return (offsets[1:] - offsets[0]).astype(np.uint64), blob
    encoded = [key.encode("utf-8") for key in keys]
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.uint64, count=len(encoded)))
    return ends, np.frombuffer(b"".join(encoded), dtype=np.uint8)


def _decode_table(header: dict[str, Any]) -> np.ndarray:
    if header["mode"] == "exact":
        return np.zeros(1, dtype=np.uint64)
    layout = header["layout"]
    return Quantizer(layout["value_bits"], header["count_step"]).table()


@dataclass(frozen=True)
class StoreInfo:
    """What a store holds, from its header."""

    kind: str
    mode: str
    keys: int
    entries: int
    max_words: int
    unigram_total: int
    fingerprint_bits: int | None
    value_bits: int | None
    max_relative_error: float
    false_positive_rate: float
    shadowed_keys: int
    size_bytes: int
    source: dict[str, Any]

    @classmethod
    def from_header(cls, header: dict[str, Any], size: int) -> StoreInfo:
        layout = header["layout"]
        keys = layout["n_keys"]
        compact = header["mode"] == "compact"
        per_bucket = keys / (1 << layout["bucket_bits"])
        return cls(
            kind=header["kind"],
            mode=header["mode"],
            keys=keys,
            entries=header["entries"],
            max_words=header.get("max_words", 0),
            unigram_total=header.get("unigram_total", 0),
            fingerprint_bits=layout.get("fingerprint_bits"),
            value_bits=layout.get("value_bits"),
            max_relative_error=header["max_relative_error"],
            false_positive_rate=per_bucket / (1 << layout["fingerprint_bits"]) if compact else 0.0,
            shadowed_keys=header["shadowed_keys"],
            size_bytes=size,
            source=header.get("source", {}),
        )

    @property
    def bytes_per_key(self) -> float:
        return self.size_bytes / self.keys if self.keys else 0.0


class Store:
    """An open store: the compiled :class:`StoreView` plus its header."""

    def __init__(
        self,
        view: StoreView,
        header: dict[str, Any],
        info: StoreInfo,
        path: Path | None,
        region: int = HEADER_REGION,
    ) -> None:
        self.view = view
        self.header = header
        self.info = info
        self.path = path
        self.region = region

    @staticmethod
    def is_store(path: StrPath) -> bool:
        """Whether ``path`` starts with the store magic."""
        try:
            with open(path, "rb") as handle:
                return handle.read(len(MAGIC)) == MAGIC
        except OSError:
            return False

    @classmethod
    def open(cls, path: StrPath, verify: bool | None = None) -> Store:
        """Open a store file read-only and memory-mapped, checking its envelope and that its
        header describes sections inside the file. ``verify`` checks every section's CRC-32
        too: by default for stores of up to :data:`VERIFY_ON_OPEN` bytes (a few milliseconds),
        always with ``True``, never with ``False``. A damaged store raises :class:`StoreError`
        naming the file and what is damaged."""
        path = Path(path)
        try:
            store = cls._open(path)
        except OSError as exc:
            raise PathError(path, f"cannot read the store ({exc.strerror or exc})") from None
        if verify or (verify is None and store.info.size_bytes <= VERIFY_ON_OPEN):
            store.verify()
        return store

    @classmethod
    def _open(cls, path: Path) -> Store:
        if not path.exists():
            raise PathError(path, "no such file")
        if path.is_dir():
            raise PathError(path, "is a directory, not a store")
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            prefix = handle.read(_PREFIX.size)
            if len(prefix) < _PREFIX.size or prefix[:8] != MAGIC:
                raise StoreError(f"{path}: not a qseg store (bad magic)")
            _, version, length, crc, _, region = _PREFIX.unpack(prefix)
            if version != FORMAT_VERSION:
                raise StoreError(
                    f"{path}: store format version {version}; this qseg reads version "
                    f"{FORMAT_VERSION}. Rebuild the store with `qseg build`."
                )
            if region != HEADER_REGION or length > region - _PREFIX.size:
                raise StoreError(f"{path}: corrupt store prefix (header length {length})")
            body = handle.read(length)
            if len(body) != length or zlib.crc32(body) != crc:
                raise StoreError(f"{path}: corrupt store header (checksum mismatch)")
            try:
                header = json.loads(body)
                check_header(header)
            except ValueError as exc:  # json's errors are ValueErrors too
                raise StoreError(f"{path}: damaged store header: {exc}") from None
            expected = region + header["data_size"] + _FOOTER.size
            if size != expected:
                raise StoreError(
                    f"{path}: truncated store: {size} bytes where the header says {expected}"
                )
            handle.seek(size - _FOOTER.size)
            magic, recorded = _FOOTER.unpack(handle.read(_FOOTER.size))
            if magic != FOOTER_MAGIC or recorded != size:
                raise StoreError(f"{path}: corrupt store footer")
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        data = memoryview(mapped)[region : region + header["data_size"]]
        view = StoreView(data, header["layout"], _decode_table(header))
        store = cls(view, header, StoreInfo.from_header(header, size), path, region)
        view.origin = (str(path.resolve()), store.fingerprint)  # how a pickle reopens it
        return store

    def in_memory(self) -> Store:
        """The same store held in anonymous memory, for a file that does not stay (one built
        in a temporary folder because the cache folder cannot be written): it pickles as its
        bytes, not as a path that will be gone."""
        size = self.header["data_size"]
        buffer = mmap.mmap(-1, max(size, 1))
        buffer[:size] = self.view.buffer[:size]
        view = StoreView(buffer, self.header["layout"], _decode_table(self.header))
        return Store(view, self.header, StoreInfo.from_header(self.header, size), None)

    def verify(self) -> None:
        """Recompute the CRC-32 of every section; raises :class:`StoreError` on a mismatch.
        The sections are read where they are mapped, without a copy."""
        if self.path is None:
            return
        data = self.view.buffer
        for name, (offset, size, crc) in self.header["sections"].items():
            if zlib.crc32(data[offset : offset + size]) != crc:
                raise StoreError(f"{self.path}: section {name!r} is damaged (CRC-32 mismatch)")

    @property
    def fingerprint(self) -> str:
        """A digest of what the store holds: its kind, mode, layout and the CRC-32 of every data
        section, all computed when it was built. It does not depend on where the store lies:
        the same entries in an exact store give the same fingerprint whether read from a text
        file into memory or built into a store file by ``qseg build``. A compact store of
        them is another store (hashed keys, quantized counts) with another fingerprint.
        Opening costs nothing more."""
        header = self.header
        content = {
            "kind": header["kind"],
            "mode": header["mode"],
            "layout": header["layout"],
            "count_step": header.get("count_step"),
            "sections": {name: [size, crc] for name, (_, size, crc) in header["sections"].items()},
        }
        text = json.dumps(content, sort_keys=True).encode("utf-8")
        return hashlib.sha256(text).hexdigest()[:16]

    @property
    def description(self) -> str:
        """Where the store comes from, for messages: its file, or what it was built from."""
        if self.path is not None:
            return str(self.path)
        source = self.header.get("source", {})
        return str(source.get("file") or source.get("package") or "memory")

    def keys(self) -> Iterator[str]:
        """Every stored key, in hash order (exact stores only)."""
        if self.info.mode != "exact":
            raise StoreError("a compact store keeps hashes, not keys; build it exact to list keys")
        for r in range(self.info.keys):
            try:
                yield self.view.key_at(r)
            except ValueError as exc:
                raise StoreError(f"{self.description}: damaged store: {exc}") from None


class StoreBacked:
    """Base of :class:`NgramCounts` and :class:`TitleSet`: a store of one kind, opened from a
    store file or built in memory (exact) from a plain file. Read-only, hence shared rather than
    copied (``copy.deepcopy`` and ``sklearn.base.clone`` return the same object)."""

    kind: ClassVar[str]
    store: Store

    @property
    def fingerprint(self) -> str:
        """The store's content fingerprint (see :attr:`Store.fingerprint`)."""
        return self.store.fingerprint

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self

    def _value(self, text: str) -> int:
        """The value stored for ``text`` as given (internal stores keep marks such as ``(``),
        else for ``text`` normalized like a query; 0 if neither is stored."""
        value = int(self.view.lookup(text)[1])
        if value:
            return value
        try:
            key = normalize_key(text)
        except QueryError:  # no words
            return 0
        return int(self.view.lookup(key)[1]) if key != text else 0

    def _attach(self, store: Store) -> None:
        if store.info.kind != self.kind:
            where = store.path or "memory"
            raise StoreError(f"{where}: a store of {store.info.kind}, not of {self.kind}")
        self.store = store
        self.view = store.view
        self.info = store.info

    @classmethod
    def read_plain(cls, path: StrPath) -> tuple[dict[str, int], dict[str, Any]]:
        """Entries and source description of a plain file of this kind."""
        raise NotImplementedError

    @classmethod
    def from_file(cls, path: StrPath, verify: bool | None = None) -> Self:
        """A store file (memory-mapped; ``verify`` as in :meth:`Store.open`) or a plain file
        (``.gz`` too), built into memory."""
        if Store.is_store(path):
            store = Store.open(path, verify)
        else:
            entries, source = cls.read_plain(path)
            store = build_from_entries(entries, kind=cls.kind, source=source)
        backed = cls.__new__(cls)
        backed._attach(store)
        return backed


def build_from_entries(
    entries: dict[str, int],
    *,
    kind: str,
    mode: str = "exact",
    path: StrPath | None = None,
    source: dict[str, Any] | None = None,
    **options: Any,
) -> Store:
    """Build a store from in-memory ``key -> value`` entries (values 0 are dropped).

    Adds the proper prefixes of multiword keys (value 0) and sets the extendable bits.
    """
    values = {key: value for key, value in entries.items() if value > 0}
    extendable: set[str] = set()
    for key in values:
        if key.count(" ") >= 2:
            words = key.split(" ")
            extendable.update(" ".join(words[:end]) for end in range(2, len(words)))
    # the columns are made in the entries' order and put in hash order as arrays: a lookup
    # per key in the order of the hashes is a cache miss each (a second of a million keys)
    prefixes = [key for key in extendable if key not in values]
    keys = [*values, *prefixes]
    hashes = hash_keys(keys, options.get("seed", 0))
    order = np.argsort(hashes, kind="stable")
    sorted_keys = [keys[i] for i in order]
    counts = np.zeros(len(keys), dtype=np.uint64)
    counts[: len(values)] = np.fromiter(values.values(), dtype=np.uint64, count=len(values))
    ext = np.zeros(len(keys), dtype=np.bool_)
    if extendable:
        ext[:] = np.fromiter((k in extendable for k in keys), dtype=np.bool_, count=len(keys))
    header = {
        "max_words": max((k.count(" ") + 1 for k in values), default=0),
        "unigram_total": sum(v for k, v in values.items() if " " not in k),
        "source": source or {},
    }
    with StoreWriter(
        path,
        kind=kind,
        mode=mode,
        n_keys=len(keys),
        key_bytes=sum(len(k.encode("utf-8")) for k in keys),
        max_value=max(values.values(), default=1),
        header=header,
        **options,
    ) as writer:
        writer.add(hashes[order], counts[order], ext[order], sorted_keys)
        return writer.finish()
