"""Building stores: ``qseg build ngrams`` and ``qseg build titles``.

A build counts (or collects) its entries with an engine -- DuckDB on one machine, or Spark
(local mode here, a cluster with ``master``) -- and then writes the store with DuckDB (see
``finish.py``). All intermediate files live in a hidden temporary folder beside the output,
removed when the build ends, however it ends; the store appears only when complete.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qseg import signals
from qseg.errors import QsegError
from qseg.fileio import check_output_file, clear_leftovers, file_lock, live_folder, lock_path
from qseg.progress import progress_bar
from qseg.resources.builders.sources import Source, resolve
from qseg.resources.store import (
    DEFAULT_COUNT_BITS,
    DEFAULT_FINGERPRINT_BITS,
    MAX_VALUE_BITS,
    MODES,
    Store,
)

ENGINES = ("duckdb", "spark")


class Reporter:
    """Stage messages and progress bars on stderr (or nothing, when quiet)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.started = time.perf_counter()

    def say(self, message: str) -> None:
        if not self.quiet:
            elapsed = time.perf_counter() - self.started
            print(f"qseg build [{elapsed:7.1f}s] {message}", file=sys.stderr, flush=True)

    def bar(self, total: int | None, unit: str, desc: str) -> Any:
        return progress_bar(self.quiet, unit, desc, total)


@contextmanager
def workspace(output: Path, report: Reporter | None = None) -> Iterator[Path]:
    """A hidden temporary folder beside ``output`` for a build's intermediate files, under the
    output's lock (a second build of the same file waits), after removing what killed builds
    of it left there.

    DuckDB turns a signal that arrives during a query into ``RuntimeError("Query
    interrupted")``; it is raised on as :class:`KeyboardInterrupt`, after the clean-up.
    """
    check_output_file(output)
    output.parent.mkdir(parents=True, exist_ok=True)

    def waiting() -> None:
        if report is not None:
            report.say(f"waiting for another build of {output} to finish")

    with file_lock(lock_path(output), waiting):
        for item in clear_leftovers(output):
            if report is not None:
                report.say(f"removed {item.name}, left by a build that was stopped")
        try:
            with (
                tempfile.TemporaryDirectory(
                    prefix=f".{output.name}.build-", dir=output.parent
                ) as tmp,
                live_folder(tmp),
            ):
                yield Path(tmp)
        except RuntimeError as exc:
            if "interrupted" in str(exc).lower():
                raise KeyboardInterrupt from None
            raise


@contextmanager
def _database(
    output: Path, memory_limit: str | None, threads: int | None, report: Reporter | None = None
) -> Iterator[tuple[Path, Any]]:
    """The workspace of a build beside ``output`` and a DuckDB connection inside it."""
    from qseg.resources.builders.duckdb_engine import connect

    with workspace(output, report) as work:
        con = connect(work, memory_limit, threads)
        try:
            yield work, con
        finally:
            con.close()


def _store_options(mode: str, fingerprint_bits: int, count_bits: int | None) -> dict[str, Any]:
    """The store writer's options, checked before any work."""
    if mode not in MODES:
        raise QsegError(f"`mode` must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "exact":
        return {}
    if not 1 <= fingerprint_bits <= 48:
        raise QsegError(f"`fingerprint_bits` must be between 1 and 48, got {fingerprint_bits}")
    most = min(MAX_VALUE_BITS, 56 - fingerprint_bits)
    if count_bits is not None and not 1 <= count_bits <= most:
        raise QsegError(
            f"`count_bits` must be between 1 and {most} (with {fingerprint_bits} fingerprint "
            f"bits), got {count_bits}"
        )
    options: dict[str, Any] = {"fingerprint_bits": fingerprint_bits}
    if count_bits is not None:
        options["value_bits"] = count_bits
    return options


def _finish(
    con: Any,
    output: Path,
    *,
    kind: str,
    mode: str,
    header: dict[str, Any],
    options: dict[str, Any],
    report: Reporter,
) -> Store:
    from qseg.resources.builders.finish import write_store

    report.say("sorting keys by hash and writing the store")
    with report.bar(None, "keys", "writing") as bar:
        store = write_store(
            con,
            output,
            kind=kind,
            mode=mode,
            header=header,
            options=options,
            progress=bar.update,
        )
    info = store.info
    report.say(
        f"wrote {output}: {info.entries:,} entries, {info.keys:,} keys, "
        f"{info.size_bytes / 1e6:,.1f} MB ({info.bytes_per_key:.2f} bytes a key)"
    )
    return store


def build_ngrams(
    inputs: Sequence[str | Path],
    output: str | Path,
    *,
    source: str = "counts",
    engine: str = "duckdb",
    mode: str = "exact",
    min_count: int = 1,
    max_order: int = 5,
    memory_limit: str | None = None,
    threads: int | None = None,
    master: str | None = None,
    fingerprint_bits: int = DEFAULT_FINGERPRINT_BITS,
    count_bits: int | None = DEFAULT_COUNT_BITS,
    quiet: bool = False,
) -> Store:
    """Count n-grams from ``inputs`` of kind ``source`` and write an n-gram store."""
    if engine not in ENGINES:
        raise QsegError(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    if min_count < 1:
        raise QsegError(f"`min_count` must be at least 1, got {min_count}")
    if master and engine != "spark":
        raise QsegError("`master` is for the Spark engine; add `engine='spark'`")
    resolved = resolve(source, inputs, max_order)
    output = Path(output)
    report = Reporter(quiet)
    options = _store_options(mode, fingerprint_bits, count_bits)
    from qseg.resources.builders.duckdb_engine import count_ngrams, load_parquet_entries

    with _database(output, memory_limit, threads, report) as (work, con):
        report.say(f"counting {resolved.kind} n-grams with {engine} ({len(resolved.files)} files)")
        if engine == "spark":
            from qseg.resources.builders.spark_engine import count_ngrams_spark

            stats = count_ngrams_spark(
                resolved,
                min_count,
                work / "entries",
                master=master,
                memory_limit=memory_limit,
                threads=threads,
            )
            load_parquet_entries(con, work / "entries")
        else:
            with report.bar(_text_size(resolved), "B", "reading") as bar:
                last = [0]

                def advance(done: int) -> None:
                    bar.update(done - last[0])
                    last[0] = done

                stats = count_ngrams(con, resolved, min_count, advance)
        signals.check()
        if stats.get("skipped_ngrams"):
            report.say(f'skipped {stats["skipped_ngrams"]:,} n-grams with |"() characters')
        header = {
            "source": resolved.describe()
            | {
                "engine": engine,
                "min_count": min_count,
                "max_order": max_order,
            }
            | stats,
        }
        return _finish(
            con, output, kind="counts", mode=mode, header=header, options=options, report=report
        )


def _text_size(source: Source) -> int | None:
    if source.kind != "text" or any(f.suffix == ".gz" for f in source.files):
        return None
    return sum(f.stat().st_size for f in source.files)


def build_titles(
    inputs: Sequence[str | Path],
    output: str | Path,
    *,
    stop_titles: str | Path | None = None,
    single_words: bool = False,
    mode: str = "exact",
    memory_limit: str | None = None,
    threads: int | None = None,
    fingerprint_bits: int = DEFAULT_FINGERPRINT_BITS,
    quiet: bool = False,
) -> Store:
    """Collect titles from Wikipedia ``all-titles-in-ns0`` dumps into a title store."""
    from qseg.resources.builders.titles import dump_titles, read_stop_titles

    resolved = resolve("text", inputs, 1)
    stop = read_stop_titles(Path(stop_titles)) if stop_titles else set()
    header = {
        "source": resolved.describe()
        | {
            "kind": "wikipedia-titles",
            "single_words": single_words,
            "stop_titles": str(stop_titles) if stop_titles else None,
        }
    }
    return build_title_store(
        dump_titles(resolved.files, stop, single_words),
        output,
        header=header,
        mode=mode,
        memory_limit=memory_limit,
        threads=threads,
        fingerprint_bits=fingerprint_bits,
        quiet=quiet,
    )


def build_title_store(
    batches: Iterable[list[str]],
    output: str | Path,
    *,
    header: dict[str, Any],
    mode: str = "exact",
    memory_limit: str | None = None,
    threads: int | None = None,
    fingerprint_bits: int = DEFAULT_FINGERPRINT_BITS,
    quiet: bool = False,
) -> Store:
    """A title store from batches of normalized title keys (duplicates allowed)."""
    output = Path(output)
    report = Reporter(quiet)
    options = _store_options(mode, fingerprint_bits, None)
    with _database(output, memory_limit, threads, report) as (_, con):
        report.say("collecting titles")
        with report.bar(None, "titles", "reading") as bar:
            _collect(con, batches, bar.update)
        con.execute(
            "CREATE TABLE entries AS SELECT DISTINCT text AS ngram, 1::UBIGINT AS count "
            "FROM collected"
        )
        con.execute("DROP TABLE collected")
        return _finish(
            con,
            output,
            kind="titles",
            mode=mode,
            header=header,
            options=options,
            report=report,
        )


def build_line_ngrams(
    batches: Iterable[list[str]],
    output: str | Path,
    *,
    header: dict[str, Any],
    max_order: int,
    mode: str = "compact",
    quiet: bool = False,
    min_count: int = 1,
    fingerprint_bits: int = DEFAULT_FINGERPRINT_BITS,
    count_bits: int = DEFAULT_COUNT_BITS,
) -> Store:
    """An n-gram store of the distinct lines in ``batches`` (each line counted once), for
    lines whose words are already normalized and joined by single spaces; n-grams seen fewer
    than ``min_count`` times are left out (a smaller store)."""
    import numpy as np

    from qseg.resources.builders.duckdb_engine import count_lines

    output = Path(output)
    report = Reporter(quiet)
    with _database(output, None, None, report) as (_, con):
        report.say("collecting lines")
        _collect(con, batches, lambda _: None)
        distinct = con.sql("SELECT DISTINCT text FROM collected").to_arrow_table()
        con.execute("DROP TABLE collected")
        report.say(f"counting the n-grams of {distinct.num_rows:,} distinct lines")
        pieces = (
            (lines, np.ones(len(lines), dtype=np.uint64))
            for chunk in distinct.column(0).chunks
            for start in range(0, len(chunk), 100_000)
            for lines in [chunk[start : start + 100_000].to_pylist()]
        )
        count_lines(con, pieces, max_order, min_count)
        header = header | {"lines": distinct.num_rows, "max_order": max_order}
        if min_count > 1:
            header["min_count"] = min_count
        return _finish(
            con,
            output,
            kind="counts",
            mode=mode,
            header=header,
            options=_store_options(mode, fingerprint_bits, count_bits),
            report=report,
        )


def _collect(con: Any, batches: Iterable[list[str]], progress: Callable[[int], object]) -> None:
    """Table ``collected(text)`` holding every string of ``batches``, duplicates included.
    Small batches are gathered to :data:`_INSERTED` strings before each insert: a statement
    costs milliseconds, so thousands of small inserts (DBpedia's names come in thousands of
    batches) would take most of the build."""
    import pyarrow as pa

    def insert(strings: list[str]) -> None:
        con.register("batch", pa.table({"text": pa.array(strings, pa.string())}))
        con.execute("INSERT INTO collected SELECT text FROM batch")
        con.unregister("batch")

    con.execute("CREATE TABLE collected (text VARCHAR)")
    gathered: list[str] = []
    for batch in batches:
        signals.check()
        gathered.extend(batch)
        if len(gathered) >= _INSERTED:
            insert(gathered)
            gathered = []
        progress(len(batch))
    if gathered:
        insert(gathered)


_INSERTED = 200_000
"""Strings gathered for one insert into the ``collected`` table."""
