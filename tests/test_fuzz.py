"""Seeded fuzzing of the stores qseg reads: damaged store files never crash the process.

Real stores built by qseg (counts exact and compact, titles compact) are damaged in seeded
ways: bytes flipped (anywhere, or inside the data sections), the file cut short or extended,
two data sections swapped. Each damaged file is opened and used to segment queries in a
forked child, so that a crash (SIGSEGV, SIGBUS) is counted rather than fatal. Every outcome
must be the intact file's output or a one-line error naming the file; opened without checksum
verification (``verify=False``), a store may also give other output, but never crash. (Model
files have their own fuzz, ``tests/test_model_fuzz.py``, whose children run in
:func:`in_child` too.)

    python tests/test_fuzz.py     # the counts, without pytest
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import toy

from qseg.errors import QsegError
from qseg.resources.counts import NgramCounts
from qseg.resources.store import HEADER_REGION, build_from_entries
from qseg.resources.titles import TitleSet
from qseg.segmenters.rules.naive import NaiveSegmenter
from qseg.segmenters.rules.wiki import WikiSegmenter

QUERIES = [q.query for q in toy.gold(40, seed=3)]
STORE_MUTATIONS = 350  # per store: 3 stores, 1,050 mutations


def in_child(work: Callable[[], object]) -> tuple[str, str]:
    """Run ``work`` in a forked child: ``("ok", output)``, ``("error", "TypeName: message")``
    for a :class:`QsegError`, ``("unexpected", ...)`` for any other exception,
    ``("crash", signal)``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 0
        try:
            os.close(read)
            try:
                result = ["ok", json.dumps(work())]
            except QsegError as exc:
                result = ["error", f"{type(exc).__name__}: {exc}"]
            except BaseException as exc:
                result = ["unexpected", f"{type(exc).__name__}: {exc}"]
            with os.fdopen(write, "w") as out:
                out.write(json.dumps(result))
        except BaseException:
            status = 3
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read) as source:
        text = source.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return "crash", signal.Signals(os.WTERMSIG(status)).name
    if not text:
        return "crash", f"exit {os.WEXITSTATUS(status)}"
    kind, detail = json.loads(text)
    return kind, detail


def sections_of(data: bytes) -> list[tuple[int, int]]:
    """File offsets and sizes of a store's data sections, from its header."""
    length = int.from_bytes(data[12:16], "little")
    header = json.loads(data[32 : 32 + length])
    return [(HEADER_REGION + offset, size) for offset, size, _ in header["sections"].values()]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One seeded damage of ``data``: flipped bytes, a cut, an extension or swapped sections."""
    damaged = bytearray(data)
    kind = rng.choice(["flip", "flip-data", "truncate", "extend", "swap"])
    if kind == "flip-data" or kind == "swap":
        sections = [s for s in sections_of(data) if s[1] > 0]
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            damaged[rng.randrange(len(damaged))] ^= rng.randint(1, 255)
    elif kind == "flip-data":
        offset, size = rng.choice(sections)
        for _ in range(rng.randint(1, 8)):
            damaged[offset + rng.randrange(size)] ^= rng.randint(1, 255)
    elif kind == "truncate":
        del damaged[rng.randrange(len(damaged)) :]
    elif kind == "extend":
        damaged += rng.randbytes(rng.randint(1, 4096))
    else:
        (a, size_a), (b, size_b) = rng.sample(sections, 2) if len(sections) > 1 else sections * 2
        size = min(size_a, size_b)
        damaged[a : a + size], damaged[b : b + size] = data[b : b + size], data[a : a + size]
    return bytes(damaged)


def build_stores(folder: Path) -> dict[str, tuple[Path, Callable[[Path, bool | None], object]]]:
    """The intact stores, each with the work that uses a (damaged) copy of it."""
    res = toy.resources()
    counts = dict(res.ngrams.items())
    titles = list(res.titles)
    paths = {
        "counts, exact": build_from_entries(counts, kind="counts", path=folder / "e.qseg").path,
        "counts, compact": build_from_entries(
            counts, kind="counts", mode="compact", path=folder / "c.qseg"
        ).path,
        "titles, compact": build_from_entries(
            dict.fromkeys(titles, 1), kind="titles", mode="compact", path=folder / "t.qseg"
        ).path,
    }
    intact_counts = NgramCounts.from_file(paths["counts, exact"])

    def naive(path: Path, verify: bool | None) -> object:
        segmenter = NaiveSegmenter(NgramCounts.from_file(path, *_given(verify)))
        return [segmenter.segment(q).to_pipe() for q in QUERIES]

    def wiki(path: Path, verify: bool | None) -> object:
        titles = TitleSet.from_file(path, *_given(verify))
        segmenter = WikiSegmenter(titles=titles, counts=intact_counts)
        return [segmenter.segment(q).to_pipe() for q in QUERIES]

    return {
        "counts, exact": (paths["counts, exact"], naive),
        "counts, compact": (paths["counts, compact"], naive),
        "titles, compact": (paths["titles, compact"], wiki),
    }


def _given(verify: bool | None) -> tuple[bool, ...]:
    """The ``verify`` argument where one is given (so that the script also runs on a qseg
    from before it had one, for a before-and-after count)."""
    return () if verify is None else (verify,)


def fuzz_store(path: Path, work, mutations: int, seed: int) -> dict[str, Counter]:
    """Outcomes of ``mutations`` damaged copies, opened as by default and without checks."""
    data = path.read_bytes()
    expected = json.dumps(work(path, None))
    rng = random.Random(seed)
    target = path.with_name(f"damaged-{path.name}")
    outcomes: dict[str, Counter] = {"default": Counter(), "verify=False": Counter()}
    for _ in range(mutations):
        target.write_bytes(mutate(data, rng))
        for mode, verify in (("default", None), ("verify=False", False)):
            kind, detail = in_child(lambda v=verify: work(target, v))
            outcomes[mode][classify(kind, detail, expected, target)] += 1
    return outcomes


def classify(kind: str, detail: str, expected: str, target: Path) -> str:
    if kind == "ok":
        return "same output" if detail == expected else "other output"
    if kind == "error" and "\n" not in detail and str(target) in detail:
        return "clear error"
    if kind == "error":
        return f"unclear error: {detail}"
    return f"{kind}: {detail}"


def report(title: str, outcomes: Counter) -> str:
    return f"{title}: " + ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items()))


def store_outcomes(folder: Path) -> dict[str, dict[str, Counter]]:
    return {
        name: fuzz_store(path, work, STORE_MUTATIONS, seed)
        for seed, (name, (path, work)) in enumerate(build_stores(folder).items())
    }


def test_damaged_stores_never_crash(capsys):
    # run in a fresh, small process: forking this one (every library the suite loaded) a
    # thousand times would cost a minute
    result = subprocess.run(
        [sys.executable, __file__, "--json"], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    outcomes = json.loads(result.stdout)
    lines = []
    for name, modes in outcomes.items():
        lines += [report(f"{name}, {mode}", Counter(found)) for mode, found in modes.items()]
        assert set(modes["default"]) <= {"same output", "clear error"}, modes
        assert set(modes["verify=False"]) <= {"same output", "other output", "clear error"}
        assert modes["default"]["clear error"] > STORE_MUTATIONS / 2
        assert sum(modes["default"].values()) == STORE_MUTATIONS
    with capsys.disabled():
        print("\n" + "\n".join(lines))


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        found = store_outcomes(Path(folder))
    if sys.argv[1:] == ["--json"]:
        print(json.dumps(found))
    else:
        for name, modes in found.items():
            for mode, counts in modes.items():
                print(report(f"{name}, {mode}", counts))
