"""Segmenting on Spark (local[2]) gives what the local run gives, line for line, opening the
segmenter once per Python worker; bad input ends in one line."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import webis_file
from helpers import adapted_default, assert_one_line_error, out, qseg

pytest.importorskip("pyspark", reason="the spark extra is not installed")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java 17+", allow_module_level=True)

from qseg.errors import InputError, PathError, QsegError
from qseg.integrations import spark as on_spark
from qseg.models import open_segmenter

pytestmark = pytest.mark.long

QUERIES = "webis-qsec-10-training-set-queries.txt"


@pytest.fixture(scope="module")
def session():
    with on_spark.spark_session("local[2]") as spark:
        yield spark


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return webis_file(QUERIES).read_text(encoding="utf-8").splitlines()[:3000]


def write_parts(folder: Path, lines: list[str], parts: int) -> list[str]:
    folder.mkdir()
    size = -(-len(lines) // parts)
    paths = []
    for i in range(parts):
        path = folder / f"queries-{i}.txt"
        path.write_text("".join(f"{line}\n" for line in lines[i * size : (i + 1) * size]))
        paths.append(str(path))
    return paths


def concatenated(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("part-*")))


def skipped_locally(source: Path) -> str:
    """What ``qseg segment`` with ``naive`` prints for ``source``, bad lines marked ``-``."""
    stdin = source.read_bytes()
    return out(
        qseg(
            "segment",
            "--method",
            "naive",
            "--skip-bad-lines",
            "--bad-line-marker",
            "-",
            stdin=stdin,
        )
    )


def test_the_command_line_equals_the_local_run(tmp_path, lines):
    """A local path and URIs Spark reads (``file://``: Hadoop's file systems; an input or
    output on ``hdfs://`` or ``s3a://`` takes the same way) in one run."""
    first, second = write_parts(tmp_path / "in", lines, 2)
    output = tmp_path / "out"
    done = qseg(
        "segment", "--engine", "spark", "--master", "local[2]",
        first, Path(second).as_uri(), "-o", output.as_uri(), process=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert "3,000 lines written" in done.stderr.decode()
    source = Path(first).read_bytes() + Path(second).read_bytes()
    assert concatenated(output) == out(qseg("segment", stdin=source))


def test_uris_spark_cannot_use_are_one_line_and_an_output_there_is_kept(session, tmp_path):
    segmenter = open_segmenter("naive")
    missing = (tmp_path / "nope.txt").as_uri()
    with pytest.raises(QsegError, match=r"^file:///.*nope.txt: .*(does not exist|not found)"):
        on_spark.segment_files(session, [missing], (tmp_path / "o").as_uri(), segmenter)
    assert not (tmp_path / "o").exists()
    (tmp_path / "q.txt").write_text("a b\n")
    (tmp_path / "there").mkdir()
    (tmp_path / "there" / "kept.txt").write_text("kept")
    with pytest.raises(PathError, match="the output exists"):
        on_spark.segment_files(
            session, [str(tmp_path / "q.txt")], (tmp_path / "there").as_uri(), segmenter
        )
    assert (tmp_path / "there" / "kept.txt").read_text() == "kept"


def test_a_session_the_caller_has_is_used_and_left_running(session):
    with on_spark.spark_session("local[1]") as inner:
        assert inner is session
    assert session.range(3).count() == 3  # not stopped


def test_a_jvm_that_cannot_start_is_one_line_and_leaves_nothing(tmp_path):
    (tmp_path / "q.txt").write_text("a b\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = qseg(
        "segment", "--engine", "spark", tmp_path / "q.txt", "-o", tmp_path / "o",
        env={"JAVA_HOME": "/nonexistent", "TMPDIR": str(scratch)},
    )  # fmt: skip
    assert_one_line_error(done, "Spark needs Java 17+", "JAVA_HOME=/nonexistent")
    assert list(scratch.iterdir()) == [] and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("method", "fmt", "k"), [("default", "json", 1), ("wiki", "lucene", 2), ("adapted", "json", 2)]
)
def test_files_in_order_with_the_segmenter_opened_once_per_worker(
    session, tmp_path, lines, method, fmt, k
):
    if method == "adapted":  # a model adapted from the default: a model file like any other
        method = str(adapted_default(tmp_path))
    inputs = write_parts(tmp_path / "in", lines, 6)
    segmenter = open_segmenter(method)
    syntax = None
    outcome = on_spark.segment_files(
        session, inputs, str(tmp_path / "out"), segmenter, fmt=fmt, syntax=syntax, k=k
    )
    stdin = "".join(f"{line}\n" for line in lines)
    local = out(qseg("segment", "--method", method, "--format", fmt, "--k", k, stdin=stdin))
    assert concatenated(tmp_path / "out") == local
    assert outcome.lines == len(local.splitlines())
    # six tasks: each Python worker opened the segmenter once, whatever its number of tasks
    assert outcome.loads == outcome.workers < 6


def test_bad_lines_are_counted_and_skipped_in_place_or_stop_the_run(session, tmp_path):
    source = tmp_path / "queries.txt"
    source.write_bytes(b"1\tnew york yankees\n2\t\n3\tbad \xff utf8\n4\tcheap flights\n")
    segmenter = open_segmenter("naive")
    outcome = on_spark.segment_files(
        session, [str(source)], str(tmp_path / "out"), segmenter, skip_bad=True, marker="-"
    )
    local = skipped_locally(source)
    assert concatenated(tmp_path / "out") == local
    assert outcome.bad == 2
    assert outcome.examples == [
        f"{source}:2: empty query: it has no words",
        f"{source}:3: invalid UTF-8 at byte 6; input must be UTF-8 encoded",
    ]
    with pytest.raises(QsegError, match=r"queries.txt:2: empty query") as caught:
        on_spark.segment_files(session, [str(source)], str(tmp_path / "stopped"), segmenter)
    assert "\n" not in str(caught.value)
    assert not (tmp_path / "stopped").exists()


def test_parquet_in_and_out(session, tmp_path, lines):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ids, texts = zip(*(line.split("\t", 1) for line in lines), strict=True)
    pq.write_table(pa.table({"id": list(ids), "query": list(texts)}), tmp_path / "q.parquet")
    on_spark.segment_parquet(
        session,
        [str(tmp_path / "q.parquet")],
        str(tmp_path / "out"),
        "query",
        open_segmenter("default"),
    )
    table = pq.read_table(tmp_path / "out").to_pandas()
    assert list(table["id"]) == list(ids)
    local = out(qseg("segment", stdin="".join(f"{t}\n" for t in texts)))
    assert list(table["segmentation"]) == local.splitlines()
    with pytest.raises(InputError, match="no column 'text'"):
        on_spark.segment_parquet(
            session,
            [str(tmp_path / "q.parquet")],
            str(tmp_path / "x"),
            "text",
            open_segmenter("naive"),
        )


def test_a_dataframe_column(session):
    frame = session.createDataFrame([("new york yankees tickets",), ("",), (None,)], ["q"])
    done = on_spark.segment_dataframe(
        frame, "q", "wiki(unseen_titles=true)", fmt="quoted", errors="skip"
    )
    assert [r["segmentation"] for r in done.collect()] == ['"new york yankees" tickets', None, None]
    with pytest.raises(QsegError, match="no column 'x'"):
        on_spark.segment_dataframe(frame, "x", "naive")


def test_a_dataframe_column_keeps_a_phrase_list(session, tmp_path):
    """Issue 67, item 4: the list travels with the segmenter to the executors."""
    phrases = tmp_path / "phrases.txt"
    phrases.write_text("yankees tickets\n")
    frame = session.createDataFrame([("new york yankees tickets",)], ["q"])
    done = on_spark.segment_dataframe(frame, "q", "wiki(unseen_titles=true)", phrases=phrases)
    assert [r["segmentation"] for r in done.collect()] == ["new york yankees tickets"]


def test_paths_and_masters_that_cannot_be_used(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "q.txt").write_text("a b\n")
    q, o = tmp_path / "q.txt", tmp_path / "out"
    # the command's own Spark, in a process of its own (not this module's session)
    spark = functools.partial(qseg, "segment", "--engine", "spark", process=True)
    assert_one_line_error(spark(q, "-o", o), "the output exists")
    assert_one_line_error(spark(tmp_path / "nope.txt", "-o", tmp_path / "o2"), "no such input")
    assert_one_line_error(
        spark("--master", "spark://127.0.0.1:1", q, "-o", tmp_path / "o3"),
        "cannot reach the Spark master spark://127.0.0.1:1",
    )
    assert_one_line_error(qseg("segment", "--output", o, "a b"), "only with --engine spark")
    assert_one_line_error(
        spark("--input-format", "parquet", q, "-o", tmp_path / "o4"),
        "--column",
    )
    with pytest.raises(PathError):
        on_spark.check_paths([str(q)], str(o))
    assert subprocess  # the module runs qseg as a subprocess: the stores are built first


def test_a_file_of_many_partitions_and_batches_keeps_its_order_and_line_numbers(
    session, tmp_path, lines
):
    """Lines are numbered in the JVM by partition offsets: with 4 kB partitions (five of them)
    and Arrow batches of 50 lines, the output is the local run's and a bad line in the third
    partition is named by its number."""
    source = tmp_path / "queries.txt"
    body = [*lines[:400], "", *lines[400:600]]  # line 401: an empty query
    source.write_text("".join(f"{line}\n" for line in body), encoding="utf-8")
    segmenter = open_segmenter("naive")
    conf = session.conf
    saved = {
        k: conf.get(k)
        for k in (
            "spark.sql.files.maxPartitionBytes",
            "spark.sql.execution.arrow.maxRecordsPerBatch",
        )
    }
    conf.set("spark.sql.files.maxPartitionBytes", "4096")
    conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "50")
    try:
        assert session.read.text(str(source)).rdd.getNumPartitions() >= 4
        outcome = on_spark.segment_files(
            session, [str(source)], str(tmp_path / "out"), segmenter, skip_bad=True, marker="-"
        )
        with pytest.raises(QsegError, match=r"queries.txt:401: empty query"):
            on_spark.segment_files(session, [str(source)], str(tmp_path / "stop"), segmenter)
    finally:
        for key, value in saved.items():
            conf.set(key, value)
    local = skipped_locally(source)
    assert concatenated(tmp_path / "out") == local
    assert outcome.lines == len(body) and outcome.bad == 1
    assert outcome.examples == [f"{source}:401: empty query: it has no words"]
