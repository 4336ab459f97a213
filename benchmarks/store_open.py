"""What opening a store costs, with and without checking its checksums.

Opens the built-in stores (counts, titles, and the names statistics when they are cached)
memory-mapped, ``verify=False`` (the envelope and the header's bounds only) and ``verify=True``
(every section's CRC-32 as well; the default for stores of up to 64 MiB), the median of
several opens each, and prints the time of each against the unverified open of the same store.

    python benchmarks/store_open.py [--opens 15]
"""

from __future__ import annotations

import argparse
import statistics
import time

from qseg.fileio import cache_dir
from qseg.resources.default import default_counts, default_titles
from qseg.resources.store import VERIFY_ON_OPEN, Store
from qseg.tables import render_table


def median_ms(path, verify: bool, opens: int) -> float:
    times = []
    for _ in range(opens):
        started = time.perf_counter()
        Store.open(path, verify=verify)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=15)
    args = parser.parse_args()
    default_counts(), default_titles()  # built once if not cached yet
    rows = []
    for path in sorted(cache_dir().glob("*.qseg")):
        plain = median_ms(path, False, args.opens)
        checked = median_ms(path, True, args.opens)
        size = path.stat().st_size
        rows.append(
            [
                path.name,
                f"{size / 1e6:.1f}",
                "yes" if size <= VERIFY_ON_OPEN else "no",
                f"{plain:.2f}",
                f"{checked:.2f}",
                f"{checked / plain:.1f}",
            ]
        )
    header = ["store", "MB", "verified by default", "open ms", "open + CRC ms", "ratio"]
    print(render_table(header, rows))


if __name__ == "__main__":
    main()
