"""The Spark engine: the same n-gram counting as the DuckDB engine, for inputs beyond one machine.

PySpark runs in local mode by default (``local[threads]``) and on a cluster with ``master``.
It reads the inputs as plain text lines (no CSV quoting), applies the same rules as the DuckDB
engine and qseg's Python readers -- the count column, the replacement-character check,
normalization with :func:`qseg.query.words_of` / :func:`qseg.query.ngram_key` (in Spark SQL for
ASCII text, in a vectorized Python UDF otherwise), 1..N-grams, the minimum count -- and writes
``(ngram, count)`` as Parquet for the shared final step. The tests check that both engines give
identical counts.

Spark reports bad input by content, not by line number: its lines are read in parallel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qseg.errors import InputError, QsegError
from qseg.jvm import log4j_config, require_java
from qseg.resources.builders.duckdb_engine import CLEAN_ASCII
from qseg.resources.builders.sources import Source

# Python's str.split() whitespace within ASCII, and the reserved characters
_SEPARATORS = r'[\t\n\x0b\x0c\r\x1c-\x1f "|()]+'
_ASCII = r"^[\x00-\x7f]*$"


def _spark_memory(limit: str | None) -> str:
    """DuckDB-style sizes (``4GB``, ``500MB``) as Spark sizes (``4g``, ``500m``)."""
    if not limit:
        return "2g"
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)I?B?\s*", limit.upper())
    if not match:
        raise QsegError(f"memory limit {limit!r} is not a size such as 4GB or 500MB")
    return f"{match.group(1)}{match.group(2).lower() or 'b'}"


@contextmanager
def spark_session(master: str | None, threads: int | None, memory_limit: str | None) -> Any:
    """A Spark session for one build, stopped (with its scratch folder removed) at the end.

    In local mode everything runs in the driver, so ``memory_limit`` becomes the driver's JVM
    heap; the JVM needs about 1 GB more of its own.
    """
    os.environ["PYSPARK_PYTHON"] = sys.executable  # workers must run this interpreter
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings = {
        "spark.driver.memory": _spark_memory(memory_limit),
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.shuffle.partitions": str(max(4, 2 * (threads or 2))),
    }
    with scratch_session(
        master or f"local[{threads or os.cpu_count() or 1}]",
        "qseg build",
        settings,
        local=not master,
        missing="the Spark engine needs PySpark: pip install 'qseg[spark]' (and Java 17+)",
    ) as spark:
        yield spark


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (its type's name if it has none): Spark's and
    the JVM's run to dozens of lines."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@contextmanager
def scratch_session(
    master: str, app: str, settings: dict[str, str], *, local: bool, missing: str
) -> Iterator[Any]:
    """A Spark session with a scratch folder of its own (its local dirs and warehouse,
    removed at the end with the session stopped), Spark's logging kept to errors, the driver
    bound to 127.0.0.1 when ``local``; ``missing``: the error without PySpark. A session the
    process already has is used as it is and left running (its master and settings are its
    owner's); a JVM that cannot start is one line, with nothing left behind."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise QsegError(missing) from None
    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    require_java("Spark")
    scratch = Path(tempfile.mkdtemp(prefix="qseg-spark-"))
    os.environ["SPARK_LOCAL_DIRS"] = str(scratch)
    log4j = log4j_config(scratch, "spark")
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(scratch / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
    )
    for key, value in settings.items():
        builder = builder.config(key, value)
    if local:
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config(
            "spark.driver.host", "127.0.0.1"
        )
    try:
        spark = builder.getOrCreate()
    except Exception as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        raise QsegError(f"Spark did not start: {first_line(exc)}") from None
    try:
        yield spark
    finally:
        spark.stop()
        shutil.rmtree(scratch, ignore_errors=True)


def _first_bad(frame: Any, condition: Any, source: Source, reason: str) -> None:
    row = frame.where(condition).select("value").limit(1).collect()
    if row:
        files = ", ".join(str(f) for f in source.files[:3])
        raise InputError(files, None, f"{reason}: {row[0][0][:200]!r}")


def count_ngrams_spark(
    source: Source,
    min_count: int,
    output: Path,
    *,
    master: str | None,
    memory_limit: str | None,
    threads: int | None,
) -> dict[str, int]:
    """Count n-grams with Spark into Parquet files under ``output``; returns stats.

    Spark runs in a child process: PySpark keeps its JVM alive until the Python process that
    started it exits, and the JVM's heap would otherwise stay resident while DuckDB writes the
    store. An error in the child comes back as the same one-line error.
    """
    request = {
        "kind": source.kind,
        "files": [str(f) for f in source.files],
        "max_order": source.max_order,
        "min_count": min_count,
        "output": str(output),
        "master": master,
        "memory_limit": memory_limit,
        "threads": threads,
    }
    child = subprocess.Popen(
        [sys.executable, "-m", "qseg.resources.builders.spark_engine", json.dumps(request)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = child.communicate()
    except BaseException:
        child.terminate()
        child.wait()
        raise
    reply = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
    if child.returncode or "error" in reply:
        if reply.get("error"):
            raise (
                InputError(reply["source"], None, reply["error"])
                if reply.get("source")
                else QsegError(reply["error"])
            )
        noise = [line for line in err.splitlines() if line.strip()]
        raise QsegError(f"Spark failed: {noise[-1] if noise else 'no message'}")
    return reply["stats"]


def _child(request: dict[str, Any]) -> dict[str, Any]:
    """The child process's work; returns the reply for the parent."""
    source = Source(request["kind"], tuple(Path(f) for f in request["files"]), request["max_order"])
    try:
        with spark_session(request["master"], request["threads"], request["memory_limit"]) as spark:
            return {"stats": _count(spark, source, request["min_count"], Path(request["output"]))}
    except InputError as exc:
        return {"error": exc.reason, "source": exc.source}
    except QsegError as exc:
        return {"error": str(exc)}


def _count(spark: Any, source: Source, min_count: int, output: Path) -> dict[str, int]:
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F
    from pyspark.sql.types import StringType

    try:
        raw = spark.read.option("lineSep", "\n").text([str(f) for f in source.files])
        _first_bad(raw, ~F.is_valid_utf8("value"), source, "invalid UTF-8 in a line")
        lines = raw.select(F.regexp_replace("value", "\r$", "").alias("value"))
        _first_bad(
            lines,
            F.col("value").contains("\ufffd"),
            source,
            "U+FFFD replacement character: text damaged by an earlier decoding",
        )
        if source.kind == "text":
            stats, counted = _text_grams(lines, source, F, StringType)
        else:
            stats, counted = _count_lines(lines, source, F, StringType)
        counted.where(F.col("count") >= min_count).write.mode("overwrite").parquet(str(output))
        return stats
    except PySparkException as exc:
        raise QsegError(_spark_message(exc)) from None


def _spark_message(exc: Exception) -> str:
    text = str(exc)
    python = re.search(r"(QsegError|QueryError|\w+Error): (.+)", text)
    return f"Spark failed: {python.group(2) if python else text.splitlines()[0]}"


def _udf(F: Any, StringType: Any, function: Any) -> Any:
    """A Python UDF fed by Arrow batches (vectorized transfer, per-value function)."""
    return F.udf(function, StringType(), useArrow=True)


def _words_text(text: str) -> str:
    from qseg.query import words_of

    return " ".join(words_of(text))


def _ngram_key(text: str) -> str | None:
    from qseg.query import ngram_key

    return ngram_key(text)


def _text_grams(lines: Any, source: Source, F: Any, StringType: Any) -> Any:
    has_tab = F.col("value").contains("\t")
    text = F.when(has_tab, F.regexp_extract("value", r"^(.*)\t[^\t]*$", 1)).otherwise(
        F.col("value")
    )
    count = F.when(has_tab, F.regexp_extract("value", r"\t([^\t]*)$", 1))
    rows = lines.select("value", text.alias("text"), count.alias("count_text"))
    _first_bad(
        rows,
        F.col("count_text").isNotNull() & ~F.col("count_text").rlike("^[0-9]+$"),
        source,
        "count after the last tab is not a non-negative integer",
    )
    normalized = F.when(
        F.col("text").rlike(_ASCII),
        F.trim(F.regexp_replace(F.lower("text"), _SEPARATORS, " ")),
    ).otherwise(_udf(F, StringType, _words_text)(F.col("text")))
    words = F.split(normalized, " ")
    rows = rows.select(
        F.when(normalized == "", F.array()).otherwise(words).alias("w"),
        F.coalesce(F.col("count_text").cast("decimal(20,0)"), F.lit(1)).cast("long").alias("c"),
    ).where((F.size("w") > 0) & (F.col("c") > 0))
    n = source.max_order
    grams = F.flatten(
        F.transform(
            F.sequence(F.lit(1), F.least(F.lit(n), F.size("w"))),
            lambda k: F.transform(
                F.sequence(F.lit(1), F.size("w") - k + 1),
                lambda i: F.array_join(F.slice("w", i, k), " "),
            ),
        )
    )
    counted = (
        rows.select(F.explode(grams).alias("ngram"), "c")
        .groupBy("ngram")
        .agg(F.sum("c").alias("count"))
    )
    return {}, counted


def _count_lines(lines: Any, source: Source, F: Any, StringType: Any) -> Any:
    fields = F.split("value", "\t")
    lines = lines.where(F.col("value") != "")  # blank lines are skipped, as the loader does
    rows = lines.select(
        "value",
        fields.getItem(0).alias("ngram"),
        fields.getItem(1).alias("count_text"),
        F.size(fields).alias("n"),
    )
    _first_bad(rows, F.col("n") != 2, source, "expected ngram<TAB>count")
    _first_bad(
        rows, ~F.col("count_text").rlike("^[0-9]+$"), source, "count is not a non-negative integer"
    )
    key = (
        F.when(F.col("ngram").rlike(f"^(?:{CLEAN_ASCII})$"), F.lower("ngram"))
        .when(F.col("ngram").rlike(r'["|()]'), F.lit(None))
        .otherwise(_udf(F, StringType, _ngram_key)(F.col("ngram")))
    )
    keyed = rows.select(key.alias("ngram"), F.col("count_text").cast("long").alias("count"))
    skipped = keyed.where(F.col("ngram").isNull()).count()
    counted = (
        keyed.where(F.col("ngram").isNotNull()).groupBy("ngram").agg(F.sum("count").alias("count"))
    )
    return {"skipped_ngrams": int(skipped)}, counted


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.argv[1]))), flush=True)
