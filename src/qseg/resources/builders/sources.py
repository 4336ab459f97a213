"""Inputs of ``qseg build``: what each kind of source file holds and how its lines are read.

- ``web1t``: a Google Web 1T 5-gram directory (``1gms/vocab.gz``, ``2gms/2gm-0000.gz`` ...,
  lines ``w1 ... wN<TAB>count``);
- ``counts``: files of ``ngram<TAB>count`` lines;
- ``text``: query logs or plain text, one query or sentence a line, optionally followed by
  ``<TAB>count``; every 1..N-gram of every line is counted.

N-gram keys follow :func:`qseg.query.ngram_key` (n-grams with ``|"()`` are skipped); lines of
text follow :func:`qseg.query.words_of`. Text with U+FFFD, the replacement character, is
refused: it marks text that an earlier step failed to decode.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qseg.errors import InputError, PathError, QsegError
from qseg.fileio import read_lines
from qseg.query import words_of

SOURCE_KINDS = ("web1t", "counts", "text")
_WEB1T_FILE = re.compile(r"(\d)gm-\d+(\.gz)?")


@dataclass(frozen=True)
class Source:
    """Validated input files of one build."""

    kind: str
    files: tuple[Path, ...]
    max_order: int

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "files": [str(f) for f in self.files]}


def _web1t_files(directory: Path, max_order: int) -> list[Path]:
    """The files of a Web1T directory for orders 1..max_order (those present, without gaps)."""
    files: list[Path] = []
    vocab = [directory / "1gms" / name for name in ("vocab.gz", "vocab")]
    found = [p for p in vocab if p.is_file()]
    if not found:
        raise QsegError(f"{directory}: not a Web1T directory (no 1gms/vocab.gz)")
    files.append(found[0])
    for order in range(2, max_order + 1):
        folder = directory / f"{order}gms"
        if not folder.is_dir():
            break  # the orders present, from 1 up without a gap
        parts = sorted(
            p
            for p in folder.iterdir()
            if (m := _WEB1T_FILE.fullmatch(p.name)) and int(m.group(1)) == order
        )
        if not parts:
            raise QsegError(f"{folder}: no {order}gm-NNNN files")
        files.extend(parts)
    return files


def resolve(kind: str, inputs: Sequence[str | Path], max_order: int) -> Source:
    """Check the inputs of a build and list its files."""
    if kind not in SOURCE_KINDS:
        raise QsegError(f"unknown source kind {kind!r}; choose from {', '.join(SOURCE_KINDS)}")
    if not 1 <= max_order <= 10:
        raise QsegError(f"`max_order` must be between 1 and 10, got {max_order}")
    if not inputs:
        raise QsegError("no input files given")
    paths = [Path(p) for p in inputs]
    for path in paths:
        if not path.exists():
            raise PathError(path, "no such file or directory")
    if kind == "web1t":
        if len(paths) != 1 or not paths[0].is_dir():
            raise QsegError("`source='web1t'` takes one Web1T directory")
        return Source(kind, tuple(_web1t_files(paths[0], max_order)), max_order)
    for path in paths:
        if path.is_dir():
            raise PathError(path, "is a directory; give the files")
    return Source(kind, tuple(paths), max_order)


def text_batches(
    files: Sequence[Path], batch_lines: int = 100_000
) -> Iterator[tuple[list[str], np.ndarray, int]]:
    """Normalized lines (words joined by spaces), their counts, and the bytes read so far.

    Blank lines are skipped; a bad count column or U+FFFD stops with the file and line.
    """
    lines: list[str] = []
    counts: list[int] = []
    done = 0
    for path in files:
        source = str(path)
        for lineno, line in read_lines(path):
            done += len(line) + 1
            text, tab, count = line.rpartition("\t")
            if tab:
                if not (count.isdigit() and count.isascii()):
                    raise InputError(
                        source,
                        lineno,
                        f"count {count!r} after the last tab is not a non-negative integer",
                    )
                value = int(count)
            else:
                text, value = line, 1
            if "\ufffd" in text:
                raise InputError(
                    source,
                    lineno,
                    "U+FFFD replacement character: text damaged by an earlier decoding",
                )
            words = words_of(text)
            if not words or not value:
                continue
            lines.append(" ".join(words))
            counts.append(value)
            if len(lines) >= batch_lines:
                yield lines, np.array(counts, dtype=np.uint64), done
                lines, counts = [], []
    if lines:
        yield lines, np.array(counts, dtype=np.uint64), done
