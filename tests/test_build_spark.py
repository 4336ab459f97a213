"""The Spark engine gives the same counts as the DuckDB engine (skipped without PySpark/Java)."""

from __future__ import annotations

import shutil

import pytest
from helpers import WEB1T, make_web1t

from qseg.errors import InputError
from qseg.resources import NgramCounts
from qseg.resources.builders import build_ngrams

pytestmark = pytest.mark.long

pyspark = pytest.importorskip(
    "pyspark", reason="PySpark is not installed (pip install qseg[spark])"
)
if shutil.which("java") is None:
    pytest.skip("Spark needs Java 17+, and no `java` is on PATH", allow_module_level=True)

TRICKY = (
    "New York Yankees\t3\r\n"  # CRLF, count column
    "new york pizza\n"
    "\n"  # blank
    '"big" apple (nyc)\t2\n'  # reserved characters separate words
    "\ufeffCaf\u00e9  CR\u00c8ME\n"  # byte order mark, non-ASCII, upper case, double space
    "full \uff57idth\t7\n"  # NFKC
    "zero\t0\n"  # count 0: dropped
    "a\x0bb\x1cc\n"  # ASCII control whitespace
    "tab\tinside\t4\n"  # the count follows the last tab
    "new york\t2\n"
)


def counts_of(store) -> dict[str, int]:
    return dict(NgramCounts(store=store).items())


def test_engines_agree_on_text(tmp_path, write):
    max_order, min_count = 3, 2
    log = write("log.txt", TRICKY)
    stores = {
        engine: build_ngrams(
            [log],
            tmp_path / f"{engine}.qseg",
            source="text",
            engine=engine,
            max_order=max_order,
            min_count=min_count,
            quiet=True,
        )
        for engine in ("duckdb", "spark")
    }
    duck, spark = (counts_of(stores[e]) for e in ("duckdb", "spark"))
    assert duck == spark
    assert duck["new york"] == 3 + 1 + 2
    assert "caf\u00e9 cr\u00e8me" not in duck  # seen once, below the minimum count
    assert "zero" not in duck and duck["tab inside"] == 4


def test_engines_agree_on_web1t_and_write_identical_stores(tmp_path):
    web1t = make_web1t(tmp_path / "web1t", WEB1T)
    duck = build_ngrams([web1t], tmp_path / "d.qseg", source="web1t", quiet=True)
    spark = build_ngrams([web1t], tmp_path / "s.qseg", source="web1t", engine="spark", quiet=True)
    assert counts_of(duck) == counts_of(spark)
    assert spark.info.source["skipped_ngrams"] == duck.info.source["skipped_ngrams"] == 3
    data = slice(duck.region, None)
    assert (tmp_path / "d.qseg").read_bytes()[data] == (tmp_path / "s.qseg").read_bytes()[data]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"ok\nbad \xff line\n", "invalid UTF-8 in a line"),
        ("ok\nbad\tcount\n", "count after the last tab is not a non-negative integer"),
    ],
)
def test_spark_names_the_bad_line_by_content(tmp_path, write, content, message):
    path = write("bad.txt", content)
    with pytest.raises(InputError, match=message):
        build_ngrams([path], tmp_path / "x.qseg", source="text", engine="spark", quiet=True)
    assert not (tmp_path / "x.qseg").exists()
