"""Reading text input line by line with errors that name the file and line.

Every reader in qseg goes through :func:`read_lines`, so invalid UTF-8, binary data and
missing files are reported the same way everywhere.
"""

from __future__ import annotations

import glob
import gzip
import io
import os
import re
import shutil
import tempfile
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, BinaryIO, TextIO, cast

from qseg.errors import InputError, PathError

StrPath = str | os.PathLike[str]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


NEW_FILE_MODE = 0o666 & ~_umask()
"""The mode of a new file under the process's umask, read once at import: reading the umask
means setting it, which would race other threads if done at each write."""


def open_binary(path: StrPath) -> BinaryIO:
    """A file opened for reading bytes (a ``.gz`` one decompressed), or one line naming it
    and why it cannot be."""
    path = Path(path)
    try:
        if path.suffix == ".gz":
            return gzip.open(path, "rb")  # type: ignore[return-value]  # a GzipFile: binary I/O
        return path.open("rb")
    except FileNotFoundError:
        raise PathError(path, "no such file") from None
    except IsADirectoryError:
        raise PathError(path, "is a directory, not a file") from None
    except PermissionError:
        raise PathError(path, "permission denied") from None


_BLOCK = 1 << 20
MAX_LINE_BYTES = 16 << 20
"""Longest line accepted (16 MiB): longer lines are refused, as they come from binary files."""


def _decode_block(raw: bytes, source: str, first_lineno: int) -> list[str]:
    """Decode a block of whole lines at once; on failure find the offending line."""
    if b"\x00" not in raw:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            lines = text.split("\n")
            if "\r" in text:
                lines = [line.removesuffix("\r") for line in lines]
            return lines
    for offset, line in enumerate(raw.split(b"\n")):
        decode_line(line, source, first_lineno + offset)
    raise AssertionError("unreachable: block failed to decode but no line did")


def decode_line(raw: bytes, source: str, lineno: int) -> str:
    """Decode one line (without its line ending) as UTF-8, naming the line if it is not."""
    if b"\x00" in raw:
        raise InputError(source, lineno, "binary data (NUL byte); expected UTF-8 text")
    try:
        return raw.decode("utf-8").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise InputError(
            source, lineno, f"invalid UTF-8 at byte {exc.start}; input must be UTF-8 encoded"
        ) from None


def iter_stream(stream: BinaryIO, source: str) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line of a binary stream, without line endings.

    Lines are decoded a block at a time (fast); a line with invalid UTF-8 or a NUL byte raises
    an :class:`InputError` naming it. A UTF-8 byte order mark at the start is dropped.
    """
    lineno = 1
    pending = b""
    buffered = cast(io.BufferedIOBase, stream)  # a file or gzip stream: both have read1
    try:
        while True:
            block = buffered.read1(_BLOCK)
            if not block:
                break
            block = pending + block
            cut = block.rfind(b"\n")
            if cut < 0:
                if len(block) > MAX_LINE_BYTES:
                    raise InputError(
                        source, lineno, f"line longer than {MAX_LINE_BYTES} bytes; not a text file?"
                    )
                pending = block
                continue
            pending = block[cut + 1 :]
            lines = _decode_block(block[:cut], source, lineno)
            if lineno == 1:
                lines[0] = lines[0].removeprefix("\ufeff")
            for line in lines:
                yield lineno, line
                lineno += 1
        if pending:
            (line,) = _decode_block(pending, source, lineno)
            yield lineno, line.removeprefix("\ufeff") if lineno == 1 else line
    except (OSError, EOFError, zlib.error) as exc:  # truncated or corrupt gzip, I/O failure
        raise InputError(source, None, f"cannot be read: {exc}") from None


def read_lines(path: StrPath) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for every line of a UTF-8 file (``.gz`` is decompressed)."""
    p = Path(path)
    with open_binary(p) as stream:
        yield from iter_stream(stream, str(p))


def split_fields(text: str, source: str, lineno: int, count: int) -> list[str]:
    """Split a tab-separated line into exactly ``count`` fields or raise naming the line;
    a cell that :func:`spreadsheet_cell` escaped is read as it was."""
    fields = text.split("\t")
    if len(fields) != count:
        raise InputError(
            source, lineno, f"expected {count} tab-separated fields, found {len(fields)}"
        )
    return [field[1:] if _ESCAPED.match(field) else field for field in fields]


_FORMULA = re.compile(r"'*[=+\-@]")
_ESCAPED = re.compile(r"'+[=+\-@]")


def spreadsheet_cell(cell: str) -> str:
    """``cell`` as a spreadsheet shows it as text: one beginning with ``=``, ``+``, ``-`` or
    ``@`` (after any quotes) would be run as a formula (OWASP's CSV injection), so it gets a
    leading ``'``, which :func:`split_fields` takes off again."""
    return "'" + cell if _FORMULA.match(cell) else cell


def cache_dir() -> Path:
    """Where qseg caches what it builds once: ``$QSEG_CACHE``, else ``$XDG_CACHE_HOME/qseg``,
    else ``~/.cache/qseg``."""
    if os.environ.get("QSEG_CACHE"):
        return Path(os.environ["QSEG_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "qseg"


@contextmanager
def _replacing(path: StrPath, binary: bool) -> Iterator[IO[Any]]:
    """A temporary file beside ``path`` that replaces it when the block ends well."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.fchmod(fd, NEW_FILE_MODE)  # mkstemp makes 0600; the result is an ordinary new file
    mark_live(fd)
    try:
        if binary:
            with os.fdopen(fd, "wb") as out:
                yield out
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
                yield out
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_write(path: StrPath) -> Iterator[TextIO]:
    """Write a text file so that readers see either the old file or the complete new one."""
    with _replacing(path, binary=False) as out:
        yield cast(TextIO, out)  # opened in text mode


def atomic_write_bytes(path: StrPath, data: bytes) -> None:
    """Write a binary file so that readers see either the old file or the complete new one."""
    with _replacing(path, binary=True) as out:
        out.write(data)


@contextmanager
def atomic_directory(path: StrPath) -> Iterator[Path]:
    """Fill a temporary folder beside ``path`` and move it into place when the block ends well."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        with live_folder(tmp):
            yield tmp
            if target.exists():
                shutil.rmtree(target)
            os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_npz(
    data: bytes, names: Sequence[str], what: str, optional: Sequence[str] = ()
) -> dict[str, Any]:
    """The named arrays of ``.npz`` bytes (and those of ``optional`` it holds), each checked to
    hold only finite numbers where it is a float array; ``ValueError`` naming ``what`` on any
    damage (a bad zip, a bad deflate stream, a missing array, NaN or infinity), found before
    anything is allocated where the file declares it (:mod:`qseg.archives`: a forged array
    shape, a zip bomb)."""
    import numpy as np

    from qseg.archives import ArchiveError
    from qseg.archives import read_npz as read_arrays

    try:
        arrays = read_arrays(io.BytesIO(data), names, optional=optional)
    except ArchiveError as exc:
        raise ValueError(f"not {what} ({exc})") from None
    for name, array in arrays.items():
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise ValueError(f"{what}: {name} holds NaN or infinite values")
    return arrays


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()
_HELD = threading.local()
"""Per thread, the lock files it holds (``_HELD.keys``): taking one again nests instead of
waiting on itself. Per thread, not per process: another thread of this process must wait for
the lock like another process does (flock alone would not make it: the holder's re-entry
would let it in)."""


def _thread_lock(key: str) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        return _THREAD_LOCKS.setdefault(key, threading.Lock())


@contextmanager
def file_lock(path: StrPath, waiting: Callable[[], object] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the block, so that processes and threads
    building the same file take turns: the first builds, the others find it built.
    ``waiting`` is called if another process or thread holds the lock. The lock file exists
    only while the lock is held: the holder removes it on release, and a process that locked
    a file since removed tries again (so two processes never both hold "the" lock). The
    operating system releases the lock of a killed process; its file is then reused by the
    next one."""
    import fcntl

    target = Path(path)
    key = os.path.abspath(target)
    held: set[str] = _HELD.__dict__.setdefault("keys", set())
    if key in held:  # this thread holds it already (a cache build that runs a store build)
        yield
        return
    told = False
    threads = _thread_lock(key)
    if not threads.acquire(blocking=False):
        if waiting is not None:
            waiting()
            told = True
        threads.acquire()
    try:
        while True:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                handle = open(target, "a+b")  # noqa: SIM115 - held open across the block
            except OSError as exc:
                raise PathError(target, f"cannot take the lock ({exc.strerror or exc})") from None
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if waiting is not None and not told:
                    waiting()
                    told = True
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                same = os.fstat(handle.fileno()).st_ino == os.stat(target).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()  # the file was removed by the holder we waited for: lock anew
        held.add(key)
        try:
            yield
        finally:
            held.discard(key)
            target.unlink(missing_ok=True)
            handle.close()
    finally:
        threads.release()


def mark_live(fd: int) -> None:
    """Mark an open temporary file or folder as being written, for as long as ``fd`` stays
    open: :func:`clear_leftovers` leaves it alone. (A shared lock: the writer's own; the
    cleaner's test for an exclusive one fails while any writer, in any process or thread,
    holds it, and succeeds once a killed writer's descriptors are gone.)"""
    import fcntl

    fcntl.flock(fd, fcntl.LOCK_SH)


@contextmanager
def live_folder(path: StrPath) -> Iterator[None]:
    """:func:`mark_live` for a temporary folder, for the block."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        mark_live(fd)
        yield
    finally:
        os.close(fd)


def _is_live(path: Path) -> bool:
    """Whether a writer holds :func:`mark_live` on ``path``."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def lock_path(path: StrPath) -> Path:
    """The lock file of everything that writes ``path``: ``.NAME.lock`` beside it."""
    target = Path(path)
    return target.with_name(f".{target.name}.lock")


def clear_leftovers(path: StrPath) -> list[Path]:
    """Remove what killed runs left beside ``path`` (``.NAME.*.tmp`` files and folders,
    ``.NAME.build-*`` folders) and return them. A file or folder that a live writer marks
    (:func:`mark_live`: every writer of qseg does) is never removed, whichever process or
    thread writes it. Call it holding :func:`lock_path`'s lock."""
    target = Path(path)
    mine = re.compile(rf"\.{re.escape(target.name)}\.(build-[a-z0-9_]+|[a-z0-9_]+(\.names)?\.tmp)")
    removed = []
    for item in target.parent.glob(f".{glob.escape(target.name)}.*"):
        if not mine.fullmatch(item.name) or _is_live(item):  # only what dead writers left
            continue
        if item.is_dir() and not item.is_symlink():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)
        removed.append(item)
    return removed


def check_output_file(path: StrPath, what: str = "output") -> Path:
    """Check, before any work, that a file can be written at ``path``: not a folder, under
    folders (existing ones writable, the others creatable). Raises :class:`PathError`."""
    target = Path(path)
    if target.is_dir():
        raise PathError(target, f"is a directory; the {what} must be a file path")
    if target.exists() and not target.is_file():
        raise PathError(
            target,
            f"is not a regular file (a device, FIFO or socket); the {what} must be a file path",
        )
    ancestor = target.parent
    while not ancestor.exists():
        if ancestor.is_symlink():  # a dangling link
            raise PathError(ancestor, "is a broken symbolic link")
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise PathError(ancestor, f"is not a directory, so the {what} {target} cannot be made")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise PathError(ancestor, f"is not writable, so the {what} {target} cannot be made")
    return target
