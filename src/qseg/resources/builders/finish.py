"""The last step of every build, whatever engine counted: from table ``entries`` to a store.

It adds the proper prefixes of multiword keys (value 0), sets the extendable bits, sorts the
keys by their store hash (out of core, in DuckDB) and streams them into a :class:`StoreWriter`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from qseg import signals
from qseg.errors import DataError
from qseg.resources.builders.duckdb_engine import duckdb_error
from qseg.resources.store import Store, StoreWriter

BATCH_ROWS = 1 << 18


def write_store(
    con: Any,
    output: Path | None,
    *,
    kind: str,
    mode: str,
    header: dict[str, Any],
    options: dict[str, Any],
    progress: Callable[[int], None] | None = None,
) -> Store:
    """Write table ``entries(ngram, count)`` of ``con`` as a store at ``output``."""
    import duckdb

    try:
        con.execute(
            """
            CREATE TABLE prefixes AS
            SELECT DISTINCT array_to_string(t.w[1:r.k], ' ') AS prefix
            FROM (SELECT string_split(ngram, ' ') AS w FROM entries
                  WHERE ngram LIKE '% % %') t,
                 LATERAL (SELECT unnest(range(2, len(t.w))) AS k) r
            """
        )
        con.execute(
            """
            CREATE TABLE keys AS
            SELECT coalesce(e.ngram, p.prefix) AS key,
                   coalesce(e.count, 0)::UBIGINT AS value,
                   p.prefix IS NOT NULL AS ext
            FROM entries e FULL OUTER JOIN prefixes p ON e.ngram = p.prefix
            """
        )
        con.execute("DROP TABLE prefixes")
        signals.check()
        n_keys, key_bytes, max_value, max_words, unigram_total, entries = con.execute(
            """
            SELECT count(*), coalesce(sum(strlen(key)), 0), coalesce(max(value), 0),
                   coalesce(max(len(string_split(key, ' '))) FILTER (WHERE value > 0), 0),
                   coalesce(sum(value) FILTER (WHERE value > 0 AND NOT contains(key, ' ')), 0),
                   count(*) FILTER (WHERE value > 0)
            FROM keys
            """
        ).fetchall()[0]
        if not entries:
            raise DataError("nothing to store: no n-gram reached the minimum count")
        header = header | {"max_words": int(max_words), "unigram_total": int(unigram_total)}
        with StoreWriter(
            output,
            kind=kind,
            mode=mode,
            n_keys=int(n_keys),
            key_bytes=int(key_bytes),
            max_value=int(max_value),
            header=header,
            **options,
        ) as writer:
            reader = con.sql(
                "SELECT qseg_hash(key) AS h, value, ext, key FROM keys ORDER BY h, key"
            ).to_arrow_reader(BATCH_ROWS)
            for batch in reader:
                signals.check()
                writer.add(
                    batch.column("h").to_numpy(),
                    batch.column("value").to_numpy(),
                    np.asarray(batch.column("ext").to_numpy(zero_copy_only=False)),
                    batch.column("key") if mode == "exact" else None,
                )
                if progress:
                    progress(batch.num_rows)
            signals.check()
            return writer.finish()
    except duckdb.Error as exc:
        raise duckdb_error(exc) from None
