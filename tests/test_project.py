"""The project's own promises: the README's test command is what CI runs."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert f"\n{command}\n" in readme
