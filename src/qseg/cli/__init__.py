"""The ``qseg`` command line: one module per subcommand, each parsing its arguments and calling
the library.

Errors in input (files, queries, method specs, models) print one line ``qseg: error: ...``
naming the file and line where known, and exit with status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from qseg import signals
from qseg.cli import agree, build, evaluate, ir_eval, methods, segment, store, train, tune
from qseg.errors import QsegError

EXIT_BAD_INPUT = 2
COMMANDS = (segment, evaluate, train, tune, build, store, ir_eval, agree, methods)


class _Version(argparse.Action):
    """``--version``, reading the installed version only when asked (it costs start-up)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import version

        parser.exit(message=f"qseg {version('qseg')}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qseg", description="Web search query segmentation: segment, evaluate, train."
    )
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    signals.install()
    try:
        args.run(args, sys.stdout)
        sys.stdout.flush()
    except QsegError as exc:
        print(f"qseg: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # output closed early, e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("qseg: interrupted", file=sys.stderr)
        return 130
    return 0
