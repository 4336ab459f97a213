"""Zip archives and ``.npy`` arrays read from files that may be damaged or crafted.

Everything an archive declares is checked before anything is unpacked, so that a damaged file
is refused with one message and a crafted one cannot make qseg allocate more than it holds:

- each member is named once, is not encrypted, is stored or deflated (what qseg and numpy
  write), and lies inside the archive; a stored one is as large as it says;
- the deflated members together unpack to at most :data:`MAX_UNPACKED` bytes, and a member is
  read in bounded chunks into a buffer of its declared size, never past it;
- an array's header is parsed without allocating anything, and its shape times its item size
  must be exactly the bytes that follow the header.

The module depends on nothing else in qseg, so that :mod:`qseg.fileio` can use it. Every
problem is an :class:`ArchiveError`, a ``ValueError`` whose one-line message says what is wrong;
the caller says where.
"""

from __future__ import annotations

import io
import math
import struct
import warnings
import zipfile
import zlib
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

MAX_UNPACKED = 256 << 20
"""The most the deflated members of one archive may unpack to: many times what the largest
model qseg ships unpacks to, and more than one carrying all 4.8 million DBpedia names."""

_CHUNK = 1 << 20
"""Bytes unpacked at a time: reading a member never holds more than its buffer and one chunk."""
_READ = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
_OTHER = {zipfile.ZIP_BZIP2: "bzip2", zipfile.ZIP_LZMA: "lzma"}
_ENCRYPTED = 0x1 | 0x40
"""General-purpose flag bits of traditional and strong encryption."""
_PATCHED = 0x20
_NPY_HEADER = 10_000
"""The longest array header read (numpy's own default bound)."""
_NPY_PREFIX = 12
"""Magic string, version and header length of a version 2 header."""

_DAMAGE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    struct.error,
    zlib.error,
    NotImplementedError,
    RuntimeError,
    OverflowError,
    UnicodeDecodeError,
)
"""What the ``zipfile`` module raises on damage it finds itself (bad magic numbers, offsets
before the start of the file, CRC mismatches, names that differ between the directory and
the member)."""


class ArchiveError(ValueError):
    """A damaged or crafted archive or array; the message says what, not where."""


def _reason(exc: BaseException) -> str:
    """An exception's message on one short line (numpy's and zipfile's may span lines or
    quote a whole header)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def open_zip(file: IO[bytes]) -> zipfile.ZipFile:
    """The archive in ``file`` with its central directory read (nothing unpacked yet)."""
    try:
        return zipfile.ZipFile(file)
    except _DAMAGE as exc:
        raise ArchiveError(_reason(exc)) from None


def checked_members(
    zf: zipfile.ZipFile, size: int, limit: int = MAX_UNPACKED
) -> dict[str, zipfile.ZipInfo]:
    """The members of an archive of ``size`` bytes by name, each checked before any is
    unpacked (see the module's description); ``limit``: the most the deflated ones may
    unpack to together."""
    found: dict[str, zipfile.ZipInfo] = {}
    unpacked = 0
    for info in zf.infolist():
        name = info.filename
        if name in found:
            raise ArchiveError(f"member {name!r} appears twice")
        if info.flag_bits & _ENCRYPTED:
            raise ArchiveError(f"member {name!r} is encrypted")
        if info.flag_bits & _PATCHED:
            raise ArchiveError(f"member {name!r} is compressed patch data")
        method = info.compress_type
        if method not in _READ:
            known = f" ({_OTHER[method]})" if method in _OTHER else ""
            raise ArchiveError(
                f"member {name!r} is compressed with method {method}{known}; only stored "
                "and deflated members are read"
            )
        if info.header_offset + info.compress_size > size:
            raise ArchiveError(f"member {name!r} declares more data than the archive holds")
        if method == zipfile.ZIP_STORED and info.file_size != info.compress_size:
            raise ArchiveError(
                f"member {name!r} is stored, yet declares {info.file_size:,} bytes in "
                f"{info.compress_size:,}"
            )
        if method == zipfile.ZIP_DEFLATED:
            unpacked += info.file_size
        found[name] = info
    if unpacked > limit:
        raise ArchiveError(
            f"its members declare {unpacked:,} bytes unpacked, more than the "
            f"{limit >> 20} MiB qseg reads"
        )
    return found


def read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytearray:
    """A member checked by :func:`checked_members`, unpacked in bounded chunks into a buffer
    of its declared size (its CRC checked by ``zipfile`` at the end); the caller names it in
    any error."""
    buffer = bytearray(info.file_size)
    view = memoryview(buffer)
    filled = 0
    try:
        with zf.open(info) as stream:
            while filled < len(buffer):
                chunk = stream.read(min(_CHUNK, len(buffer) - filled))
                if not chunk:
                    break
                view[filled : filled + len(chunk)] = chunk
                filled += len(chunk)
            stream.read(1)  # at the end: zipfile checks the CRC (also of an empty member)
    except _DAMAGE as exc:
        raise ArchiveError(f"damaged member ({_reason(exc)})") from None
    if filled < len(buffer):
        raise ArchiveError(f"damaged member (it ends after {filled:,} of {len(buffer):,} bytes)")
    return buffer


def read_npy(raw: bytes | bytearray, name: str) -> np.ndarray:
    """The array of ``.npy`` bytes (format version 1.0 or 2.0, no Python objects), its header
    checked against the bytes that follow it before anything is allocated."""
    import tokenize  # what numpy's repair of a Python 2 header may raise

    import numpy as np
    from numpy.lib import format as npy

    header = io.BytesIO(raw[: _NPY_PREFIX + _NPY_HEADER])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a header that needs numpy's Python 2 repair
            version = npy.read_magic(header)
            if version == (1, 0):
                read_header = npy.read_array_header_1_0
            elif version == (2, 0):
                read_header = npy.read_array_header_2_0
            else:
                raise ArchiveError(f"array {name!r}: .npy format version {version} is not read")
            shape, fortran, dtype = read_header(header, max_header_size=_NPY_HEADER)
    except ArchiveError:
        raise
    except (
        ValueError,
        TypeError,
        SyntaxError,
        tokenize.TokenError,
        RecursionError,
        MemoryError,
        Warning,
    ) as exc:
        raise ArchiveError(f"array {name!r}: bad header ({_reason(exc)})") from None
    if dtype.hasobject:
        raise ArchiveError(f"array {name!r} holds Python objects")
    if dtype.itemsize == 0 or any(d < 0 for d in shape):
        raise ArchiveError(f"array {name!r}: bad header (dtype {dtype}, shape {shape})")
    start = header.tell()
    count, held = math.prod(shape), len(raw) - start
    if count * dtype.itemsize != held:
        raise ArchiveError(
            f"array {name!r}: its header declares {count:,} items of {dtype.itemsize} bytes "
            f"(shape {shape}), but {held:,} bytes follow it"
        )
    flat = np.frombuffer(raw, dtype, count, start) if count else np.empty(0, dtype)
    array = flat.reshape(shape[::-1]).transpose() if fortran else flat.reshape(shape)
    return array.copy(order="K")  # its own writable memory, not the member's buffer


def read_npz(
    file: IO[bytes],
    names: Sequence[str],
    limit: int = MAX_UNPACKED,
    optional: Sequence[str] = (),
) -> dict[str, np.ndarray]:
    """The named arrays of an ``.npz`` archive (numpy's ``savez``) in ``file``, and those of
    ``optional`` it holds, every member checked by :func:`checked_members` and every array by
    :func:`read_npy`."""
    size = file.seek(0, io.SEEK_END)
    file.seek(0)
    with open_zip(file) as zf:
        members = checked_members(zf, size, limit)
        arrays = {}
        for name in (*names, *optional):
            info = members.get(f"{name}.npy")
            if info is None:
                if name in optional:
                    continue
                raise ArchiveError(f"no array {name!r}")
            arrays[name] = read_npy(read_member(zf, info), name)
    return arrays
