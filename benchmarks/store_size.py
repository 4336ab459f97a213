"""Size, build time, open time and lookup speed of a large synthetic n-gram store.

Generates N n-grams (default 100 million) in DuckDB: N/4 families of a 2-gram and its 3-, 4-
and 5-gram extensions, prefix-closed like Web1T, over a 50,000-word vocabulary, with
heavy-tailed counts >= 40. Builds a compact store through the same final step as
``qseg build`` (prefixes, hashing, out-of-core sort, store writer), then, in a fresh process,
opens it and looks up stored and absent keys.

    python benchmarks/store_size.py [--ngrams 100000000] [--out /tmp/qseg-100m.qseg]
        [--memory-limit 12GB] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GENERATE = """
CREATE TABLE entries AS
WITH base AS (
    SELECT i, 'w' || (i % 50000) || ' w' || (i // 50000) AS key, hash(i) AS h
    FROM range({families}) t(i)
)
SELECT CASE o.k
        WHEN 0 THEN key
        WHEN 1 THEN key || ' w' || (h % 50000)
        WHEN 2 THEN key || ' w' || (h % 50000) || ' w' || ((h // 50000) % 50000)
        ELSE key || ' w' || (h % 50000) || ' w' || ((h // 50000) % 50000)
                 || ' w' || ((h // 2500000000) % 50000)
       END AS ngram,
       (40 + 1000000 // (1 + (h // (o.k + 1)) % 1000000))::UBIGINT AS count
FROM base, range(4) o(k)
"""

QUERY = r"""
import json, random, sys, time
t0 = time.perf_counter()
from qseg.resources.store import Store
imported = time.perf_counter()
store = Store.open(sys.argv[1])
opened = time.perf_counter()
families = int(sys.argv[2])
rng = random.Random(7)
present = []
for _ in range(200_000):
    i = rng.randrange(families)
    present.append(f"w{i % 50000} w{i // 50000}")
absent = [f"x{rng.randrange(10**9)} w{rng.randrange(50000)}" for _ in range(1_000_000)]
start = time.perf_counter()
_, found, _ = store.view.lookup_many(present)
present_rate = len(present) / (time.perf_counter() - start)
start = time.perf_counter()
_, false_hits, _ = store.view.lookup_many(absent)
absent_rate = len(absent) / (time.perf_counter() - start)
start = time.perf_counter()
for key in present[:100_000]:
    store.view.lookup(key)
single_rate = 100_000 / (time.perf_counter() - start)
info = store.info
print(json.dumps({
    "open_ms": (opened - imported) * 1000,
    "present_found": float(found.mean()),
    "false_positive_rate_measured": float(false_hits.mean()),
    "false_positive_rate_stated": info.false_positive_rate,
    "batched_lookups_per_s_present": present_rate,
    "batched_lookups_per_s_absent": absent_rate,
    "single_lookups_per_s": single_rate,
}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ngrams", type=int, default=100_000_000)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "qseg-100m.qseg")
    parser.add_argument("--memory-limit", default="12GB")
    parser.add_argument("--keep", action="store_true", help="keep the store file afterwards")
    args = parser.parse_args()

    from qseg.resources.builders import workspace
    from qseg.resources.builders.duckdb_engine import connect
    from qseg.resources.builders.finish import write_store

    families = args.ngrams // 4
    start = time.perf_counter()
    with workspace(args.out) as work:
        con = connect(work, args.memory_limit, None)
        try:
            con.execute(GENERATE.format(families=families))
            generated = time.perf_counter()
            store = write_store(
                con,
                args.out,
                kind="counts",
                mode="compact",
                header={"source": {"kind": "synthetic", "ngrams": families * 4}},
                options={},
                progress=None,
            )
        finally:
            con.close()
    built = time.perf_counter()
    info = store.info
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    del store
    result = subprocess.run(
        [sys.executable, "-c", QUERY, str(args.out), str(families)],
        capture_output=True,
        text=True,
        check=True,
    )
    query = json.loads(result.stdout)
    print(f"n-grams stored:            {info.entries:,} ({info.keys:,} keys)")
    print(f"store size:                {info.size_bytes / 1e9:.3f} GB")
    print(f"bytes per stored n-gram:   {info.size_bytes / info.entries:.3f}")
    print(f"generate in DuckDB:        {generated - start:.1f} s")
    print(
        f"build (prefixes, hash, sort, write): {built - generated:.1f} s "
        f"(peak RSS of this process {peak_mb:,.0f} MB; DuckDB memory limit "
        f"{args.memory_limit})"
    )
    print(f"open in a fresh process:   {query['open_ms']:.2f} ms")
    print(f"max relative count error:  {info.max_relative_error:.5f}")
    print(
        f"false positives, absent:   {query['false_positive_rate_measured']:.2e} measured, "
        f"{query['false_positive_rate_stated']:.2e} stated; shadowed keys "
        f"{info.shadowed_keys:,}"
    )
    print(f"stored keys found:         {query['present_found']:.6f}")
    print(
        f"batched lookups:           {query['batched_lookups_per_s_present']:,.0f}/s stored, "
        f"{query['batched_lookups_per_s_absent']:,.0f}/s absent"
    )
    print(f"single lookups (Python):   {query['single_lookups_per_s']:,.0f}/s")
    if not args.keep:
        os.unlink(args.out)


if __name__ == "__main__":
    main()
