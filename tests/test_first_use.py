"""First use on a fresh machine: the built-in stores are built once, even by processes and
threads that start together, a damaged one is rebuilt rather than used, and a cache that
cannot be written is read as it is or worked around in memory."""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from qseg.fileio import atomic_write, clear_leftovers
from qseg.query import NORMALIZATION_VERSION
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


def built_counts_in(cache: Path) -> Path:
    """The built-in counts, as a first use leaves them, put into ``cache``: copied from the
    tests' cache (built once for the run) rather than built again for each test that damages
    or replaces them."""
    from qseg.resources.default import default_counts

    built = default_counts().store.path
    assert built is not None, "the tests' cache holds the built-in counts"
    cache.mkdir()
    return Path(shutil.copy(built, cache))


def test_two_first_uses_at_once_build_one_store(tmp_path):
    cache = tmp_path / "cache"
    results = run_together(cache)
    assert [(code, out) for code, out, _ in results] == [(0, "new york|yankees|tickets\n")] * 2
    builds = sum(err.count("building the built-in Web1T counts") for _, _, err in results)
    assert builds == 1  # the other process waited for it
    (store,) = cache.glob("*.qseg")
    assert store.name.startswith("default-counts-wordsegment-")
    # the release, store format and normalization are in the name: an upgrade builds anew
    assert store.name.endswith(f"-{build_tag()}.qseg")
    assert f"-norm{NORMALIZATION_VERSION}" in build_tag()
    # and the content fingerprint of the installed source: another wordsegment builds anew
    content = wordsegment_fingerprint()
    assert f"-{content}-" in store.name
    assert Store.open(store).header["source"]["fingerprint"] == content
    assert [p for p in cache.iterdir() if p != store] == []  # the lock went with the build


def test_a_damaged_built_in_store_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    store = built_counts_in(cache)
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
    store = built_counts_in(cache)
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


@contextmanager
def read_only(folder: Path):
    """``folder`` made read-only for the block: a read-only bind mount where the tests run as
    root (whom permissions do not stop), else its write permission taken away."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)
        return
    view = folder.with_name(folder.name + "-ro")
    view.mkdir()
    mount = subprocess.run(["mount", "--bind", str(folder), str(view)], capture_output=True)
    if mount.returncode != 0:
        pytest.skip(f"cannot make a read-only folder here: {mount.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], check=True)
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


def qseg_in(cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "qseg", *args],
        env=os.environ | {"QSEG_CACHE": str(cache)} | env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_read_only_empty_cache_builds_in_memory_and_says_so_once(tmp_path):
    with read_only(tmp_path / "cache") as cache:
        for method in ("naive", "default"):
            done = qseg_in(cache, "segment", "--method", method, "new york yankees tickets")
            assert done.returncode == 0, done.stderr
            assert done.stdout in ("new york|yankees|tickets\n", "new york yankees|tickets\n")
            assert done.stderr.count("cannot be written (Read-only file system)") == 1
            assert "QSEG_CACHE" in done.stderr and "reinstall" not in done.stderr
        assert list(cache.iterdir()) == []


def test_a_read_only_cache_that_holds_the_stores_is_used_as_it_is(tmp_path):
    from qseg import models

    models.open_segmenter(models.DEFAULT)  # the test cache holds the default's stores
    source = Path(os.environ["QSEG_CACHE"])
    stores = [*source.glob(f"default-counts-*-{build_tag()}.qseg")]
    stores += source.glob(f"carried-titles-*-{build_tag()}.qseg")
    stores += source.glob(f"carried-names-*-{build_tag()}.qseg")
    assert len(stores) >= 3  # the counts, the titles and names the shipped models carry
    folder = tmp_path / "cache"
    folder.mkdir()
    for store in stores:
        shutil.copy(store, folder)
    with read_only(folder) as cache:
        done = qseg_in(cache, "segment", "new york yankees tickets")
        assert (done.returncode, done.stdout, done.stderr) == (0, "new york yankees|tickets\n", "")


def test_no_writable_folder_at_all_is_a_cache_error_naming_qseg_cache(tmp_path):
    """The built-in titles are built from a file: where neither the cache nor a temporary
    folder can be written, one line names QSEG_CACHE (and never asks to reinstall)."""
    with read_only(tmp_path / "cache") as cache:
        code = (
            "import sys, tempfile; tempfile.tempdir = sys.argv[1]; from qseg.cli import main; "
            "sys.exit(main(['segment', '--method', 'wiki(unseen_titles=true)', 'new york']))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code, str(cache)],
            env=os.environ | {"QSEG_CACHE": str(cache)},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 2, done.stderr
    error = done.stderr.splitlines()[-1]
    assert error.startswith("qseg: error: neither the cache folder")
    assert "set QSEG_CACHE to a writable folder" in error and "reinstall" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_store_built_in_a_temporary_folder_lives_on_in_memory(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    built = build_from_entries({"new york": 7, "new": 9}, kind="counts", path=folder / "s.qseg")
    held = built.in_memory()
    shutil.rmtree(folder)
    assert held.path is None and held.fingerprint == built.fingerprint
    from qseg.resources import NgramCounts

    counts = pickle.loads(pickle.dumps(NgramCounts(store=held)))  # travels as its bytes
    assert (counts["new york"], counts["new"]) == (7, 9)


def test_eight_threads_on_a_cold_cache_build_each_store_once(tmp_path):
    code = """
import threading, qseg
results, barrier = [], threading.Barrier(8)
def use():
    barrier.wait()
    results.append(qseg.segmenter().segment("new york yankees tickets").to_pipe())
threads = [threading.Thread(target=use) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(sorted(results))
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=os.environ | {"QSEG_CACHE": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == repr(["new york yankees|tickets"] * 8) + "\n"
    assert done.stderr.count("building the built-in Web1T counts") == 1, done.stderr
    assert done.stderr.count("titles a model carries") == 1, done.stderr


def test_clearing_leftovers_spares_live_writers_of_any_thread_or_process(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_write(target) as out:  # this thread writes
        out.write("partial")
        (live,) = tmp_path.glob(".out.txt.*.tmp")
        removed: list[Path] = []
        other = threading.Thread(target=lambda: removed.extend(clear_leftovers(target)))
        other.start()
        other.join()
        assert removed == [] and live.exists()
    assert target.read_text() == "partial"

    code = (
        "import sys, time; from qseg.fileio import atomic_write\n"
        "with atomic_write(sys.argv[1]) as out:\n"
        "    out.write('x'); out.flush(); print('ready', flush=True); time.sleep(60)\n"
    )
    writer = subprocess.Popen(
        [sys.executable, "-c", code, str(target)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout.readline() == "ready\n"
        (live,) = tmp_path.glob(".out.txt.*.tmp")
        assert clear_leftovers(target) == [] and live.exists()  # another process writes it
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    deadline = time.monotonic() + 10
    while not (removed := clear_leftovers(target)) and time.monotonic() < deadline:
        time.sleep(0.05)  # the killed writer's lock goes with its last descriptor
    assert removed == [live] and not live.exists()
