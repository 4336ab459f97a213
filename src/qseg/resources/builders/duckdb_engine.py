"""The DuckDB engine: n-gram counting and store writing on one machine, larger than memory.

DuckDB runs embedded, in a database file inside the build's temporary folder, so that it can
spill to disk under ``memory_limit``. Count files (Web1T, ``ngram<TAB>count``) are read by
DuckDB's own CSV reader; lines of text are read and normalized by qseg and expanded into
n-grams by the compiled ``_ngrams`` module, then summed by DuckDB.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from qseg import signals
from qseg.errors import DataError, InputError, QsegError
from qseg.query import QueryError, ngram_key
from qseg.resources._store import hash_utf8_column
from qseg.resources.builders._ngrams import expand_lines
from qseg.resources.builders.sources import Source, text_batches
from qseg.resources.counts import MAX_COUNT, first_bad_count_line

# n-grams that need no normalization but lower-casing: printable ASCII without |"() and
# single spaces between tokens (the SQL twin of qseg.query's fast path)
CLEAN_ASCII = r"[!#-'*-{}~]+( [!#-'*-{}~]+)*"
_CLEAN_SQL = CLEAN_ASCII.replace("'", "''")
_BAD_LINE = "qseg: not a count line:"
_BAD_SUM = "qseg: counts add up past the limit:"


def connect(workdir: Path, memory_limit: str | None, threads: int | None) -> Any:
    """A DuckDB connection with qseg's settings and functions."""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect(str(workdir / "build.duckdb"))
    try:
        con.execute(f"SET temp_directory = '{workdir / 'spill'}'")
        con.execute("SET preserve_insertion_order = false")
        con.execute("SET enable_progress_bar = false")
        if memory_limit:
            con.execute(f"SET memory_limit = '{memory_limit}'")
        if threads:
            con.execute(f"SET threads = {int(threads)}")
    except duckdb.Error as exc:
        con.close()
        raise QsegError(f"DuckDB refused a setting: {str(exc).splitlines()[0]}") from None

    def ngram_keys(column: Any) -> Any:
        keys = []
        for text in column.to_pylist():
            try:
                keys.append(ngram_key(text))
            except QueryError:
                raise QsegError(f"an n-gram is empty or blank: {text!r}") from None
        return pa.array(keys, pa.string())

    def hashes(column: Any) -> Any:
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        column = column.cast(pa.large_string())
        offsets = np.frombuffer(column.buffers()[1], dtype=np.int64)
        offsets = offsets[column.offset : column.offset + len(column) + 1]
        data = column.buffers()[2]
        raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(1, np.uint8)
        return pa.array(hash_utf8_column(raw, np.ascontiguousarray(offsets), 0), pa.uint64())

    con.create_function("qseg_ngram_key", ngram_keys, ["VARCHAR"], "VARCHAR", type="arrow")
    con.create_function("qseg_hash", hashes, ["VARCHAR"], "UBIGINT", type="arrow")
    return con


def duckdb_error(exc: Exception) -> BaseException:
    """A one-line qseg error from a DuckDB exception, naming file and line where it can.

    An interruption that reached Python code inside a query (a user-defined function) comes
    back as :class:`KeyboardInterrupt`.
    """
    if "KeyboardInterrupt" in str(exc) or "interrupted" in str(exc).split("\n")[0].lower():
        return KeyboardInterrupt()
    lines = [s.strip() for s in str(exc).splitlines() if s.strip()]
    first = lines[0] if lines else "DuckDB failed"
    line = re.search(r"CSV Error on Line: (\d+)", first)
    if not line:
        return DataError(first.split(": ", 1)[-1] if "Error: " in first else first)
    file = next((s.removeprefix("file = ") for s in lines if s.startswith("file = ")), "input")
    reason = next(
        (
            s
            for s in lines[1:]
            if not s.startswith(
                (
                    "Original Line",
                    "Possible",
                    "*",
                    "file =",
                    "delimiter",
                    "quote",
                    "escape",
                    "new_line",
                    "Column ",
                )
            )
        ),
        first,
    )
    return InputError(file, int(line.group(1)), reason)


def count_ngrams(
    con: Any,
    source: Source,
    min_count: int,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Fill table ``entries(ngram, count)``: summed counts >= ``min_count``; returns stats."""
    import duckdb

    try:
        if source.kind == "text":
            lines_read = 0

            def batches() -> Iterator[tuple[list[str], np.ndarray]]:
                nonlocal lines_read
                for lines, counts, done in text_batches(source.files):
                    yield lines, counts
                    lines_read += len(lines)
                    if progress:
                        progress(done)

            count_lines(con, batches(), source.max_order, min_count)
            return {"lines": lines_read, "skipped_ngrams": 0}
        files = [str(f) for f in source.files]
        # a count line as qseg.resources.counts.parse_count_line reads it; a line that is not
        # one stops the query, and that function then names it
        con.execute(
            f"""
            CREATE TABLE normalized AS
            SELECT key, CASE WHEN sum("count") > {MAX_COUNT}
                             THEN error('{_BAD_SUM} ' || key) END AS overflow,
                   sum("count")::UBIGINT AS count, count(*) AS rows FROM (
                SELECT CASE
                    WHEN regexp_full_match(ngram, '{_CLEAN_SQL}') THEN lower(ngram)
                    WHEN regexp_matches(ngram, '["|()]') THEN NULL
                    ELSE qseg_ngram_key(ngram) END AS key,
                    CASE WHEN ngram IS NOT NULL AND regexp_full_match(c, '[0-9]{{1,19}}')
                              AND TRY_CAST(c AS HUGEINT) <= {MAX_COUNT}
                         THEN c::UBIGINT
                         ELSE error('{_BAD_LINE} ' || coalesce(ngram, '')) END AS "count"
                FROM read_csv(?, auto_detect = false, delim = '\t', quote = '', escape = '',
                              header = false, comment = '',
                              columns = {{'ngram': 'VARCHAR', 'c': 'VARCHAR'}})
            ) GROUP BY key
            """,
            [files],
        )
        skipped = con.execute("SELECT coalesce(sum(rows), 0) FROM normalized WHERE key IS NULL")
        skipped_rows = int(skipped.fetchall()[0][0])
        con.execute(
            "CREATE TABLE entries AS SELECT key AS ngram, count FROM normalized "
            "WHERE key IS NOT NULL AND count >= ?",
            [min_count],
        )
        con.execute("DROP TABLE normalized")
        signals.check()
        return {"skipped_ngrams": skipped_rows}
    except duckdb.Error as exc:
        if _BAD_LINE in str(exc) or "CSV Error on Line" in str(exc):
            first_bad_count_line(source.files)  # raises the loader's error, file and line
        if _BAD_SUM in str(exc):
            key = str(exc).split(_BAD_SUM, 1)[1].split("\n")[0].strip()
            raise DataError(f"the counts of {key!r} add up to more than {MAX_COUNT}") from None
        raise duckdb_error(exc) from None


def count_lines(
    con: Any,
    batches: Iterable[tuple[list[str], np.ndarray]],
    max_order: int,
    min_count: int,
) -> None:
    """Fill table ``entries(ngram, count)`` with the 1..``max_order``-grams of lines whose words
    are already normalized and joined by single spaces, each line weighted by its count."""
    con.execute("CREATE TABLE partial (ngram VARCHAR, count UBIGINT)")
    for lines, counts in batches:
        signals.check()
        offsets, data, gram_counts = expand_lines(lines, counts, max_order)
        _insert_partial(con, offsets, data, gram_counts)
    con.execute(
        "CREATE TABLE entries AS SELECT ngram, sum(count)::UBIGINT AS count "
        "FROM partial GROUP BY ngram HAVING sum(count) >= ?",
        [min_count],
    )
    con.execute("DROP TABLE partial")
    signals.check()


def _insert_partial(con: Any, offsets: np.ndarray, data: np.ndarray, counts: np.ndarray) -> None:
    import pyarrow as pa

    grams = pa.LargeStringArray.from_buffers(len(counts), pa.py_buffer(offsets), pa.py_buffer(data))
    batch = pa.table({"ngram": grams, "count": pa.array(counts, pa.uint64())})
    con.register("batch", batch)
    con.execute("INSERT INTO partial SELECT ngram, sum(count)::UBIGINT FROM batch GROUP BY ngram")
    con.unregister("batch")


def load_parquet_entries(con: Any, directory: Path) -> None:
    """Make table ``entries`` from Parquet files written by another engine."""
    con.execute(
        "CREATE TABLE entries AS SELECT ngram, count::UBIGINT AS count FROM read_parquet(?)",
        [str(directory / "*.parquet")],
    )
