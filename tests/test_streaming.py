"""``qseg segment`` as a co-process and as a filter: every answer before the next query comes,
and one output line in each bad line's place (``--skip-bad-lines``), whatever the input is.

Each subprocess is read through a thread with a time limit, so that a regression (an answer
held back until more input comes) fails the test within seconds instead of hanging it.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
from helpers import assert_one_line_error, out, qseg

ENV = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
"""The environment of every run: output buffered as users have it (flushing is under test)."""
ANSWER_SECONDS = 30
"""Longest wait for one answer (the first includes start-up and loading the model)."""
QUERIES = ["new york yankees tickets", "q2\tcheap hotels", "x", "new york"]
DEFAULT_FIRST = "new york yankees|tickets"
NAIVE_FIRST = "new york|yankees|tickets"


def default_second() -> str:
    """The default model's second-best segmentation of the first query, from the library."""
    import qseg as api

    return api.segmenter().rank(QUERIES[0], 2)[1][0].to_pipe()


MIXED = [
    b"new york yankees tickets",
    b"",
    b"cheap \xff hotels",
    b"new\x00york",
    b"w " * 1001,
    b"a\tb\tc",
    b"   ",
    b"q8\tcheap hotels",
    b"york yankees",
    b"",
    b"x",
]
"""Every kind of bad line between good ones (lines 1, 8, 9 and 11)."""
SKIPPED = {
    2: "<stdin>:2: empty query: it has no words",
    3: "<stdin>:3: invalid UTF-8 at byte 6; input must be UTF-8 encoded",
    4: "<stdin>:4: binary data (NUL byte); expected UTF-8 text",
    5: "<stdin>:5: query has 1001 words; the limit is 1000",
    6: "<stdin>:6: expected `query` or `id<TAB>query`",
    7: "<stdin>:7: empty query: it has no words",
    10: "<stdin>:10: empty query: it has no words",
}
GOOD = [n for n in range(1, len(MIXED) + 1) if n not in SKIPPED]
REPORTS = [f"qseg: skipped {error}" for error in SKIPPED.values()]


class Segment:
    """``qseg segment FLAGS`` running with its output read line by line by a thread."""

    def __init__(self, *flags: Any, stdin: int | IO[bytes] | None = None, stderr: Any = None):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "qseg", "segment", *map(str, flags)],
            stdin=subprocess.PIPE if stdin is None else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if stderr is None else stderr,
            env=ENV,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.decode())
        self.lines.put(None)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self) -> str:
        """The next output line, without its newline; fails after :data:`ANSWER_SECONDS`."""
        try:
            line = self.lines.get(timeout=ANSWER_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no answer within {ANSWER_SECONDS} s") from None
        assert line is not None, f"output ended (status {self.process.wait(ANSWER_SECONDS)})"
        return line.removesuffix("\n")

    def rest(self) -> list[str]:
        """Every output line still to come, once the input is closed, and status 0."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        assert self.process.wait(ANSWER_SECONDS) == 0
        lines = []
        while (line := self.lines.get(timeout=ANSWER_SECONDS)) is not None:
            lines.append(line.removesuffix("\n"))
        return lines

    def __enter__(self) -> Segment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.kill()
        self.process.wait()


def batch(*flags: Any, queries: list[str]) -> list[str]:
    """The answers of one run on all the queries at once (the reference of a streamed run)."""
    return out(qseg("segment", *flags, stdin="".join(q + "\n" for q in queries))).splitlines()


@pytest.mark.parametrize(
    "flags, first",
    [
        ([], DEFAULT_FIRST),
        (["--method", "naive"], NAIVE_FIRST),
        (["--format", "json"], None),
        (["--nested"], "(((new york) yankees) tickets)"),
    ],
    ids=["default model", "naive", "json", "nested"],
)
def test_a_co_process_gets_each_answer_before_its_next_query(flags, first):
    expected = batch(*flags, queries=QUERIES)
    with Segment(*flags) as segment:
        answers = []
        for query in QUERIES:
            segment.send(query.encode())
            answers.append(segment.answer())
        assert answers == expected
        assert segment.rest() == []
    assert answers[0] == first or json.loads(answers[0])["segmentation"] == DEFAULT_FIRST


def test_a_co_process_gets_every_ranked_segmentation():
    with Segment("--k", "2") as segment:
        segment.send(b"new york yankees tickets")
        ranked = [segment.answer(), segment.answer()]
    expected = [["1", DEFAULT_FIRST], ["2", default_second()]]
    assert [line.split("\t")[:2] for line in ranked] == expected


Stdin = tuple[int, Callable[[bytes], None], Callable[[], None]]
"""A child's stdin: its descriptor, how to write to it, how to end the input."""


def fifo(request: pytest.FixtureRequest) -> Stdin:
    """A named pipe."""
    path = request.getfixturevalue("tmp_path") / "queries"
    os.mkfifo(path)
    reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # so that opening does not wait
    writer = os.open(path, os.O_WRONLY)
    os.set_blocking(reader, True)
    return reader, lambda data: _write_all(writer, data), lambda: os.close(writer)


def stream_socket(request: pytest.FixtureRequest) -> Stdin:
    """A connected Unix socket."""
    ours, theirs = socket.socketpair()
    return theirs.detach(), ours.sendall, ours.close


def terminal(request: pytest.FixtureRequest) -> Stdin:
    """A pseudo-terminal, as if typed (its echo is not read: a few lines fit its buffer),
    ended by Ctrl-D; its main side is closed after the test (the child would see an error)."""
    main, child = os.openpty()
    request.addfinalizer(lambda: os.close(main))
    return child, lambda data: _write_all(main, data), lambda: _write_all(main, b"\x04")


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


@pytest.mark.parametrize("kind", [fifo, stream_socket, terminal], ids=lambda k: k.__name__)
def test_a_fifo_socket_or_terminal_is_answered_line_by_line(request, kind):
    child, write, end = kind(request)
    with Segment(stdin=child) as segment:
        os.close(child)  # the child has its own copy
        answers = []
        for query in QUERIES:
            write(query.encode() + b"\n")
            answers.append(segment.answer())
        end()
        assert segment.rest() == []
    assert answers == batch(queries=QUERIES)
    assert answers[0] == DEFAULT_FIRST


def test_line_buffered_answers_a_file_before_the_end(tmp_path):
    """The first answer comes out while the process is still held: its stderr (one report
    per skipped line, over a megabyte) is a pipe nobody reads. Batched, it would sit in the
    output buffer until the end."""
    path = tmp_path / "queries.txt"
    path.write_bytes(b"new york yankees tickets\n" + b"\n" * 20_000)
    with path.open("rb") as stdin:
        segment = Segment(
            "--line-buffered", "--skip-bad-lines", stdin=stdin, stderr=subprocess.PIPE
        )
    with segment:
        assert segment.answer() == DEFAULT_FIRST
        assert segment.process.stderr is not None
        reports = segment.process.stderr.read().decode().splitlines()
        assert segment.rest() == [""] * 20_000
    assert len(reports) == 20_000
    assert reports[-1] == "qseg: skipped <stdin>:20001: empty query: it has no words"


@functools.cache
def aligned(fmt: str, marker: str = "", k: int = 1) -> list[str]:
    """What a run on :data:`MIXED` must write: each good line's answers (from a run on the good
    lines alone) at its place, and one marker line (a JSON record) for each bad one."""
    flags = ["--format", fmt, "--k", k]
    answers = iter(per_query(batch(*flags, queries=[MIXED[n - 1].decode() for n in GOOD]), k))
    lines = []
    for n in range(1, len(MIXED) + 1):
        if n not in SKIPPED:
            lines.extend(next(answers))
        elif fmt == "json":
            lines.append(json.dumps({"id": None, "line": n, "error": SKIPPED[n]}))
        else:
            lines.append(marker)
    return lines


def per_query(lines: list[str], k: int) -> list[list[str]]:
    """Output lines grouped by query: with ``k > 1`` a query's first line has rank 1."""
    if k == 1:
        return [[line] for line in lines]
    groups: list[list[str]] = []
    for line in lines:
        if line.split("\t")[-3] == "1":
            groups.append([])
        groups[-1].append(line)
    return groups


def run_on_mixed(tmp_path: Path, mode: str, *flags: Any) -> list[str]:
    """The output lines of ``qseg segment --skip-bad-lines FLAGS`` on :data:`MIXED`, from a
    file, all at once through a pipe, or one line at a time from a co-process."""
    flags = ("--skip-bad-lines", *flags)
    if mode == "co-process":
        with Segment(*flags) as segment:
            output = []
            for line in MIXED:
                segment.send(line)
                output.append(segment.answer())
            assert segment.rest() == []
        return output
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"".join(line + b"\n" for line in MIXED))
    with path.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "qseg", "segment", *map(str, flags)],
            stdin=stdin if mode == "file" else None,
            input=None if mode == "file" else path.read_bytes(),
            capture_output=True,
            timeout=120,
            env=ENV,
        )
    assert done.stderr.decode().splitlines() == REPORTS
    return out(done).splitlines()


@pytest.mark.parametrize("fmt", ["pipe", "quoted", "json"])
@pytest.mark.parametrize(
    "mode", ["file", "pipe", "line-buffered file", "line-buffered pipe", "co-process"]
)
def test_skipped_lines_keep_their_place(tmp_path, mode, fmt):
    flags = ["--format", fmt] + (["--line-buffered"] if "line-buffered" in mode else [])
    output = run_on_mixed(tmp_path, mode.removeprefix("line-buffered "), *flags)
    expected = aligned(fmt)
    if fmt == "json":  # compared as values: the records' key order is not the point
        assert [json.loads(line) for line in output] == [json.loads(line) for line in expected]
    else:
        assert output == expected
    first = {"pipe": DEFAULT_FIRST, "quoted": '"new york yankees" tickets'}
    assert output[0] == first.get(fmt, output[0]) and len(output) == len(MIXED)


@pytest.mark.parametrize("mode", ["file", "pipe"])
def test_a_marker_and_ranked_lines(tmp_path, mode):
    """A skipped line gets one marker line, however many segmentations a query gets."""
    output = run_on_mixed(tmp_path, mode, "--k", "2", "--bad-line-marker", "-")
    assert output == aligned("pipe", "-", k=2)
    assert len(output) == 2 * len(GOOD) - 1 + len(SKIPPED)  # "x" has one segmentation
    assert [line.split("\t")[:2] for line in output[:3]] == [
        ["1", DEFAULT_FIRST],
        ["2", default_second()],
        ["-"],
    ]


def test_bad_line_marker_usage_errors():
    for flags, fragment in [
        (["--bad-line-marker", "-"], "add --skip-bad-lines"),
        (["--skip-bad-lines", "--bad-line-marker", "a\nb"], "must be one line"),
        (["--skip-bad-lines", "--bad-line-marker", "-", "--format", "json"], "a JSON record"),
    ]:
        assert_one_line_error(qseg("segment", *flags, "new york"), fragment)


LONG = " ".join(["new york yankees tickets"] * 10)
"""40 words: the longest query --nested takes."""
NOT_NESTED = [b"cheap new york hotels", (LONG + " sale").encode(), b"w " * 1000, LONG.encode()]
"""41 and 1,000 words at lines 2 and 3, between queries it nests."""


@pytest.mark.parametrize("fmt", ["pipe", "json"])
@pytest.mark.parametrize("mode", ["file", "co-process"])
def test_nested_skips_queries_it_cannot_nest(tmp_path, mode, fmt):
    path = tmp_path / "queries.txt"
    path.write_bytes(b"".join(line + b"\n" for line in NOT_NESTED))
    flags = ["--nested", "--skip-bad-lines", "--format", fmt]
    if mode == "co-process":
        with Segment(*flags, stderr=(tmp_path / "stderr").open("wb")) as segment:
            output = []
            for line in NOT_NESTED:
                segment.send(line)
                output.append(segment.answer())
            assert segment.rest() == []
        stderr = (tmp_path / "stderr").read_text()
    else:
        with path.open("rb") as stdin:
            done = subprocess.run(
                [sys.executable, "-m", "qseg", "segment", *flags],
                stdin=stdin,
                capture_output=True,
                timeout=120,
            )
        output, stderr = out(done).splitlines(), done.stderr.decode()
    reports = stderr.splitlines()
    assert [r.split(": ")[:2] for r in reports] == [
        ["qseg", "skipped <stdin>:2"],
        ["qseg", "skipped <stdin>:3"],
    ]
    assert "41" in reports[0] and "1000" in reports[1]
    if fmt == "json":
        records = [json.loads(line) for line in output]
        assert records[0]["nested"] == "(cheap ((new york) hotels))"
        assert [r["line"] for r in records[1:3]] == [2, 3]
        assert [f"qseg: skipped {r['error']}" for r in records[1:3]] == reports
        assert records[3]["query"] == LONG and records[3]["nested"].count("(") == 39
    else:
        assert output[:3] == ["(cheap ((new york) hotels))", "", ""]
        assert output[3].count("(") == 39 and len(output) == 4


def test_nested_stops_at_a_query_it_cannot_nest_naming_its_line():
    stdin = b"".join(line + b"\n" for line in NOT_NESTED)
    result = qseg("segment", "--nested", stdin=stdin)
    assert result.stdout.decode() == "(cheap ((new york) hotels))\n"
    assert_one_line_error(result, "<stdin>:2: ", "41", status=1)


def test_nested_refuses_a_query_argument_naming_its_position():
    """A QUERY argument is not a line: a bad one is a usage error, skipping or not."""
    for flags in ([], ["--skip-bad-lines"]):
        result = qseg("segment", "--nested", *flags, "new york", LONG + " sale")
        assert_one_line_error(result, "QUERY argument 2: ", "41", status=2)
