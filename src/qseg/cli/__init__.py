"""The ``qseg`` command line: one module per subcommand, each parsing its arguments and calling
the library.

Errors print one line ``qseg: error: ...`` naming the file and line where known, and exit with
status 2 for a usage error (an argument, option, spec or path) or 1 for bad data (a file's
content, a damaged store or model); a missing optional package names its extra (status 2).
Output that stdout refuses (a full disk) is one line too, status 1; output piped into a command
that stops reading early (``| head``) ends quietly with status 0.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import warnings
from collections.abc import Sequence
from importlib import import_module
from typing import IO, Any, TextIO

from qseg import signals
from qseg._version import VERSION
from qseg.cli.wording import for_command_line
from qseg.errors import DataError, QsegError, StyleHint, missing_extra

EXIT_USAGE = 2
"""A bad argument, option, spec or path given (argparse's status too)."""
EXIT_BAD_DATA = 1
"""Bad data: a file's or stream's content, a damaged store or model."""
COMMANDS = {
    "segment": ("segment", "segment queries"),
    "evaluate": ("evaluate", "score segmentation files or segmenters against human references"),
    "train": ("train", "train a supervised segmenter"),
    "tune": ("tune", "tune a method's parameters on references"),
    "select": ("select", "the queries a model is least sure of: the ones to annotate first"),
    "build": ("build", "build n-gram and title stores"),
    "store": ("store", "inspect or verify a store"),
    "ir-eval": (
        "ir_eval",
        "IR-based evaluation: oracle scores of quoted versions on a search engine",
    ),
    "agree": (
        "agree",
        "agreement of annotators: Krippendorff's alpha, S, biases (Ramanath et al. 2013)",
    ),
    "methods": ("methods", "list the segmentation methods (and which are trained first)"),
    "serve": ("serve", "serve the segmenters over HTTP (pip install 'qseg[serve]')"),
    "annotate": (
        "annotate",
        "annotate queries in the browser, flat and nested; agreement; export (qseg[serve])",
    ),
}
"""Subcommand -> (its module in this package, one line of help)."""


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; only the one ``argv`` names (all, without ``argv``)
    is configured in full, so a command imports no other command's module."""
    parser = argparse.ArgumentParser(
        prog="qseg", description="Web search query segmentation: segment, evaluate, train."
    )
    parser.add_argument("--version", action="version", version=f"qseg {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None) if argv is not None else None
    for name, (module, help) in COMMANDS.items():
        sub = commands.add_parser(name, help=help, description=help)
        if argv is None or name == chosen:
            import_module(f"{__name__}.{module}").configure(sub)
    return parser


def _mistyped(argv: Sequence[str]) -> str | None:
    """The error for a command that is none but close to one (``segmnet``), naming it;
    ``None`` otherwise (argparse answers everything else)."""
    given = next((a for a in argv if not a.startswith("-")), None)
    if given is None or given in COMMANDS:
        return None
    close = difflib.get_close_matches(given, COMMANDS, n=1, cutoff=0.6)
    if not close:
        return None
    return f"unknown command {given!r}; did you mean {close[0]!r}? (`qseg --help` lists them)"


class _OutputFailed(Exception):
    """stdout refused a write for another reason than a closed pipe (a full disk)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(error.strerror or str(error))


class _Output:
    """stdout as the commands write to it: a failed write is an :class:`_OutputFailed`, told
    apart from any other ``OSError`` (a closed pipe stays a ``BrokenPipeError``)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputFailed(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise _OutputFailed(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _drop_stdout() -> None:
    """Send what stdout still buffers to the null device, so that the flush at exit neither
    fails nor prints "Exception ignored" (Python's advice for ``BrokenPipeError``)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _flush_before_error(out: _Output) -> None:
    """What a command answered before its error goes out before the error's line: on one
    pipe (``2>&1``) the answers come first, whether Python buffers stdout or not."""
    try:
        out.flush()
    except (BrokenPipeError, _OutputFailed):
        _drop_stdout()


_shown = warnings.showwarning


def _noted(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A :class:`~qseg.errors.StyleHint` as the command line says things: one line
    ``qseg: note: ...`` on stderr; any other warning as Python shows it."""
    if issubclass(category, StyleHint):
        print(f"qseg: note: {message}", file=sys.stderr)
        return
    _shown(message, category, filename, lineno, file, line)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    out = _Output(sys.stdout)
    if (mistyped := _mistyped(argv)) is not None:
        print(f"qseg: error: {mistyped}", file=sys.stderr)
        return EXIT_USAGE
    try:
        args = build_parser(argv).parse_args(argv)  # a command's options may need its extra
        signals.install()
        with warnings.catch_warnings():
            warnings.showwarning = _noted
            args.run(args, out)
        out.flush()
    except _OutputFailed as exc:
        _drop_stdout()
        print(f"qseg: error: cannot write the output ({exc})", file=sys.stderr)
        return EXIT_BAD_DATA
    except QsegError as exc:
        _flush_before_error(out)
        print(f"qseg: error: {for_command_line(str(exc))}", file=sys.stderr)
        return EXIT_BAD_DATA if isinstance(exc, DataError) else EXIT_USAGE
    except ImportError as exc:
        missing = missing_extra(exc)
        if missing is None:
            raise
        print(f"qseg: error: {missing}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # output closed early, e.g. piped into `head`
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        signals.settle()
        print("qseg: interrupted", file=sys.stderr)
        return 130
    return 0
