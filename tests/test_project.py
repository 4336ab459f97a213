"""The project's own promises: the README's test command is what CI runs."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert f"\n{command}\n" in readme


def test_a_test_that_needs_no_built_in_store_builds_none(tmp_path):
    """The built-in stores are built for the tests that use them, not before every run: the
    query normalization tests, on an empty cache, leave it empty."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "cache"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-n",
            "0",
            "-p",
            "no:cacheprovider",
            "tests/test_query.py",
        ],
        cwd=ROOT,
        env=os.environ | {"QSEG_CACHE": str(cache)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout
    assert not cache.exists() or list(cache.iterdir()) == []


def test_the_readme_is_read_in_two_minutes():
    """The README keeps what a new user needs (what qseg is, the two commands, a few lines of
    command line and Python, the default's figures, links); the rest lives under docs/."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 120
    assert "](docs/index.md)" in readme
