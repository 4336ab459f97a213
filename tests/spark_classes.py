"""Spark's classes archived for the JVMs of the tests (run by tests/conftest.py, in the
background, once per PySpark and Java): ``python tests/spark_classes.py ARCHIVE PARTIAL``.

A JVM started with ``-XX:SharedArchiveFile`` maps the classes a run like this one loaded
instead of reading and checking them from Spark's jars again: a Spark session starts in about
half the time (4.5 -> 2.1 s here). The archive is written by the JVM as it exits
(``-XX:ArchiveClassesAtExit=PARTIAL``, given by conftest.py), renamed to ARCHIVE once that
JVM has exited: a JVM maps a truncated archive and crashes, so none may ever see one.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from qseg.resources.builders import spark_engine
from qseg.resources.builders.sources import Source


def main(archive: Path, partial: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        text = Path(scratch) / "log.txt"
        text.write_text("new york yankees\t3\ncafé crème\nnew york\t2\n", encoding="utf-8")
        web1t = Path(scratch) / "2gm-0000"
        web1t.write_text("new york\t200\nNew York\t100\ncafé au\t3\n", encoding="utf-8")
        with spark_engine.spark_session(None, 1, None) as spark:
            jvm = spark.sparkContext._gateway.proc
            # a build's jobs: both kinds of source, a Python UDF, a shuffle, Parquet
            for kind, path in (("text", text), ("web1t", web1t)):
                source = Source(kind, (path,), 3)
                spark_engine._count(spark, source, 1, Path(scratch) / f"out-{kind}")
        jvm.stdin.close()  # PySpark's JVM exits when its stdin closes, and writes the archive
        jvm.wait(timeout=300)
    if jvm.returncode == 0 and partial.exists():
        partial.replace(archive)


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
