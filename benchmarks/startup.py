"""Start-up: how long one query takes from a cold process, against ``python -c "import numpy"``.

Times whole processes, interleaved round by round (so drift of the machine hits every command
alike), after one untimed round that fills the built-in stores' cache and the page cache:

- ``qseg segment "new york yankees tickets"`` with the default method and with ``--method wiki``;
- the same from Python: ``python -c "import qseg; qseg.segment(...)"``;
- ``python -c "import numpy"``, the reference.

Prints the median wall time of each and its ratio to the reference (goal: ``qseg segment``
with a rule-based method within 3x).

    python benchmarks/startup.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERY = "new york yankees tickets"


def commands() -> dict[str, list[str]]:
    qseg = shutil.which("qseg", path=str(Path(sys.executable).parent)) or "qseg"
    python = sys.executable
    return {
        'python -c "import numpy"': [python, "-c", "import numpy"],
        "qseg segment (default)": [qseg, "segment", QUERY],
        "qseg segment --method wiki": [qseg, "segment", "--method", "wiki", QUERY],
        "python: qseg.segment (default)": [
            python,
            "-c",
            f"import qseg; qseg.segment({QUERY!r})",
        ],
        "python: qseg.segment(..., 'wiki')": [
            python,
            "-c",
            f"import qseg; qseg.segment({QUERY!r}, 'wiki')",
        ],
    }


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed runs of each command")
    args = parser.parse_args()
    runs = commands()
    for command in runs.values():  # warm-up: stores built and cached, files in the page cache
        wall(command)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, command in runs.items():
            times[name].append(wall(command))
    reference = statistics.median(times['python -c "import numpy"'])
    print(f"{'command':36} {'median (s)':>10} {'min':>7} {'max':>7} {'x numpy':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:36} {median:10.3f} {min(values):7.3f} {max(values):7.3f} "
            f"{median / reference:8.2f}"
        )


if __name__ == "__main__":
    main()
