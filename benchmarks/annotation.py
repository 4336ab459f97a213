"""What an annotation project costs at the size of Webis-QSeC-10 (38,537 answers to 3,848
queries by ten crowd annotators per query), on one core: importing the crowd votes into a
project, exporting them, the agreement page's summary (alpha and S with 1,000 bootstrap
replicates, the biases per annotator, the least agreed queries), and one answer saved
through the page's route. The reference, in the same process: ``agreement()`` on the same
annotations, which is what ``qseg agree`` computes.

    python benchmarks/annotation.py [--shared ../shared]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"
os.sched_setaffinity(0, {0})

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def best_of(work: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    votes_file = (
        args.shared
        / "data"
        / "webis-qsec-10-training"
        / "webis-qsec-10-training-set-segmentations-crowdsourced.txt"
    )
    if not votes_file.exists():
        raise SystemExit(f"Webis-QSeC-10 corpus not found at {votes_file}")

    from fastapi.testclient import TestClient

    from qseg.annotation.project import Project, records_of
    from qseg.annotation.summary import project_annotations, summarize
    from qseg.corpora.annotations import read_webis_votes
    from qseg.evaluation.agreement import agreement
    from qseg.service.app import create_app
    from qseg.service.foundation.settings import load_settings

    votes = read_webis_votes(votes_file)
    records = list(records_of(votes))
    folder = Path(tempfile.mkdtemp(prefix="qseg-bench-"))
    rows: list[tuple[str, float]] = []

    def fresh_import() -> None:
        path = folder / f"import-{time.monotonic_ns()}.db"
        with Project.create(path) as project:
            project.import_records(records, "votes")

    rows.append((f"import {len(records):,} answers", best_of(fresh_import, 3)))
    path = folder / "webis.db"
    with Project.create(path) as project:
        project.import_records(records, "votes")
        rows.append(("export the table", best_of(lambda: project.export_table("flat"), 3)))
        annotations = project_annotations(project, "flat")
        reference = best_of(lambda: agreement(annotations), 3)
        rows.append(("agreement(): alpha and S, 1,000 replicates (reference)", reference))
        rows.append(
            ("the agreement page's summary", best_of(lambda: summarize(project, "flat"), 3))
        )

    app = create_app(load_settings(methods=("naive",), project=str(path)))
    # a loopback client (the service answers only this machine without a token)
    with TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 50000)) as client:
        client.post("/api/annotators", json={"name": "bench"})
        asked = {"annotator": "bench", "mode": "flat", "index": 0}

        def save() -> None:
            item = client.get("/api/item", params=asked).json()
            body = {"annotator": "bench", "mode": "flat", "qid": item["qid"],
                    "value": " ".join(item["words"])}  # fmt: skip
            assert client.post("/api/answers", json=body).status_code == 200

        rows.append(("load a query and save an answer (HTTP, in process)", best_of(save, 20)))

    print(f"{'operation':<58} {'time':>10} {'x reference':>12}")
    for label, seconds in rows:
        print(f"{label:<58} {seconds * 1000:8.1f} ms {seconds / reference:11.2f}x")


if __name__ == "__main__":
    main()
