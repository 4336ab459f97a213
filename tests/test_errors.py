"""Every bad input a user can give the command line gets one line on stderr, naming the file
(and line) where there is one, and exit status 2 (usage: a bad argument, option or path) or 1
(bad data: a file's content, a damaged store or model). Never a traceback.

The table of cases is also the source of ``docs/errors.md``:

    python tests/test_errors.py docs/errors.md    # runs every case and writes the table
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

COUNTS = "new york\t100\nyork yankees\t10\nnew york yankees\t1\n"
HEADER_REGION = 1 << 16


@dataclass(frozen=True)
class Case:
    """One bad input: files to write (name -> text or bytes, or a function of the folder that
    makes them), the arguments, the exit status and a fragment of the one-line message."""

    what: str
    args: list[str]
    status: int
    fragment: str
    files: dict[str, str | bytes] = field(default_factory=dict)
    make: Callable[[Path], None] | None = None


def _store(folder: Path) -> None:
    (folder / "c.txt").write_text(COUNTS)
    _qseg(folder, "build", "ngrams", "--from", "counts", "--quiet", "-o", "c.qseg", "c.txt")


def _damaged_store(folder: Path) -> None:
    _store(folder)
    data = bytearray((folder / "c.qseg").read_bytes())
    data[HEADER_REGION + 70] ^= 0x5A
    (folder / "c.qseg").write_bytes(bytes(data))


def _truncated_store(folder: Path) -> None:
    _store(folder)
    data = (folder / "c.qseg").read_bytes()
    (folder / "c.qseg").write_bytes(data[: len(data) // 2])


def _socket(folder: Path) -> None:
    """A path the operating system refuses to open (the tests run as root, for whom a file
    without read permission is still readable; the error takes the same path)."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(folder / "s.qseg"))


def _model(folder: Path, change: Callable[[dict[str, bytes]], None]) -> None:
    """A small trained model, saved, then one of its members changed (the zip stays valid)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import toy

    from qseg import models

    models.save(toy.train("features(classifier=logreg)"), folder / "m.qseg")
    with zipfile.ZipFile(folder / "m.qseg") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    change(members)
    with zipfile.ZipFile(folder / "m.qseg", "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _wrong_shape(members: dict[str, bytes]) -> None:
    import numpy as np

    with np.load(io.BytesIO(members["gap_model.npz"])) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["coef"] = np.zeros(3)
    out = io.BytesIO()
    np.savez(out, **arrays)
    members["gap_model.npz"] = out.getvalue()


def _unknown_parameter(members: dict[str, bytes]) -> None:
    import json

    meta = json.loads(members["meta.json"])
    meta["params"]["colour"] = "red"
    members["meta.json"] = json.dumps(meta).encode()


def _garbage_member(members: dict[str, bytes]) -> None:
    members["gap_model.npz"] = b"PK\x03\x04" + b"\x00" * 60


SEGMENT = ["segment", "--method", "naive", "--ngrams", "c.txt"]

CASES = [
    # -- paths and arguments (usage: 2) --
    Case("a missing input file", ["segment", "--ngrams", "none.txt", "a"], 2, "none.txt: no such file"),
    Case("a folder as an input file", ["segment", "--ngrams", "d", "a"], 2, "d: is a directory", make=lambda f: (f / "d").mkdir()),
    Case("build -o an existing folder", ["build", "ngrams", "--from", "counts", "-o", "d", "c.txt"], 2, "d: is a directory; the output must be a file path", {"c.txt": COUNTS}, make=lambda f: (f / "d").mkdir()),
    Case("build -o a path under a regular file", ["build", "ngrams", "--from", "counts", "-o", "c.txt/x.qseg", "c.txt"], 2, "c.txt: is not a directory", {"c.txt": COUNTS}),
    Case("train --out an existing folder", ["train", "--method", "features", "--gold", "g.txt", "--out", "d"], 2, "d: is a directory; the model must be a file path", {"g.txt": "1\tnew york|tickets\n"}, make=lambda f: (f / "d").mkdir()),
    Case("--count-bits 0", ["build", "ngrams", "--from", "counts", "--mode", "compact", "--count-bits", "0", "-o", "x.qseg", "c.txt"], 2, "--count-bits must be between 1 and 24", {"c.txt": COUNTS}),
    Case("--count-bits -1", ["build", "ngrams", "--from", "counts", "--mode", "compact", "--count-bits", "-1", "-o", "x.qseg", "c.txt"], 2, "--count-bits must be between 1 and 24", {"c.txt": COUNTS}),
    Case("an unknown method", ["segment", "--method", "magic", "a"], 2, "unknown method 'magic'"),
    Case("a bad parameter value", ["segment", "--method", "pmi(tau=high)", "a"], 2, "tau must be of type float"),
    Case("an empty query argument", ["segment", ""], 2, "QUERY argument 1: empty query"),
    Case("a missing model file", ["segment", "--method", "none.qseg", "a"], 2, "none.qseg: no such model file"),
    Case("store info on a folder", ["store", "info", "d"], 2, "d: is a directory, not a store", make=lambda f: (f / "d").mkdir()),
    Case("store info on a path that cannot be opened", ["store", "info", "s.qseg"], 2, "s.qseg: cannot read the store", make=_socket),
    Case("the query-log method without a log", ["segment", "--method", "querylog(wiki=false)", "a b"], 2, "needs a query log: pass --query-log FILE"),
    # -- data (1) --
    Case("a count of 10^30", [*SEGMENT, "a"], 1, "c.txt:1: count 1000000000000000000000000000000 is larger than 9223372036854775807", {"c.txt": "new york\t" + "1" + "0" * 30 + "\n"}),
    Case("--count-bits 40 (a 2^40-entry decode table)", ["build", "ngrams", "--from", "counts", "--mode", "compact", "--count-bits", "40", "-o", "x.qseg", "c.txt"], 2, "--count-bits must be between 1 and 24", {"c.txt": COUNTS}),
    Case("an output that is a FIFO", ["build", "ngrams", "--from", "counts", "-o", "ff", "c.txt"], 2, "ff: is not a regular file", {"c.txt": COUNTS}, make=lambda f: os.mkfifo(f / "ff")),
    Case("an output name too long for the file system", ["build", "ngrams", "--from", "counts", "-o", "x" * 250, "c.txt"], 2, "cannot take the lock (File name too long)", {"c.txt": COUNTS}),
    Case("a 27-word n-gram with a count (27^27 > 2^128)", [*SEGMENT, " ".join(f"w{i}" for i in range(27))], 1, "c.txt: 1 x 27^27 exceeds 2^128 - 1; these counts are too large to score exactly", {"c.txt": " ".join(f"w{i}" for i in range(27)) + "\t1\n"}),
    Case("an empty count file (built)", ["build", "ngrams", "--from", "counts", "--quiet", "-o", "x.qseg", "c.txt"], 1, "nothing to store", {"c.txt": ""}),
    Case("a count of 1.5 (built)", ["build", "ngrams", "--from", "counts", "--quiet", "-o", "x.qseg", "c.txt"], 1, "c.txt:2: count '1.5' is not a non-negative integer", {"c.txt": "new york\t10\nyork city\t1.5\n"}),
    Case("a count of 1.5 (loaded)", [*SEGMENT, "a"], 1, "c.txt:2: count '1.5' is not a non-negative integer", {"c.txt": "new york\t10\nyork city\t1.5\n"}),
    Case("an empty n-gram (built)", ["build", "ngrams", "--from", "counts", "--quiet", "-o", "x.qseg", "c.txt"], 1, "c.txt:2: bad n-gram '': empty query", {"c.txt": "new york\t10\n\t3\n"}),
    Case("a line without a count", [*SEGMENT, "a"], 1, "c.txt:2: expected 2 tab-separated fields, found 1", {"c.txt": "new york\t10\nyork city\n"}),
    Case("invalid UTF-8 in a file", [*SEGMENT, "a"], 1, "c.txt:2: invalid UTF-8 at byte 4", {"c.txt": b"new york\t10\nnew \xff\t3\n"}),
    Case("a NUL byte in a file", [*SEGMENT, "a"], 1, "c.txt:1: binary data (NUL byte)", {"c.txt": b"new\x00york\t10\n"}),
    Case("invalid UTF-8 on stdin", ["segment", "--method", "always-split"], 1, "<stdin>:2: invalid UTF-8", {"<stdin>": b"new york\nnew \xff york\n"}),
    Case("a query over the word limit", ["segment", "--method", "always-split"], 1, "<stdin>:1: query has 1001 words; the limit is 1000", {"<stdin>": "w " * 1001 + "\n"}),
    Case("a store with damaged data", ["segment", "--method", "naive", "--ngrams", "c.qseg", "a"], 1, "is damaged (CRC-32 mismatch)", make=_damaged_store),
    Case("a truncated store", ["store", "info", "c.qseg"], 1, "c.qseg: truncated store", make=_truncated_store),
    Case("store verify of a damaged store", ["store", "verify", "c.qseg"], 1, "c.qseg: section", make=_damaged_store),
    Case("a model file that is not a zip", ["segment", "--method", "m.qseg", "a"], 1, "m.qseg: not a readable model file", {"m.qseg": "nope"}),
    Case("a model array of the wrong shape", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): linear gap model: coef is float64 of shape (3,)", make=lambda f: _model(f, _wrong_shape)),
    Case("a model parameter qseg does not know", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg: meta.json: unknown parameter 'colour'", make=lambda f: _model(f, _unknown_parameter)),
    Case("a damaged member inside a valid zip", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not", make=lambda f: _model(f, _garbage_member)),
    Case("a bracket line that is not a tree", ["agree", "a.txt", "b.txt"], 1, "b.txt:1: unbalanced '(' in '(x (y z)'", {"a.txt": "(x (y z))\n", "b.txt": "(x (y z)\n"}),
    Case("a query log with no usable line", ["segment", "--method", "querylog(wiki=false)", "--query-log", "log.txt", "a b"], 1, "log.txt: no usable queries", {"log.txt": "\n\t0\n"}),
    Case("titles without a multiword title", ["segment", "--method", "querylog", "--query-log", "log.txt", "--titles", "t.txt", "a b"], 1, "t.txt: no multiword titles", {"log.txt": "new york\n", "t.txt": "paris\n"}),
]  # fmt: skip


def _qseg(folder: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "qseg", *args],
        cwd=folder,
        input=stdin,
        capture_output=True,
        timeout=300,
        check=False,
    )


def run(case: Case, folder: Path) -> subprocess.CompletedProcess:
    stdin = b""
    for name, content in case.files.items():
        data = content.encode() if isinstance(content, str) else content
        if name == "<stdin>":
            stdin = data
        else:
            (folder / name).write_bytes(data)
    if case.make is not None:
        case.make(folder)
    return _qseg(folder, *case.args, stdin=stdin)


@pytest.mark.parametrize("case", CASES, ids=[c.what for c in CASES])
def test_one_line_and_the_right_status(case, tmp_path):
    done = run(case, tmp_path)
    err = done.stderr.decode()
    assert done.returncode == case.status, err
    assert err.startswith("qseg: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert case.fragment in err, err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files without read permission")
def test_a_store_without_read_permission(tmp_path):
    _store(tmp_path)
    (tmp_path / "c.qseg").chmod(0)
    done = _qseg(tmp_path, "store", "info", "c.qseg")
    assert done.returncode == 2
    assert (
        done.stderr.decode() == "qseg: error: c.qseg: cannot read the store (Permission denied)\n"
    )


def write_table(out: Path) -> None:
    """docs/errors.md: every case, run, with the message it gets."""
    import tempfile

    from qseg.evaluation.provenance import with_provenance

    rows = []
    for case in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            done = run(case, Path(tmp))
        message = done.stderr.decode().strip().replace(tmp, ".")
        given = "qseg " + " ".join(a if a else '""' for a in case.args)
        if "<stdin>" in case.files:
            given += " < input"
        cells = [case.what, f"`{given}`", str(done.returncode), f"`{message}`"]
        rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        print(rows[-1], flush=True)
    text = TEMPLATE.format(rows="\n".join(rows)).replace("|`", "| `")
    out.write_text(with_provenance(text), encoding="utf-8")


TEMPLATE = """# Bad input and the messages it gets

Produced by `python tests/test_errors.py docs/errors.md`, which runs every case of
`tests/test_errors.py` (the test suite runs the same cases and checks each line). Every
error is one line on stderr, `qseg: error: ` then the file (and line) where there is one;
exit status 2 for a usage error (a bad argument, option, spec or path), 1 for bad data (a
file's content, a damaged store or model). Paths are shown relative to the folder the case
ran in.

| bad input | command | status | message |
| --- | --- | ---: | --- |
{rows}

Also checked by the tests, outside this table: a 100 MB line on stdin is refused (or skipped
with `--skip-bad-lines`) while the process stays under 200 MB (`tests/test_cli.py`); 1,050
seeded damages of real stores and 320 of saved models never crash the process
(`tests/test_fuzz.py`); a store without read permission gives `cannot read the store
(Permission denied)` with status 2 (`tests/test_errors.py`, run as a user other than root);
a build killed with SIGKILL leaves nothing that the next build does not remove
(`tests/test_build.py`).
"""


if __name__ == "__main__":
    write_table(Path(sys.argv[1]))
