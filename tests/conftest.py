"""Shared fixtures: the real corpora in ../shared (tests skip cleanly without them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

# The tests build into a cache of their own, never the user's ~/.cache/qseg (a caller that sets
# QSEG_CACHE chooses another); subprocesses inherit it.
os.environ.setdefault(
    "QSEG_CACHE", str(Path(__file__).resolve().parents[1] / ".pytest_cache" / "qseg-cache")
)
WEBIS = SHARED / "data" / "webis-qsec-10-training"


def webis_file(name: str) -> Path:
    """A file of the Webis-QSeC-10 training corpus, skipping the test if it is absent."""
    path = WEBIS / name
    if not path.exists():
        pytest.skip(f"Webis-QSeC-10 corpus not found at {path} (../shared is absent)")
    return path


@pytest.fixture
def write(tmp_path: Path):
    """Write text (str) or raw bytes to a file in a temporary directory; returns its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


@pytest.fixture(scope="session", autouse=True)
def built_in_stores() -> None:
    """Build the built-in stores (and the default model's carried titles) once, here and
    without a time limit, before any test runs a command that would otherwise build them
    inside its subprocess timeout on a cold cache."""
    from qseg import models
    from qseg.resources.default import default_counts, default_titles

    default_counts()
    default_titles()
    models.open_segmenter(models.DEFAULT)
