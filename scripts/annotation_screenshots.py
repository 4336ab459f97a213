"""The screenshots of docs/annotation.md: a demo project (a few queries, the answers of three
annotators imported, flat and nested) served by ``qseg annotate``, each page photographed by
headless Chromium as its command line takes it (``--virtual-time-budget`` lets the pages
fetch their data before the picture).

    python scripts/annotation_screenshots.py [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
QUERIES = """\
q1\tnew york yankees tickets
q2\tstainless steel chest freezers
q3\thow to choose a bike size
q4\tcheap flights to san francisco
q5\tharry potter and the goblet of fire
"""
FLAT = {
    "ann": [
        "new york yankees|tickets",
        "stainless steel|chest freezers",
        "how to|choose|a bike size",
        "cheap flights|to|san francisco",
    ],
    "bob": [
        "new york yankees|tickets",
        "stainless steel|chest freezers",
        "how to choose|a bike size",
        "cheap|flights|to|san francisco",
    ],
    "cid": [
        "new york|yankees|tickets",
        "stainless steel chest freezers",
        "how to|choose|a bike size",
        "cheap flights|to san francisco",
    ],
}
NESTED = {
    "ann": ["(((new york) yankees) tickets)", "((stainless steel) (chest freezers))"],
    "bob": ["((new york) (yankees tickets))", "((stainless steel) (chest freezers))"],
    "cid": ["(((new york) yankees) tickets)", "(((stainless steel) chest) freezers)"],
}
LONG_TREE = "(((harry potter) and) (the (goblet (of fire))))"
SHOTS = {
    "annotation-flat.png": ("/flat?annotator=ann&index=4", "1100,1000"),
    "annotation-nested.png": ("/nested?annotator=ann&index=0", "1100,1000"),
    # a 7-word query on a laptop's screen: the controls stay above the fold
    "annotation-nested-7-words.png": ("/nested?annotator=ann&index=4", "1280,800"),
    "annotation-agreement.png": ("/agreement", "1100,1000"),
}
"""Each picture's page and window size."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def demo_project(folder: Path) -> Path:
    (folder / "queries.txt").write_text(QUERIES)
    for mode, answers in (("flat", FLAT), ("nested", NESTED)):
        rows = [
            f"q{i}\t{name}\t{value}\n"
            for name, values in answers.items()
            for i, value in enumerate(values, 1)
        ]
        if mode == "nested":  # a 7-word tree: the tallest picture of the demo
            rows.append(f"q5\tann\t{LONG_TREE}\n")
        (folder / f"{mode}.tsv").write_text("".join(rows))
    project = folder / "demo.db"
    qseg = [sys.executable, "-m", "qseg", "annotate", str(project)]
    subprocess.run(
        [
            *qseg,
            "--queries",
            str(folder / "queries.txt"),
            "--import",
            str(folder / "flat.tsv"),
            "--import",
            str(folder / "nested.tsv"),
            "--prefill",
            "default",
            "--no-serve",
        ],
        check=True,
    )
    return project


def wait_ready(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("qseg annotate exited before it was ready")
        try:
            with urllib.request.urlopen(url + "/readyz") as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit("qseg annotate was not ready within 180 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    IMAGES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        project = demo_project(Path(scratch))
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [sys.executable, "-m", "qseg", "annotate", str(project), "--port", str(port)]
        )
        try:
            wait_ready(url, server)
            for name, (path, size) in SHOTS.items():
                subprocess.run(
                    [
                        args.chromium,
                        "--headless",
                        "--no-sandbox",
                        "--hide-scrollbars",
                        "--virtual-time-budget=5000",
                        f"--window-size={size}",
                        f"--screenshot={IMAGES / name}",
                        url + path,
                    ],
                    check=True,
                    capture_output=True,
                    cwd=scratch,
                )
                print(f"wrote docs/images/{name}")
        finally:
            server.terminate()
            server.wait(60)


if __name__ == "__main__":
    main()
