"""The joint kernel of this tree against the one of an earlier commit, in one process on one core:
the same answers, and the speed of each.

Pins the process to one core and every numeric library to one thread before any loads, then
builds the compiled files of ``src/qseg/segmenters/learned/`` at ``--before`` (every ``_*.pyx``,
``_*.pxd`` and ``_*.h``, and ``compiled.py``, which makes the kernel from a model) into a
temporary package of their own, their cimports of each other pointed at it. Both kernels are
made from the same models (the default's in each style), and each decides:

- the 3,848 Webis-QSeC-10 queries one at a time (``breaks``), each query's best time over
  :data:`ROUNDS` rounds with the two kernels interleaved in each: median and 99th percentile
  in microseconds and the ratio of this tree's to the earlier one's;
- 300 queries each of 13, 20 and 40 words (windows of the Webis queries put one after the
  other: the long path, with its k-best and dynamic programs), the same way;
- and it counts the queries on which the two disagree (break bits, and the ranked candidates
  with their scores for a window of 8), which must be none.

    python benchmarks/kernel_before_after.py [--before REV] [--shared ../shared]

``--before`` must have the ``segmenters/learned/`` layout (commit 80e77cb or later); its
default is the last commit before the kernel was split into parts.
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after pinning: the libraries read their thread counts on load)
import importlib  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from _timing import percentile, windows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LEARNED = "src/qseg/segmenters/learned"
BEFORE = "4cf5c7f"
"""The last commit with the kernel in one file (``_joint_kernel.pyx``, 1,474 lines)."""
ROUNDS = 15
PACKAGE = "qseg_kernel_before"
BUILD = """
import sys
from Cython.Build import cythonize
from setuptools import setup
setup(
    ext_modules=cythonize(sys.argv[1:], include_path=[".", {src!r}], language_level=3, quiet=True),
    script_args=["build_ext", "--inplace"],
)
"""


def build_before(revision: str, folder: Path) -> object:
    """The ``compiled`` module of ``revision``, its kernels built in ``folder``."""
    package = folder / PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", f"{revision}:{LEARNED}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    names = [n for n in listed if n.startswith("_") and n.endswith((".pyx", ".pxd", ".h"))]
    if "compiled.py" not in listed or not any(n.endswith(".pyx") for n in names):
        raise SystemExit(f"{revision} has no compiled kernel under {LEARNED}")
    for name in [*names, "compiled.py"]:
        text = subprocess.run(
            ["git", "show", f"{revision}:{LEARNED}/{name}"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        (package / name).write_text(text.replace("qseg.segmenters.learned._", f"{PACKAGE}._"))
    sources = [f"{PACKAGE}/{n}" for n in names if n.endswith(".pyx")]
    started = time.perf_counter()
    built = subprocess.run(
        [sys.executable, "-c", BUILD.format(src=str(ROOT / "src")), *sources],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if built.returncode:
        raise SystemExit(f"the kernel of {revision} does not build:\n{built.stderr[-3000:]}")
    print(
        f"built the kernel of {revision} ({len(sources)} modules) in "
        f"{time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )
    sys.path.insert(0, str(folder))
    return importlib.import_module(f"{PACKAGE}.compiled")


def best_times(kernels: list, queries: list[tuple[str, ...]]) -> list[list[float]]:
    """Per kernel, each query's best time over :data:`ROUNDS` rounds (one round of warming
    up first), the kernels interleaved in each round, which of them goes first alternating."""
    clock = time.perf_counter
    best = [[float("inf")] * len(queries) for _ in kernels]
    for round_ in range(ROUNDS + 1):
        order = list(enumerate(kernels))
        for k, kernel in order if round_ % 2 else order[::-1]:
            breaks = kernel.breaks
            for i, words in enumerate(queries):
                started = clock()
                breaks(words)
                took = clock() - started
                if round_ and took < best[k][i]:
                    best[k][i] = took
    return best


def disagreements(before, after, queries: list[tuple[str, ...]]) -> int:
    """Queries on which the kernels' answers or ranked candidates differ in a bit."""
    differ = 0
    for words in queries:
        (bits_a, scores_a), (bits_b, scores_b) = (
            before.candidates(words, 8),
            after.candidates(words, 8),
        )
        same = (
            before.breaks(words) == after.breaks(words)
            and bits_a.tobytes() == bits_b.tobytes()
            and scores_a.tobytes() == scores_b.tobytes()
        )
        differ += not same
    return differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help=f"the earlier commit (default {BEFORE})")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    if not webis.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {webis} (../shared is absent)")
    folder = Path(tempfile.mkdtemp(prefix="qseg-kernel-"))
    try:
        old = build_before(args.before, folder)
        measure(old, webis, args.before)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def measure(old, webis: Path, revision: str) -> None:
    import qseg
    from qseg.corpora.webis import read_training_set
    from qseg.query import normalize
    from qseg.segmenters.learned.compiled import compile_model

    texts = [" ".join(w) for w in read_training_set(webis).words.values()]
    sets = {"Webis queries": texts, **{f"{n} words": windows(texts, n) for n in (13, 20, 40)}}
    default = qseg.segmenter("default(style=auto)")
    print(
        f"| model | queries | median µs {revision} | median µs now | ratio | "
        f"p99 µs {revision} | p99 µs now | ratio | answers that differ |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for style, model in default.models.items():
        before, after = old.compile_model(model), compile_model(model)
        for label, chosen in sets.items():
            queries = [q for q in (normalize(t) for t in chosen) if len(q) >= 2]
            times = best_times([before, after], queries)
            medians = [statistics.median(t) * 1e6 for t in times]
            tails = [percentile(t, 0.99) * 1e6 for t in times]
            differ = disagreements(before, after, queries)
            print(
                f"| default, {style} | {label} ({len(queries)}) | {medians[0]:.2f} | "
                f"{medians[1]:.2f} | {medians[1] / medians[0]:.3f} | {tails[0]:.2f} | "
                f"{tails[1]:.2f} | {tails[1] / tails[0]:.3f} | {differ} |"
            )


if __name__ == "__main__":
    main()
