"""First use on a fresh machine: the built-in stores are built once, even by processes that
start together, and a damaged one is rebuilt rather than used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CODE = "import qseg; print(qseg.segment('new york yankees tickets', 'naive').to_pipe())"


def run_together(cache: Path, count: int = 2) -> list[tuple[int, str, str]]:
    env = os.environ | {"QSEG_CACHE": str(cache)}
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", CODE],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    outputs = [run.communicate(timeout=300) for run in runs]
    return [(run.returncode, out, err) for run, (out, err) in zip(runs, outputs, strict=True)]


def test_two_first_uses_at_once_build_one_store(tmp_path):
    cache = tmp_path / "cache"
    results = run_together(cache)
    assert [(code, out) for code, out, _ in results] == [(0, "new york|yankees|tickets\n")] * 2
    builds = sum(err.count("building the built-in Web1T counts") for _, _, err in results)
    assert builds == 1  # the other process waited for it
    (store,) = cache.glob("*.qseg")
    assert store.name.startswith("default-counts-wordsegment-")
    assert sorted(p.name for p in cache.iterdir() if p != store) == [f".{store.name}.lock"]


def test_a_damaged_built_in_store_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    run_together(cache, 1)
    (store,) = cache.glob("*.qseg")
    data = bytearray(store.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte inside a data section
    store.write_bytes(bytes(data))
    ((code, out, err),) = run_together(cache, 1)
    assert (code, out) == (0, "new york|yankees|tickets\n")
    assert "building the built-in Web1T counts" in err
    assert store.read_bytes() != bytes(data)


def test_usage_errors_come_before_any_build(tmp_path):
    cache = tmp_path / "cache"
    env = os.environ | {"QSEG_CACHE": str(cache)}
    for args, fragment in (
        (["segment", "--k", "0", "a"], "--k must be at least 1"),
        (["segment", ""], "QUERY argument 1: empty query"),
        (["segment", "--method", "nope", "a"], "unknown method 'nope'"),
        (["segment", "--method", "missing.qseg", "a"], "no such model file"),
        (["segment", "--ngrams", "missing.txt", "a"], "missing.txt: no such file"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "qseg", *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("qseg: error: ") and fragment in done.stderr
    assert not cache.exists() or not any(cache.iterdir())  # nothing was built
