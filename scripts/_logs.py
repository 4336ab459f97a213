"""The small query log the report scripts demonstrate query-log methods on: the query corpora
of ``../shared/data`` other than Webis-QSeC-10 (QueryNER train and dev, the 500 queries of
paper 000), one query a line; optionally with the Webis training queries themselves."""

from __future__ import annotations

from pathlib import Path

from qseg.corpora.queryner import read_queryner
from qseg.fileio import atomic_write, read_lines


def log_sources(shared: Path) -> list[Path]:
    """The files the demonstration log is made of (what a report fingerprints)."""
    data = shared / "data"
    return [
        data / "queryner" / "train.jsonl",
        data / "queryner" / "dev.jsonl",
        data / "saharoy-sigir12" / "queries.tsv",
        data / "webis-qsec-10-training" / "webis-qsec-10-training-set-queries.txt",
    ]


def write_demo_log(path: Path, shared: Path, with_webis: bool = False) -> int:
    """Write the log to ``path``; returns its number of lines."""
    data = shared / "data"
    lines = [
        " ".join(query.segmentation.words)
        for part in ("train", "dev")
        for query in read_queryner(data / "queryner" / f"{part}.jsonl").values()
    ]
    lines += [
        text.split("\t", 1)[1] for _, text in read_lines(data / "saharoy-sigir12" / "queries.tsv")
    ]
    if with_webis:
        webis = data / "webis-qsec-10-training" / "webis-qsec-10-training-set-queries.txt"
        lines += [text.split("\t", 1)[1] for _, text in read_lines(webis)]
    with atomic_write(path) as out:
        out.writelines(f"{line}\n" for line in lines)
    return len(lines)
