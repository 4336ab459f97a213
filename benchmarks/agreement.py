"""Speed of the agreement measures on the Webis crowd votes (38,537 annotations of 3,848 queries).

Prints the time of: alpha alone; alpha and S with 1,000 bootstrap replicates; the bias
statistics; the ``krippendorff`` package on the same items, one query length at a time (the
package cannot compare queries of different lengths, so it gets the equal-length groups and
each distinct break vector as a value); and the random model's enumeration for every length,
computed afresh (an empty cache folder).

    python benchmarks/agreement.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def timed(label: str, work, repeat: int = 3) -> object:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    print(f"{label:<58} {best * 1000:10.1f} ms")
    return result


def package_alpha(items) -> float:
    import krippendorff

    domain = sorted({a.segmentation.breaks for annots in items.values() for a in annots})
    code = {b: i for i, b in enumerate(domain)}
    vectors = np.array(domain, dtype=float)
    data = np.full((max(len(v) for v in items.values()), len(items)), np.nan)
    for u, annots in enumerate(items.values()):
        for j, a in enumerate(annots):
            data[j, u] = code[a.segmentation.breaks]

    def d1(v1, v2, i1, i2, n_v, dtype=np.float64):
        return np.abs(vectors[np.asarray(v1, int)] - vectors[np.asarray(v2, int)]).mean(-1)

    return krippendorff.alpha(
        reliability_data=data, value_domain=list(range(len(domain))), level_of_measurement=d1
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    votes_file = (
        args.shared
        / "data"
        / "webis-qsec-10-training"
        / "webis-qsec-10-training-set-segmentations-crowdsourced.txt"
    )
    if not votes_file.exists():
        raise SystemExit(f"Webis-QSeC-10 corpus not found at {votes_file}")
    os.environ["QSEG_CACHE"] = tempfile.mkdtemp(prefix="qseg-bench-")

    from qseg.corpora.annotations import read_webis_votes
    from qseg.evaluation import random_model
    from qseg.evaluation.agreement import agreement, by_length, krippendorff_alpha
    from qseg.evaluation.bias import bias_statistics

    votes = timed("read the crowd votes", lambda: read_webis_votes(votes_file))
    timed("alpha (d)", lambda: krippendorff_alpha(votes))
    timed("alpha and S with 1,000 bootstrap replicates", lambda: agreement(votes), repeat=1)
    timed("bias statistics", lambda: bias_statistics(votes))
    groups = by_length(votes)
    timed("qseg alpha, each length group", lambda: [krippendorff_alpha(g) for g in groups.values()])
    timed(
        "krippendorff package, each length group",
        lambda: [package_alpha(g) for g in groups.values()],
        repeat=1,
    )
    print("\nrandom model, enumerated afresh (d1 and d2 for nested):")
    for n in range(2, random_model.MAX_NESTED_WORDS + 1):
        start = time.perf_counter()
        random_model.pair_counts(n, "flat")
        flat = time.perf_counter() - start
        start = time.perf_counter()
        random_model.pair_counts(n, "nested", 1)
        random_model.pair_counts(n, "nested", 2)
        nested = time.perf_counter() - start
        trees = len(random_model.binary_trees(n))
        print(f"  {n:2d} words: flat {flat * 1000:8.1f} ms, {trees:6d} trees {nested:8.2f} s")


if __name__ == "__main__":
    main()
