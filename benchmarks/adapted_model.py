"""Speed of a model adapted from the default (``qseg train --from default``) against the
default itself, in the hot path of a search request, on one core.

Pins the process to one core and every numeric library to one thread before any loads, then
adapts the default's web model to the first 1,000 queries of QueryNER train from each start
(``continue``: the base's trees and 100 more in each ensemble; ``fresh``: trees of the
annotations alone, the base's size; ``both``: the two decoded together, two models a query),
saves them, loads them as ``qseg segment --method`` would, and measures, the models
interleaved in each of :data:`ROUNDS` rounds (after one of warming up), on the 3,848
Webis-QSeC-10 queries:

- single: microseconds a query segmented one at a time (``segment``, each query's best of the
  rounds): median, 99th percentile, and the median's ratio to the default's in the same run;
- batch: queries/s with ``segment_many`` (best round) and the ratio to the default's;
- that the compiled path gives the Python path's answers on every query.

    python benchmarks/adapted_model.py [--shared ../shared]
"""

from __future__ import annotations

import os

os.sched_setaffinity(0, {0})
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402  (after pinning: the libraries read their thread counts on load)
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from _timing import percentile, single_pass  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 3
ANNOTATED = 1000


def batch_rate(segmenter, texts: list[str]) -> float:
    started = time.perf_counter()
    for _ in segmenter.segment_many(texts):
        pass
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    webis = args.shared / "data" / "webis-qsec-10-training"
    queryner = args.shared / "data" / "queryner" / "train.jsonl"
    if not webis.exists() or not queryner.exists():
        raise SystemExit(f"the corpora are not found under {args.shared} (../shared is absent)")
    import qseg
    from qseg.annotation.gold import read_annotated
    from qseg.corpora.webis import read_training_set
    from qseg.models import save
    from qseg.models.adapting import base_model, fit_adapted

    texts = [" ".join(w) for w in read_training_set(webis).words.values()]
    gold = read_annotated(queryner)
    words, targets = gold.words[:ANNOTATED], gold.targets[:ANNOTATED]
    base = base_model("default")
    folder = Path(tempfile.mkdtemp(prefix="qseg-bench-"))
    try:
        models = {"default": qseg.segmenter("default")}
        for start in ("continue", "both", "fresh"):
            path = folder / f"{start}.qseg"
            save(fit_adapted(base, words, targets, start), path)
            models[f"adapted ({start})"] = qseg.segmenter(str(path))
        for name, model in models.items():
            python = model.uncompiled().predict(texts)  # type: ignore[attr-defined]
            if python != model.predict(texts):  # type: ignore[attr-defined]
                raise SystemExit(f"{name}: the compiled path differs from the Python path")
        single = {name: [float("inf")] * len(texts) for name in models}
        rates = dict.fromkeys(models, 0.0)
        for run in range(ROUNDS + 1):
            for name, model in models.items():
                took = single_pass(model, texts)
                rate = batch_rate(model, texts)
                if run:
                    single[name] = [min(a, b) for a, b in zip(single[name], took, strict=True)]
                    rates[name] = max(rates[name], rate)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    base_p50 = percentile(single["default"], 0.5)
    print(f"one core: {sorted(os.sched_getaffinity(0))}; {len(texts)} Webis queries; adapted to")
    print(f"the first {ANNOTATED} QueryNER train queries; compiled = Python path on every query")
    print(
        f"{'model':20} {'p50 (us)':>9} {'p99':>7} {'x default':>10} {'batch (q/s)':>12} "
        f"{'x default':>10}"
    )
    for name in models:
        p50, p99 = (percentile(single[name], q) * 1e6 for q in (0.5, 0.99))
        print(
            f"{name:20} {p50:9.1f} {p99:7.1f} {p50 / 1e6 / base_p50:10.2f} {rates[name]:12,.0f} "
            f"{rates[name] / rates['default']:10.2f}"
        )


if __name__ == "__main__":
    main()
