"""What several subcommands parse alike: resource flags, model flags, named files, notes."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from qseg.errors import PathError, QsegError
from qseg.resources.bundle import Resources


def add_resource_flags(
    parser: argparse.ArgumentParser, probabilities: bool = True, querylog: bool = True
) -> None:
    group = parser.add_argument_group("resources (default: built-in Web1T counts, DBpedia names)")
    group.add_argument(
        "--ngrams", metavar="FILE", help="n-gram counts: a store, or ngram<TAB>count"
    )
    group.add_argument("--titles", metavar="FILE", help="Wikipedia titles: a store, or one a line")
    group.add_argument(
        "--verify",
        action="store_true",
        help="check every store's checksums on open, whatever its size (default: up to 64 MiB)",
    )
    if querylog:
        group.add_argument(
            "--query-log", metavar="FILE", help="a query log, one query a line (method querylog)"
        )
    if probabilities:
        group.add_argument(
            "--unigrams", metavar="FILE", help="word log10 probabilities (PMI), word<TAB>logp"
        )
        group.add_argument(
            "--bigrams", metavar="FILE", help="2-gram log10 probabilities (PMI), w1 w2<TAB>logp"
        )


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-other-resources",
        action="store_true",
        help="run a saved model on resources other than it was trained with",
    )


def resources(args: argparse.Namespace) -> Resources:
    return Resources.load(
        ngrams=args.ngrams,
        titles=args.titles,
        unigrams=getattr(args, "unigrams", None),
        bigrams=getattr(args, "bigrams", None),
        query_log=getattr(args, "query_log", None),
        verify=True if args.verify else None,
    )


def named_files(specs: Sequence[str]) -> dict[str, Path]:
    """``NAME=FILE`` arguments (or ``FILE``, named by its stem) as name -> path."""
    named: dict[str, Path] = {}
    for spec in specs:
        name, eq, path = spec.partition("=")
        if not eq:
            name, path = Path(spec).stem, spec
        if name in named:
            raise QsegError(f"two files are named {name!r}; use NAME=FILE")
        named[name] = Path(path)
    return named


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``1 query``, ``2 queries``: a count and its noun in the right number."""
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


def note(message: str) -> None:
    print(f"qseg: note: {message}", file=sys.stderr)


def at_least_one(value: int | None, flag: str) -> None:
    if value is not None and value < 1:
        raise QsegError(f"{flag} must be at least 1, got {value}")


def not_an_input(output: str, inputs: Iterable[str | None]) -> None:
    """A usage error if the output file is one of the inputs (by any name): writing it would
    replace what is being read."""
    if not Path(output).is_file():
        return
    for given in inputs:
        if given and Path(given).is_file() and os.path.samefile(given, output):
            raise PathError(output, "is also an input; the output must be another file")


def can_create(output: str, what: str) -> None:
    """Create and remove a file where ``output`` will be written (in its folder, or the
    nearest one that exists), so that a folder the system refuses files in (``/proc``, a
    read-only mount) is found before any work. The probe is named as the atomic writer names
    its temporary files, so a killed run's is cleared like theirs."""
    target = Path(output)
    folder = target.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{target.name}.", suffix=".tmp"):
            pass
    except OSError as exc:
        raise PathError(
            folder,
            f"cannot hold files ({exc.strerror or exc}), so the {what} {output} cannot be made",
        ) from None
