"""Every bad input a user can give the command line gets one line on stderr, naming the file
(and line) where there is one, and exit status 2 (usage: a bad argument, option or path) or 1
(bad data: a file's content, a damaged store or model). Never a traceback.

The table of cases is also the source of ``docs/errors.md``:

    python tests/test_errors.py docs/errors.md    # runs every case and writes the table
"""

from __future__ import annotations

import contextlib
import io
import os
import resource
import signal
import socket
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from helpers import qseg

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
    full_disk: bool = False
    """stdout is ``/dev/full``: every write to it fails with ENOSPC."""


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


def _model(folder: Path, change: Callable[[dict[str, bytes]], None], record: bool = True) -> None:
    """A small trained model, saved, then one of its members changed (the zip stays valid);
    ``record``: meta.json's manifest recorded anew for the change (so that what refuses it is
    the member's own check), else left as it was."""
    import json

    sys.path.insert(0, str(Path(__file__).parent))
    import toy

    from qseg import models
    from qseg.models.format import MANIFEST, manifest

    models.save(toy.train("features(classifier=logreg)"), folder / "m.qseg")
    with zipfile.ZipFile(folder / "m.qseg") as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    change(members)
    if record:
        meta = json.loads(members["meta.json"])
        meta[MANIFEST] = manifest({n: d for n, d in members.items() if n != "meta.json"})
        members["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(folder / "m.qseg", "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def _packed_model(
    folder: Path, change: Callable[[list], list], spec: str = "features(classifier=logreg)"
) -> None:
    """A small trained model, saved, then its members changed and packed by the model fuzz's
    zip writer, which writes what ``zipfile`` will not (flags, methods, declared sizes), its
    manifest recorded anew for what they hold."""
    sys.path.insert(0, str(Path(__file__).parent))
    import toy
    from test_model_fuzz import pack, unpack, with_manifest

    from qseg import models

    models.save(toy.train(spec), folder / "m.qseg")
    changed = change(unpack((folder / "m.qseg").read_bytes()))
    (folder / "m.qseg").write_bytes(pack(with_manifest(changed)))


def _in_member(name: str, change: Callable[[Any], Any]) -> Callable[[list], list]:
    """A change of the member ``name`` of a model (``change(member) -> member``)."""
    return lambda members: [change(m) if m.name == name else m for m in members]


def _in_array(name: str, change: Callable[[Any], Any]) -> Callable[[list], list]:
    """A change of the member ``name`` of the model's gap_model.npz (the .npz repacked)."""
    from test_model_fuzz import Member, pack, unpack

    def repack(npz: Any) -> Any:
        inner = [change(m) if m.name == name else m for m in unpack(npz.data)]
        return Member.of(npz.name, pack(inner))

    return _in_member("gap_model.npz", repack)


def _flagged(member: Any) -> Any:
    return replace(member, flags=member.flags | 0x1)


def _labelled(method: int) -> Callable[[Any], Any]:
    """A member whose header names compression ``method``, its data left as it is."""
    return lambda member: replace(member, method=method)


def _packed_with(method: int) -> Callable[[Any], Any]:
    from test_model_fuzz import Member

    return lambda member: Member.of(member.name, member.data, method)


def _npy_shape(shape: tuple[int, ...]) -> Callable[[Any], Any]:
    """A float64 array whose header declares ``shape`` (its data left as it is)."""
    import numpy as np
    from test_model_fuzz import Member, npy

    def forge(member: Any) -> Any:
        stream = io.BytesIO(member.data)
        np.lib.format.read_magic(stream)
        np.lib.format.read_array_header_1_0(stream)
        body = member.data[stream.tell() :]
        return Member.of(member.name, npy(shape, "<f8", False, body), zipfile.ZIP_STORED)

    return forge


def _column(member: Any) -> Any:
    """An array saved again as one column: the same numbers, of shape (n, 1)."""
    import numpy as np
    from test_model_fuzz import Member

    out = io.BytesIO()
    np.save(out, np.load(io.BytesIO(member.data)).reshape(-1, 1))
    return Member.of(member.name, out.getvalue(), zipfile.ZIP_STORED)


def _nested_meta(folder: Path) -> None:
    """A model file of 2 KB: only a meta.json of arrays nested 1,000 deep."""
    with zipfile.ZipFile(folder / "m.qseg", "w") as zf:
        zf.writestr("meta.json", "[" * 1000 + "]" * 1000)


def _bomb(folder: Path) -> None:
    """A model of 0.5 MB with a member of 512 MiB of zeros that says so."""
    from test_model_fuzz import bomb_member

    _packed_model(folder, lambda members: [*members, bomb_member("extra", 512)])


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


def _zero_coef(members: dict[str, bytes]) -> None:
    """The gap model's coefficients zeroed: a valid array of the same size, other numbers."""
    import numpy as np

    with np.load(io.BytesIO(members["gap_model.npz"])) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["coef"] = np.zeros_like(arrays["coef"])
    out = io.BytesIO()
    np.savez(out, **arrays)
    members["gap_model.npz"] = out.getvalue()


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
    Case("the query-log method without a log", ["segment", "--method", "querylog(wiki=false)", "a b"], 2, "needs a query log: give --query-log FILE"),
    Case("a folder as the method", ["segment", "--method", "d", "a"], 2, "d: is a directory, not a method or a model file", make=lambda f: (f / "d").mkdir()),
    Case("a parameter of infinity (1e999)", ["segment", "--method", "pmi(tau=1e999)", "a b"], 2, "pmi: tau must be a finite number, not '1e999'"),
    Case("a parameter given twice", ["segment", "--method", "pmi(tau=1, tau=2)", "a b"], 2, "pmi: tau is given twice"),
    Case("build -o its own input", ["build", "ngrams", "--from", "counts", "--quiet", "-o", "c.txt", "c.txt"], 2, "c.txt: is also an input; the output must be another file", {"c.txt": COUNTS}),
    Case("train --out in a folder that takes no files", ["train", "--method", "features", "--gold", "g.txt", "--out", "/proc/x.qseg"], 2, "/proc: cannot hold files (No such file or directory), so the model /proc/x.qseg cannot be made", {"g.txt": "1\tnew york|tickets\n"}),
    Case("train --seed -1", ["train", "--method", "features", "--gold", "g.txt", "--seed", "-1", "--out", "m.qseg"], 2, "--seed must be between 0 and 2147483647 (2^31 - 1), got -1", {"g.txt": "1\tnew york|tickets\n"}),
    Case("a spec's random_state of -1", ["train", "--method", "features(random_state=-1)", "--gold", "g.txt", "--out", "m.qseg"], 2, "random_state must be between 0 and 2147483647 (2^31 - 1), got -1", {"g.txt": "1\tnew york|tickets\n"}),
    Case("train --out its own gold file", ["train", "--method", "features", "--gold", "g.txt", "--out", "g.txt"], 2, "g.txt: is also an input; the output must be another file", {"g.txt": "1\tnew york|tickets\n"}),
    Case("train --dimensions 0", ["train", "--method", "embeddings", "--corpus", "c.txt", "--dimensions", "0", "--gold", "g.txt", "--out", "m.qseg"], 2, "--dimensions must be between 1 and 1000, got 0", {"g.txt": "1\tnew york|tickets\n", "c.txt": "new york\n"}),
    Case("agree --replicates 1000000000", ["agree", "--replicates", "1000000000", "a.txt", "b.txt"], 2, "--replicates must be between 1 and 10,000, got 1000000000", {"a.txt": "(x (y z))\n", "b.txt": "((x y) z)\n"}),
    Case("agree --seed -1", ["agree", "--seed", "-1", "a.txt", "b.txt"], 2, "--seed must be 0 or more, got -1", {"a.txt": "(x (y z))\n", "b.txt": "((x y) z)\n"}),
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
    Case("a query too long to nest, on stdin", ["segment", "--nested", "--method", "always-split"], 1, "<stdin>:1: a nested segmentation takes at most 40 words", {"<stdin>": "w " * 41 + "\n"}),
    Case("a query too long to nest, as an argument", ["segment", "--nested", "--method", "always-split", "w " * 41], 2, "QUERY argument 1: a nested segmentation takes at most 40 words"),
    Case("--bad-line-marker without --skip-bad-lines", ["segment", "--method", "always-split", "--bad-line-marker", "-"], 2, "add --skip-bad-lines"),
    Case("--bad-line-marker with --format json", ["segment", "--method", "always-split", "--skip-bad-lines", "--format", "json", "--bad-line-marker", "-"], 2, "a JSON record"),
    Case("a query over the word limit", ["segment", "--method", "always-split"], 1, "<stdin>:1: query has 1001 words; the limit is 1000", {"<stdin>": "w " * 1001 + "\n"}),
    Case("a store with damaged data", ["segment", "--method", "naive", "--ngrams", "c.qseg", "a"], 1, "is damaged (CRC-32 mismatch)", make=_damaged_store),
    Case("a truncated store", ["store", "info", "c.qseg"], 1, "c.qseg: truncated store", make=_truncated_store),
    Case("store verify of a damaged store", ["store", "verify", "c.qseg"], 1, "c.qseg: section", make=_damaged_store),
    Case("a model file that is not a zip", ["segment", "--method", "m.qseg", "a"], 1, "m.qseg: not a readable model file", {"m.qseg": "nope"}),
    Case("a model array of the wrong shape", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): linear gap model: coef has 3 values, expected", make=lambda f: _model(f, _wrong_shape)),
    Case("a model parameter qseg does not know", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg: meta.json: unknown parameter 'colour'", make=lambda f: _model(f, _unknown_parameter)),
    Case("a damaged member inside a valid zip", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not", make=lambda f: _model(f, _garbage_member)),
    Case("a member changed inside a valid zip, not in meta.json's manifest", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): its SHA-256 is not the one meta.json records (the file is damaged)", make=lambda f: _model(f, _zero_coef, record=False)),
    Case("a model of 2 KB: JSON nested 1,000 deep", ["segment", "--method", "m.qseg", "a"], 1, "m.qseg: not a readable model file (meta.json: nested too deeply)", make=_nested_meta),
    Case("a model member flagged encrypted", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg: not a readable model file (member 'gap_model.npz' is encrypted)", make=lambda f: _packed_model(f, _in_member("gap_model.npz", _flagged))),
    Case("an array in a model's .npz flagged encrypted", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not a linear gap model (member 'coef.npy' is encrypted)", make=lambda f: _packed_model(f, _in_array("coef.npy", _flagged))),
    Case("a model member labelled lzma, its data deflated", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg: not a readable model file (member 'gap_model.npz' is compressed with method 14 (lzma); only stored and deflated members are read)", make=lambda f: _packed_model(f, _in_member("gap_model.npz", _labelled(14)))),
    Case("a model member compressed with bzip2", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg: not a readable model file (member 'meta.json' is compressed with method 12 (bzip2)", make=lambda f: _packed_model(f, _in_member("meta.json", _packed_with(12)))),
    Case("an array in a model's .npz compressed with method 6 (implode)", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not a linear gap model (member 'coef.npy' is compressed with method 6; only stored and deflated members are read)", make=lambda f: _packed_model(f, _in_array("coef.npy", _labelled(6)))),
    Case("an array in a model's .npz compressed with lzma", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not a linear gap model (member 'coef.npy' is compressed with method 14 (lzma)", make=lambda f: _packed_model(f, _in_array("coef.npy", _packed_with(14)))),
    Case("an array header declaring 512 GiB", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not a linear gap model (array 'coef': its header declares 68,719,476,736 items of 8 bytes (shape (68719476736,)), but", make=lambda f: _packed_model(f, _in_array("coef.npy", _npy_shape((2**36,))))),
    Case("an array header declaring 2^64 items", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): not a linear gap model (array 'coef': its header declares 18,446,744,073,709,551,616 items", make=lambda f: _packed_model(f, _in_array("coef.npy", _npy_shape((2**64,))))),
    Case("a tree array of two dimensions", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg (gap_model.npz): tree ensemble: left is int32 of shape", make=lambda f: _packed_model(f, _in_array("left.npy", _column), "features(n_estimators=10, max_depth=2)")),
    Case("a model of 0.5 MB that unpacks to 512 MiB", ["segment", "--method", "m.qseg", "--allow-other-resources", "a"], 1, "m.qseg: not a readable model file (its members declare", make=_bomb),
    Case("stdout on a full disk (segment)", ["segment", "--method", "always-split", "a b"], 1, "cannot write the output (No space left on device)", full_disk=True),
    Case("stdout on a full disk (methods)", ["methods"], 1, "cannot write the output (No space left on device)", full_disk=True),
    Case("a bracket line that is not a tree", ["agree", "a.txt", "b.txt"], 1, "b.txt:1: unbalanced '(' in '(x (y z)'", {"a.txt": "(x (y z))\n", "b.txt": "(x (y z)\n"}),
    Case("a query log with no usable line", ["segment", "--method", "querylog(wiki=false)", "--query-log", "log.txt", "a b"], 1, "log.txt: no usable queries", {"log.txt": "\n\t0\n"}),
    Case("titles without a multiword title", ["segment", "--method", "querylog", "--query-log", "log.txt", "--titles", "t.txt", "a b"], 1, "t.txt: no multiword titles", {"log.txt": "new york\n", "t.txt": "paris\n"}),
]  # fmt: skip


def _qseg(
    folder: Path, *args: str, stdin: bytes = b"", full_disk: bool = False
) -> subprocess.CompletedProcess:
    """``qseg ARGS`` in ``folder``: in this process (helpers.qseg), but with stdout on a full
    disk in a process of its own (what the interpreter writes at exit is checked too)."""
    if not full_disk:
        with contextlib.chdir(folder):
            return qseg(*args, stdin=stdin)
    with open("/dev/full", "wb") as full:
        return subprocess.run(
            [sys.executable, "-m", "qseg", *args],
            cwd=folder,
            input=stdin,
            stdout=full,
            stderr=subprocess.PIPE,
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
    return _qseg(folder, *case.args, stdin=stdin, full_disk=case.full_disk)


@pytest.mark.parametrize("case", CASES, ids=[c.what for c in CASES])
def test_one_line_and_the_right_status(case, tmp_path):
    done = run(case, tmp_path)
    err = done.stderr.decode()
    assert done.returncode == case.status, err
    assert err.startswith("qseg: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert case.fragment in err, err


VOTES = "1\t[(6, 'new york|yankees'), (4, 'new|york|yankees')]\n2\t[(10, 'a b')]\n"
FULL_DISK = [
    Case("segment, 20,000 queries", ["segment", "--method", "always-split"], 1, "", {"<stdin>": "new york\n" * 20_000}),
    Case("methods", ["methods"], 1, ""),
    Case("store info", ["store", "info", "c.qseg"], 1, "", make=_store),
    Case("store verify", ["store", "verify", "c.qseg"], 1, "", make=_store),
    Case("evaluate", ["evaluate", "--gold", "g.txt", "s.txt"], 1, "", {"g.txt": VOTES, "s.txt": "1\tnew york|yankees\n2\ta b\n"}),
    Case("tune pmi", ["tune", "pmi", "--gold", "g.txt", "--unigrams", "u.txt", "--bigrams", "b.txt"], 1, "", {"g.txt": "1\t[(10, 'new york|pizza')]\n", "u.txt": "new\t-3\nyork\t-4\npizza\t-5\n", "b.txt": "new york\t-5\nyork pizza\t-9.5\n"}),
    Case("agree", ["agree", "--replicates", "10", "--quiet", "a.txt", "b.txt"], 1, "", {"a.txt": "(x (y z))\n((a b) c)\n", "b.txt": "((x y) z)\n((a b) c)\n"}),
    Case("ir-eval", ["ir-eval", "--docs", "docs.tsv", "--queries", "q.tsv", "--qrels", "qrels", "--segmentations", "s=s.txt", "--quiet", "--no-cache"], 1, "", {"docs.tsv": "d1\tnew york yankees tickets\nd2\tyork pizza\n", "q.tsv": "q1\tnew york tickets\n", "qrels": "q1 0 d1 2\nq1 0 d2 0\n", "s.txt": "q1\tnew york|tickets\n"}),
]  # fmt: skip
"""Every command that writes to stdout, run with stdout on a full disk."""


@pytest.mark.parametrize("case", FULL_DISK, ids=[c.what for c in FULL_DISK])
def test_stdout_on_a_full_disk_is_one_line_and_nothing_at_exit(case, tmp_path):
    done = run(replace(case, full_disk=True), tmp_path)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 1, lines
    assert lines[-1] == "qseg: error: cannot write the output (No space left on device)", lines
    assert all(line.startswith("qseg: note: ") for line in lines[:-1]), lines  # ir-eval's notes


def test_output_piped_into_head_ends_quietly():
    """A reader that stops early (``| head -1``): status 0, nothing on stderr, as before."""
    command = [sys.executable, "-m", "qseg", "segment", "--method", "always-split"]
    pipe = subprocess.PIPE
    with subprocess.Popen(command, stdin=pipe, stdout=pipe, stderr=pipe) as qseg:
        head = subprocess.Popen(["head", "-1"], stdin=qseg.stdout, stdout=pipe)
        qseg.stdout.close()  # head reads it now
        _, err = qseg.communicate(b"new york tickets\n" * 200_000, timeout=120)
        first, _ = head.communicate(timeout=120)
    assert first == b"new|york|tickets\n"
    assert qseg.returncode == 0 and err == b"", err


def _small_files() -> None:
    """In the child: files of at most 2 KB, a larger write failing with EFBIG (not SIGXFSZ)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))


def test_a_model_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path):
    """A disk that fills while the model is written (files limited to 2 KB; it takes 3)."""
    sys.path.insert(0, str(Path(__file__).parent))
    import toy

    (tmp_path / "g.txt").write_text(
        "".join(f"{i}\t{q.to_pipe()}\n" for i, q in enumerate(toy.gold(60)))
    )
    command = [sys.executable, "-m", "qseg", "train", "--method", "features(classifier=logreg)",
               "--gold", "g.txt", "--out", "m.qseg", "--quiet"]  # fmt: skip
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, timeout=300, preexec_fn=_small_files
    )
    assert done.returncode == 2, done.stderr.decode()
    assert done.stderr.decode() == "qseg: error: m.qseg: cannot write the model (File too large)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.txt"]  # no model, no temporary file


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
        if case.full_disk:
            given += " > /dev/full"
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
seeded damages of real stores never crash the process (`tests/test_fuzz.py`); 340 seeded
mutations of model files (the shipped default and three small trained models: the zip
structure, declared sizes and zip bombs, flags, compression methods, JSON nesting and types,
the `.npy` headers inside the `.npz` members) each load as a working model or are refused
with one line naming the file, within 400 MB more address space, and a 0.5 MB model that
unpacks to 512 MiB is refused with the process under 250 MB (`tests/test_model_fuzz.py`);
every command that writes to stdout (segment, methods, store info and verify, evaluate, tune,
agree, ir-eval) gives `cannot write the output (No space left on device)` with status 1 when
stdout is a full disk, and output piped into `head` ends quietly with status 0, as before; a
model that cannot be written (files limited to 2 KB) gives `m.qseg: cannot write the model
(File too large)` with status 2 and leaves no file behind; a store without read permission gives `cannot read the store (Permission denied)` with status 2
(`tests/test_errors.py`, run as a user other than root); a build killed with SIGKILL leaves
nothing that the next build does not remove (`tests/test_build.py`).
"""


if __name__ == "__main__":
    import conftest  # noqa: F401 - the tests' own cache (QSEG_CACHE), as under pytest

    write_table(Path(sys.argv[1]))
