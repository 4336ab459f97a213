"""Segmenting a query log on Spark (``pip install 'qseg[spark]'``, Java 17+).

What travels to the executors, once: the segmenter pickled (a trained model's arrays, a few MB)
in a broadcast, and each store it reads (n-gram counts, title sets) as a real file through
``SparkContext.addFile``. On an executor, a Python worker opens the segmenter once -- the
stores memory-mapped from the shipped files, each checked against the fingerprint it was
pickled with -- and keeps it in this module's cache (:data:`_OPENED`) for every later task;
nothing is read again per task or per row. Queries go through ``segment_many`` a batch at a
time, in Arrow batches (``mapInPandas``, ``mapInArrow``).

:func:`segment_dataframe` segments a DataFrame's column; :func:`segment_files` runs ``qseg
segment --engine spark``: ``[id<TAB>]query`` text lines (or Parquet) in, the lines ``qseg
segment`` prints out, in order, with the same bad-line rules.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import shutil
import socket
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from qseg.errors import InputError, PathError, QsegError
from qseg.integrations.syntax import Syntax, renderer
from qseg.query import QueryError, normalize
from qseg.resources._store import StoreView, _reopen_view
from qseg.resources.builders.spark_engine import first_line, scratch_session
from qseg.segmenters.base import BATCH, Segmenter
from qseg.streams.lines import query_record
from qseg.streams.records import (
    Record,
    Skipped,
    format_result,
    format_skipped,
    segment_records,
)

_OPENED: dict[str, Segmenter] = {}
"""The segmenters a Python worker has opened, by shipment key: opened once per worker."""
EXAMPLES = 5
"""Bad lines reported by example (all are counted)."""


@dataclass(frozen=True)
class Shipment:
    """A segmenter as it travels: pickled, its stores as shipped file names with their
    fingerprints."""

    key: str
    payload: bytes
    stores: dict[str, str]


class _StorePickler(pickle.Pickler):
    """Pickles a store file's view as a reference to the shipped file, recording the file."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.files: dict[str, tuple[str, str]] = {}

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, StoreView) and obj.origin is not None:
            path, fingerprint = obj.origin
            real = os.path.realpath(path)  # addFile ships the file, never a symlink
            name = Path(real).name
            if self.files.setdefault(name, (real, fingerprint)) != (real, fingerprint):
                raise QsegError(f"two stores are named {name}: {self.files[name][0]}, {real}")
            return ("store", name, fingerprint)
        return None


class _StoreUnpickler(pickle.Unpickler):
    def persistent_load(self, pid: Any) -> Any:
        from pyspark import SparkFiles

        kind, name, fingerprint = pid
        if kind != "store":
            raise pickle.UnpicklingError(f"unknown reference {kind!r}")
        return _reopen_view(SparkFiles.get(name), fingerprint)


def ship(spark: Any, segmenter: Segmenter) -> Any:
    """Send ``segmenter`` to the executors: its stores by ``addFile``, itself in a broadcast
    (returned)."""
    buffer = io.BytesIO()
    pickler = _StorePickler(buffer)
    pickler.dump(segmenter)
    payload = buffer.getvalue()
    shipped = {Path(uri).name for uri in spark.sparkContext.listFiles}
    for name, (path, _) in pickler.files.items():
        if name not in shipped:  # once a session (a file cannot be added twice)
            spark.sparkContext.addFile(path)
    key = hashlib.sha256(payload).hexdigest()[:16]
    stores = {name: fingerprint for name, (_, fingerprint) in pickler.files.items()}
    return spark.sparkContext.broadcast(Shipment(key, payload, stores))


def opened(shipment: Shipment, loads: Any = None) -> Segmenter:
    """The shipped segmenter in this worker: opened once, then from :data:`_OPENED`."""
    segmenter = _OPENED.get(shipment.key)
    if segmenter is None:
        segmenter = _StoreUnpickler(io.BytesIO(shipment.payload)).load()
        _OPENED[shipment.key] = segmenter
        if loads is not None:
            loads.add(1)
    return segmenter


@contextmanager
def spark_session(master: str | None = None) -> Iterator[Any]:
    """A Spark session for segmenting (``local[*]`` by default), stopped at the end, its
    workers running this interpreter unless ``PYSPARK_PYTHON`` says otherwise; an unreachable
    master is one line, Spark's own logging kept to errors."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = master or "local[*]"
    check_master(master)
    local = master.startswith("local")
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    missing = "segmenting on Spark needs PySpark: pip install 'qseg[spark]'"
    with scratch_session(master, "qseg segment", {}, local=local, missing=missing) as session:
        yield session


_LOCAL = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?")
_STANDALONE = re.compile(r"spark://([^:/]+):(\d+)")


def check_master(master: str) -> None:
    """Refuse a master URL that is malformed or whose standalone master cannot be reached
    (Spark would retry for minutes)."""
    if master.startswith("local"):
        if not _LOCAL.fullmatch(master):
            raise QsegError(f"--master {master!r}: expected local, local[N] or local[*]")
        return
    found = _STANDALONE.fullmatch(master)
    if found is None:
        if master.split("://")[0] in ("yarn", "k8s", "mesos") or master == "yarn":
            return
        raise QsegError(f"--master {master!r}: expected local[N], spark://HOST:PORT, yarn, k8s://")
    try:
        socket.create_connection((found.group(1), int(found.group(2))), timeout=5).close()
    except OSError as exc:
        raise QsegError(f"cannot reach the Spark master {master}: {exc.strerror or exc}") from None


# -- a DataFrame's column ---------------------------------------------------------------------


def segment_dataframe(
    df: Any,
    column: str,
    method: str | Segmenter = "default",
    *,
    fmt: str = "pipe",
    syntax: Syntax | None = None,
    output: str = "segmentation",
    errors: str = "raise",
    k: int = 1,
    phrases: str | os.PathLike[str] | None = None,
) -> Any:
    """``df`` with a column ``output``: each row's ``column`` segmented by ``method`` (a spec
    or a segmenter) and written in ``fmt`` (``pipe``, ``quoted``, ``json`` or an engine's
    syntax). A value that is no query raises, naming it, or with ``errors="skip"`` gives
    null. ``phrases``: a phrase file whose phrases every answer keeps whole (a spec's
    segmenter only; :mod:`qseg.segmenters.phrase_list`)."""
    from pyspark.sql.types import StringType, StructField, StructType

    from qseg.models import open_segmenter

    if column not in df.columns:
        raise QsegError(f"no column {column!r}; the columns: {', '.join(df.columns)}")
    if output in df.columns:
        raise QsegError(f"the output column {output!r} is already a column")
    if errors not in ("raise", "skip"):
        raise QsegError(f"errors must be 'raise' or 'skip', not {errors!r}")
    if isinstance(method, str):
        segmenter = open_segmenter(method, phrases=phrases)
    elif phrases is not None:
        raise QsegError("phrases go with a spec; give open_segmenter(spec, phrases=...) instead")
    else:
        segmenter = method
    spark = df.sparkSession
    shipment = ship(spark, segmenter)
    render = None if fmt == "json" else renderer(fmt, syntax)
    schema = StructType([*df.schema.fields, StructField(output, StringType(), True)])

    def batches(frames: Iterator[Any]) -> Iterator[Any]:
        chosen = opened(shipment.value)
        for frame in frames:
            texts = [None if v is None else str(v) for v in frame[column]]
            frame[output] = _segment_values(chosen, texts, fmt, render, errors == "skip", k)
            yield frame

    return df.mapInPandas(batches, schema)


def _segment_values(
    segmenter: Segmenter, texts: list[str | None], fmt: str, render: Any, skip: bool, k: int
) -> list[str | None]:
    good: list[tuple[int, str]] = []
    for i, text in enumerate(texts):
        try:
            if text is None:
                raise QueryError("null: no query")
            normalize(text)
        except QueryError as exc:
            if not skip:
                raise QsegError(f"row value {text!r:.60}: {exc}") from None
            continue
        good.append((i, text))
    out: list[str | None] = [None] * len(texts)
    results = segment_records(
        segmenter, [(None, t) for _, t in good], k=k, scores=fmt == "json", batch=BATCH
    )
    for (i, _), result in zip(good, results, strict=True):
        out[i] = format_result(result, fmt, render).removesuffix("\n")  # type: ignore[arg-type]
    return out


def segment_parquet(
    spark: Any,
    inputs: list[str],
    output: str,
    column: str,
    segmenter: Segmenter,
    *,
    fmt: str = "pipe",
    syntax: Syntax | None = None,
    k: int = 1,
    skip_bad: bool = False,
) -> None:
    """Parquet in, Parquet out: every column of ``inputs`` and ``segmentation``, in order."""
    check_paths(inputs, output)
    _check_output(spark, output)
    frame = _read(", ".join(inputs), lambda: spark.read.parquet(*inputs))
    if column not in frame.columns:
        raise InputError(", ".join(inputs), None, f"no column {column!r}; it has {frame.columns}")
    done = segment_dataframe(
        frame,
        column,
        segmenter,
        fmt=fmt,
        syntax=syntax,
        errors="skip" if skip_bad else "raise",
        k=k,
    )
    with _writing(spark, output):
        done.write.parquet(output)


# -- qseg segment --engine spark --------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What a run on Spark did: lines written, bad lines (count and the first few), and how
    many times a Python worker opened the segmenter (counted by accumulators as the tasks
    run: a task Spark runs again counts again)."""

    lines: int
    bad: int
    examples: list[str]
    loads: int
    workers: int
    """How many Python worker processes ran the segmenting tasks."""


def segment_files(
    spark: Any,
    inputs: list[str],
    output: str,
    segmenter: Segmenter,
    *,
    fmt: str = "pipe",
    syntax: Syntax | None = None,
    k: int = 1,
    skip_bad: bool = False,
    marker: str = "",
) -> Outcome:
    """Segment ``[id<TAB>]query`` lines of ``inputs`` into text files under ``output`` (a
    folder of part files whose concatenation, in name order, is what ``qseg segment`` prints
    for the inputs in order).

    The lines go to Python in Arrow batches (``mapInArrow``), numbered in the JVM
    (:func:`_numbered`), and the output is written by the DataFrame writer: no row is pickled
    on its own, and no line goes through Python only to be counted."""
    check_paths(inputs, output)
    _check_output(spark, output)
    shipment = ship(spark, segmenter)
    sc = spark.sparkContext
    loads = sc.accumulator(0)
    bad = sc.accumulator(0)
    examples = sc.accumulator([], _FirstFew())
    workers = sc.accumulator(set(), _Union())
    written = sc.accumulator(0)
    numbered: Any = None
    for index, path in enumerate(inputs):
        lines = _numbered(spark, index, path)
        numbered = lines if numbered is None else numbered.unionAll(lines)
    render = None if fmt == "json" else renderer(fmt, syntax)

    def partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        chosen = opened(shipment.value, loads)
        workers.add({os.getpid()})
        for batch in batches:
            rows = zip(
                (inputs[i] for i in batch.column(0).to_pylist()),
                batch.column(1).to_pylist(),
                batch.column(2).to_pylist(),
                strict=True,
            )
            records = _records(rows, skip_bad, bad, examples)
            texts = []
            for result in segment_records(chosen, records, k=k, scores=fmt == "json", batch=BATCH):
                if isinstance(result, Skipped):
                    text = format_skipped(result, fmt, marker)
                else:
                    text = format_result(result, fmt, render)
                texts.append(text.removesuffix("\n"))
            written.add(sum(text.count("\n") + 1 for text in texts))
            yield pa.RecordBatch.from_arrays([pa.array(texts, pa.string())], ["value"])

    assert numbered is not None
    with _writing(spark, output):
        numbered.mapInArrow(partition, "value string").write.text(output)
    return Outcome(written.value, bad.value, examples.value, loads.value, len(workers.value))


_ROW_BITS = 33
"""The low bits of ``monotonically_increasing_id``: a row's place in its partition."""


def _numbered(spark: Any, index: int, path: str) -> Any:
    """The lines of input ``index`` (``path``) as (input, line number, bytes), numbered in
    the JVM: one job counts each partition's lines without Python, and a line's number is
    its partition's offset plus its place there (Spark's partitions of one text input
    follow its order, which the output's order relies on too)."""
    from pyspark.sql import functions as F

    text = _read(path, partial(spark.read.option("lineSep", "\n").text, path))
    part = F.spark_partition_id()
    counts = dict(_read(path, lambda: text.groupBy(part).count().collect()))
    offsets, total = [], 0
    for p in range(max(counts, default=-1) + 1):
        offsets += [F.lit(p), F.lit(total)]
        total += counts.get(p, 0)
    offset = F.element_at(F.create_map(*offsets), part) if offsets else F.lit(0)
    place = F.monotonically_increasing_id().bitwiseAND(F.lit((1 << _ROW_BITS) - 1))
    return text.select(
        F.lit(index).alias("input"),
        (offset + place + 1).alias("lineno"),
        F.col("value").cast("binary").alias("line"),
    )


def _records(
    rows: Iterator[tuple[str, int, bytes]], skip_bad: bool, bad: Any, examples: Any
) -> Iterator[Record | Skipped]:
    """Each line's record, as it comes; a bad line raises, or with ``skip_bad`` is counted
    and kept in its place."""
    for path, lineno, raw in rows:
        try:
            yield query_record(raw, lineno, path)
        except InputError as exc:
            if not skip_bad:
                raise
            bad.add(1)
            examples.add([str(exc)])
            yield Skipped(lineno, exc)


@contextmanager
def _writing(spark: Any, output: str) -> Iterator[None]:
    """A Spark job writing ``output``: if it fails, the folder is removed and the error is one
    line."""
    try:
        yield
    except Exception as exc:
        _remove(spark, output)
        raise QsegError(spark_error(exc)) from None


_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
"""A URI Spark reads through Hadoop's file systems (``file://``, ``hdfs://``, ``s3a://``)."""
_EXISTS = "the output exists: Spark writes a new folder; remove it first"


def is_uri(path: str) -> bool:
    return _URI.match(path) is not None


def check_paths(inputs: list[str], output: str) -> None:
    """Every local input is there, the local output is not (checked before Spark starts); a
    URI is Spark's to read (:func:`_read`) and checked when a session runs
    (:func:`_check_output`)."""
    for path in inputs:
        if not is_uri(path) and not Path(path).exists():
            raise PathError(path, "no such input")
    if not is_uri(output) and Path(output).exists():
        raise PathError(output, _EXISTS)


def _hadoop_path(spark: Any, uri: str) -> tuple[Any, Any]:
    """The Hadoop file system of ``uri`` and its path there (the session's configuration)."""
    jvm, context = spark.sparkContext._jvm, spark.sparkContext._jsc
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(context.hadoopConfiguration()), path


def _check_output(spark: Any, output: str) -> None:
    """An output URI that exists is refused before any work (and is never removed)."""
    if not is_uri(output):
        return
    try:
        system, path = _hadoop_path(spark, output)
        exists = system.exists(path)
    except Exception as exc:
        raise QsegError(f"{output}: {spark_error(exc)}") from None
    if exists:
        raise PathError(output, _EXISTS)


def _remove(spark: Any, output: str) -> None:
    """Remove what a failed job wrote into ``output`` (a folder it made: never one that was
    there before, see :func:`_check_output`)."""
    if not is_uri(output):
        shutil.rmtree(output, ignore_errors=True)
        return
    try:
        system, path = _hadoop_path(spark, output)
        system.delete(path, True)
    except Exception:  # the job's own error is the one to report
        pass


def _read(what: str, read: Callable[[], Any]) -> Any:
    """``read()`` of the inputs ``what`` names, a missing or unreadable one (a URI Spark
    reads) as one line."""
    try:
        return read()
    except Exception as exc:
        raise QsegError(f"{what}: {spark_error(exc)}") from None


class _FirstFew:
    """An accumulator of the first :data:`EXAMPLES` messages."""

    def zero(self, value: list[str]) -> list[str]:
        return []

    def addInPlace(self, first: list[str], second: list[str]) -> list[str]:
        return (first + second)[:EXAMPLES]


class _Union:
    """An accumulator of a set."""

    def zero(self, value: set[int]) -> set[int]:
        return set()

    def addInPlace(self, first: set[int], second: set[int]) -> set[int]:
        return first | second


def spark_error(exc: Exception) -> str:
    """The one line of a failure in Spark: qseg's own error where a task raised one, else
    the first line of Spark's."""
    text = str(exc)
    found = re.findall(r"qseg\.errors\.\w+: (.+)|(?:InputError|QsegError|QueryError): (.+)", text)
    if found:
        first = found[-1]
        return first[0] or first[1]
    return f"Spark failed: {first_line(exc)}"
