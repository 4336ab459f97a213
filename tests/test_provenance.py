"""Provenance: what a reported figure depends on is recorded in the report's header."""

from __future__ import annotations

import hashlib
import re
from importlib.metadata import version
from pathlib import Path

from qseg._version import VERSION
from qseg.evaluation.provenance import (
    file_fingerprint,
    provenance,
    provenance_line,
    with_provenance,
)
from qseg.resources import NgramCounts
from qseg.resources.default import build_tag
from qseg.resources.store import build_from_entries

ROOT = Path(__file__).resolve().parents[1]


def test_the_record_names_release_libraries_data_and_resources(tmp_path):
    data = tmp_path / "queries.txt"
    data.write_bytes(b"new york\n")
    counts = NgramCounts(store=build_from_entries({"new york": 3}, kind="counts"))
    record = provenance([data], {"counts": counts, "titles": None})
    assert record["qseg"] == VERSION and record["build"] == build_tag()
    assert record["libraries"]["numpy"] == version("numpy")
    assert record["files"] == {"queries.txt": hashlib.sha256(b"new york\n").hexdigest()[:16]}
    assert record["resources"] == {"counts": counts.fingerprint}  # (a resource not used: left out)
    line = provenance_line([data], {"counts": counts})
    assert f"qseg {VERSION} ({build_tag()})" in line and f"numpy {version('numpy')}" in line
    assert f"queries.txt {record['files']['queries.txt']}" in line
    assert f"counts {counts.fingerprint}" in line


def test_a_folder_fingerprint_follows_its_files_and_their_names(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("one")
    (folder / "sub" / "b.txt").write_text("two")
    first = file_fingerprint(folder)
    assert file_fingerprint(folder) == first
    (folder / "sub" / "b.txt").write_text("tw0")
    second = file_fingerprint(folder)
    assert second != first
    (folder / "sub" / "b.txt").rename(folder / "sub" / "c.txt")
    assert file_fingerprint(folder) not in (first, second)


def test_a_report_gets_the_line_under_its_title():
    text = with_provenance("# Title\n\nBody.\n")
    title, blank, line, rest = text.split("\n", 3)
    assert (title, blank, rest) == ("# Title", "", "\nBody.\n")
    assert line.startswith("Provenance: qseg ") and line.endswith(".")


def test_every_report_script_writes_the_provenance_header():
    """Each script that writes a report under docs/ passes it through the provenance
    header, itself or in the lab module that lays its page out (the record of the model file
    for train_default.py)."""
    scripts = sorted((ROOT / "scripts").glob("*_report.py"))
    assert len(scripts) >= 8
    for script in scripts:
        source = script.read_text()
        for module in re.findall(r"^from lab\.(\w+) import", source, re.MULTILINE):
            source += (ROOT / "scripts" / "lab" / f"{module}.py").read_text()
        assert re.search(r"with_provenance\(|provenance_line\(", source), script.name
    assert '"provenance": provenance(' in (ROOT / "scripts" / "train_default.py").read_text()
