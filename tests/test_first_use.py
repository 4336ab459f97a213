"""First use on a fresh machine: the built-in stores are built once, even by processes that
start together, and a damaged one is rebuilt rather than used."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from qseg.resources.default import build_tag, source_fingerprint, wordsegment_fingerprint
from qseg.resources.store import Store, build_from_entries

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
    # the release, store format and normalization are in the name: an upgrade builds anew
    assert store.name.endswith(f"-{build_tag()}.qseg") and "-norm1" in build_tag()
    # and the content fingerprint of the installed source: another wordsegment builds anew
    content = wordsegment_fingerprint()
    assert f"-{content}-" in store.name
    assert Store.open(store).header["source"]["fingerprint"] == content
    assert [p for p in cache.iterdir() if p != store] == []  # the lock went with the build


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
        (["segment", "--method", "joint", "a"], "joint is trained first"),
        (["evaluate", "--gold", "missing.txt", "--system", "d=default"], "no such file"),
        (["train", "--gold", "missing.txt", "--out", str(tmp_path)], "is a directory"),
        (["ir-eval", "--docs", "missing.tsv", "--queries", "q", "--qrels", "r"], "no such file"),
        (["build", "ngrams", "--from", "counts", "-o", str(tmp_path), "x"], "no such file"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "qseg", *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("qseg: error: ") and fragment in done.stderr
    assert not cache.exists() or not any(cache.iterdir())  # nothing was built


def test_a_first_use_killed_midway_leaves_nothing_behind(tmp_path):
    """The built-in counts, killed while being written into an empty cache: the next use
    removes what was left (under the build's lock) and builds them."""
    import time

    cache = tmp_path / "cache"
    env = os.environ | {"QSEG_CACHE": str(cache)}
    command = [sys.executable, "-m", "qseg", "segment", "--method", "naive", "new york"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while not list(cache.glob(".default-counts-*.tmp")):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.stdout == "new york\n", done.stderr
    left = sorted(p.name for p in cache.iterdir() if not p.name.endswith(".qseg"))
    assert left == []


def test_a_cached_store_of_another_source_is_rebuilt_not_used(tmp_path):
    """A store put in the cache under the expected name but built from something else (its
    header names the source) is built again."""
    cache = tmp_path / "cache"
    run_together(cache, 1)
    (store,) = cache.glob("*.qseg")
    build_from_entries({"new york": 1}, kind="counts", path=store, source={"package": "other"})
    ((code, out, err),) = run_together(cache, 1)
    assert (code, out) == (0, "new york|yankees|tickets\n")
    assert "building the built-in Web1T counts" in err
    assert Store.open(store).header["source"]["package"].startswith("wordsegment ")


def test_the_source_fingerprint_follows_the_installed_files(tmp_path, monkeypatch):
    """The installer's RECORD lines of the data files (their SHA-256) fingerprint a package's
    data, not its other lines (compiled files, the installer's name); without a RECORD, the
    data files' own bytes do."""
    info = tmp_path / "toydata-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toydata\nVersion: 1.0\n")
    record = "toydata/a.txt,sha256=AAAA,3\ntoydata-1.0.dist-info/INSTALLER,sha256=PIP,4\n"
    (info / "RECORD").write_text(record)
    data = tmp_path / "a.txt"
    data.write_text("one")
    monkeypatch.syspath_prepend(str(tmp_path))

    def fingerprint():
        return source_fingerprint("toydata", lambda path: path.endswith(".txt"), lambda: [data])

    first = fingerprint()
    (info / "RECORD").write_text(record.replace("PIP", "UV"))
    assert fingerprint() == first  # another installer, the same data
    (info / "RECORD").write_text(record.replace("AAAA", "BBBB"))
    assert fingerprint() != first
    (info / "RECORD").unlink()
    by_bytes = fingerprint()
    data.write_text("two")
    assert fingerprint() != by_bytes
