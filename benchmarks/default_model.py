"""Speed of the shipped default model, and of the most accurate trained model, on one core.

Pins the process to one core and every numeric library to one thread before any loads, then
for each model:

- batch: the 3,848 Webis-QSeC-10 queries segmented with ``segment_many`` (best of 5 passes),
  queries/s and the ratio to ``wiki(unseen_titles=true)`` (the rule-based default, built-in
  resources) measured the same way in the same run;
- load: opening the model in a fresh process (``qseg.segmenter(...)``, imports included),
  median of 7;
- ``qseg segment "new york yankees tickets"`` with the model, a fresh process, warm cache,
  median of 7.

The most accurate model is ``joint`` (with the contextual probe) trained here on the Webis
queries with the built-in resources; ``--no-joint`` skips it.

    python benchmarks/default_model.py [--shared ../shared] [--no-joint]
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after pinning: the libraries read their thread counts on load)
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUERY = "new york yankees tickets"


def batch_rate(segmenter, texts: list[str], repeats: int = 1, passes: int = 5) -> float:
    rates = []
    for _ in range(passes):
        started = time.perf_counter()
        for _ in range(repeats):
            for _ in segmenter.segment_many(texts):
                pass
        rates.append(repeats * len(texts) / (time.perf_counter() - started))
    return max(rates)


def process_seconds(command: list[str], runs: int = 7) -> float:
    """Median wall time of a fresh process on core 0 (after one untimed run)."""
    times = []
    for run in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if run:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--no-joint", action="store_true", help="only the default model")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    if not webis.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {webis} (../shared is absent)")
    import qseg
    from qseg.corpora.webis import read_training_set

    training = read_training_set(webis)
    texts = [" ".join(w) for w in training.words.values()]
    reference = batch_rate(qseg.segmenter("wiki(unseen_titles=true)"), texts, repeats=10)
    qseg_command = shutil.which("qseg", path=str(Path(sys.executable).parent)) or "qseg"
    rows = [("wiki(unseen_titles=true)", reference, None, None)]
    models = {"default": "default"}
    folder = Path(tempfile.mkdtemp(prefix="qseg-bench-"))
    try:
        if not args.no_joint:
            from qseg import models as saved

            joint = saved.estimator("joint").fit(
                list(training.words.values()), list(training.votes.values())
            )
            saved.save(joint, folder / "joint.qseg")
            models["joint (Webis, encoder)"] = str(folder / "joint.qseg")
        for name, spec in models.items():
            rate = batch_rate(qseg.segmenter(spec), texts)
            load = process_seconds([sys.executable, "-c", f"import qseg; qseg.segmenter({spec!r})"])
            command = process_seconds([qseg_command, "segment", "--method", spec, QUERY])
            rows.append((name, rate, load, command))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"one core: {sorted(os.sched_getaffinity(0))}; {len(texts)} Webis queries")
    print(
        f"{'model':28} {'batch (q/s)':>12} {'x wiki':>8} {'load (s)':>9} {'qseg segment (s)':>17}"
    )
    for name, rate, load, command in rows:
        timing = "" if load is None else f"{load:9.3f} {command:17.3f}"
        print(f"{name:28} {rate:12,.0f} {rate / reference:8.4f} {timing}")


if __name__ == "__main__":
    main()
