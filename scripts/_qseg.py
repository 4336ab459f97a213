"""Run the qseg command line from the report scripts (``python scripts/NAME.py`` puts this
folder on the import path)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def qseg(*args: str, stdin: Path | None = None) -> str:
    """Run ``qseg ARGS`` (stdin from a file, or empty) and return its standard output; stop
    the report with qseg's error message if it fails."""
    with open(stdin, "rb") if stdin else open("/dev/null", "rb") as handle:
        result = subprocess.run(
            [sys.executable, "-m", "qseg", *args],
            stdin=handle,
            capture_output=True,
            check=False,
        )
    if result.returncode:
        raise SystemExit(f"qseg {' '.join(args)} failed: {result.stderr.decode()}")
    return result.stdout.decode()


def evaluate(
    gold: Path, systems: dict[str, str], *flags: str, protocol: str = "majority"
) -> dict[str, dict[str, Any]]:
    """``qseg evaluate`` of named method specs on ``gold``: the JSON record of each, by name."""
    arguments = [a for name, spec in systems.items() for a in ("--system", f"{name}={spec}")]
    output = qseg(
        "evaluate", "--gold", str(gold), "--protocol", protocol, *flags, *arguments,
        "--format", "json",
    )  # fmt: skip
    return {record["system"]: record for record in json.loads(output)}
