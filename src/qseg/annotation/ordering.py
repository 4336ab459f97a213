"""The order in which the annotation pages serve a project's queries: as added, or the ones a
model is least sure of first (``qseg annotate --order uncertain --model SPEC``), the model
adapted again from the project's answers every ``--retrain-every`` answers.

The order lives beside the project, in ``PROJECT.order.json`` (the model, how many answers it
learned from, the query ids in order), and the adapted model in ``PROJECT.adapted.qseg``; both
are written whole or not at all (a temporary file, then a rename), so the pages, which read the
order again whenever its file changes, serve the previous order until a new one is complete.
Adapting runs in a process of its own (``python -m qseg.annotation.ordering PROJECT``),
started by the service after a save that makes it due: a save never waits for it, and a
retrain that is killed leaves the project, the order and the model as they were (its lock is
taken over by the next one once its process is gone).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from qseg.annotation.project import Project
from qseg.errors import QsegError
from qseg.fileio import StrPath, atomic_write
from qseg.query import normalize
from qseg.segmenters.base import Segmenter

ORDERS = ("added", "uncertain")
MIN_ANSWERS = 10
"""The fewest annotated queries a retrain adapts from (fewer teach nothing)."""


@dataclass(frozen=True)
class Ordering:
    """The queries' order: by ``model`` (its spec or file), adapted from ``learned_from``
    annotated queries (0: the model as given)."""

    model: str
    learned_from: int
    qids: tuple[str, ...]


def order_path(project: StrPath) -> Path:
    return Path(f"{project}.order.json")


def model_path(project: StrPath) -> Path:
    return Path(f"{project}.adapted.qseg")


def _lock_path(project: StrPath) -> Path:
    return Path(f"{project}.retrain.lock")


_READ: dict[str, tuple[int, Ordering | None]] = {}


def read_ordering(project: StrPath) -> Ordering | None:
    """The project's current order, or ``None`` (none made, or a file that is not one: the
    pages then serve the queries as added). Read again only when the file has changed."""
    path = order_path(project)
    try:
        changed = path.stat().st_mtime_ns
    except OSError:
        return None
    key = str(path)
    if key in _READ and _READ[key][0] == changed:
        return _READ[key][1]
    ordering: Ordering | None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        ordering = Ordering(str(data["model"]), int(data["learned_from"]), tuple(data["qids"]))
    except (OSError, ValueError, KeyError, TypeError):
        ordering = None
    _READ[key] = (changed, ordering)
    return ordering


def write_ordering(project: StrPath, ordering: Ordering) -> None:
    record = {"model": ordering.model, "learned_from": ordering.learned_from}
    with atomic_write(order_path(project)) as handle:
        handle.write(json.dumps(record | {"qids": list(ordering.qids)}) + "\n")


def rank(project: Project, spec: str, learned_from: int = 0) -> Ordering:
    """The project's queries, the ones the model ``spec`` is least sure of first (by the
    default measure, :mod:`qseg.segmenters.uncertainty`)."""
    from qseg.models import open_segmenter
    from qseg.segmenters.uncertainty import most_uncertain

    segmenter = open_segmenter(spec)
    queries = project.queries()
    order = most_uncertain(segmenter, [normalize(text) for _, text in queries])
    return Ordering(spec, learned_from, tuple(queries[i][0] for i in order))


_SUGGESTING: dict[str, tuple[int, Segmenter]] = {}


def suggesting_model(project: Project) -> Segmenter:
    """The model whose answers the pages suggest (``suggest``): the one the current order
    was made by (the latest adapted), else the project's ``model`` (default: the shipped
    default); opened once a process, again when its file changes."""
    from qseg.models import open_segmenter

    ordering = read_ordering(project.path)
    spec = ordering.model if ordering is not None else project.settings()["model"] or "default"
    try:
        changed = Path(spec).stat().st_mtime_ns
    except OSError:
        changed = 0
    if spec not in _SUGGESTING or _SUGGESTING[spec][0] != changed:
        _SUGGESTING[spec] = (changed, open_segmenter(spec))
    return _SUGGESTING[spec][1]


def answered_queries(project: Project) -> int:
    """How many queries have a flat answer: what a retrain would learn from."""
    return len({qid for qid, _, _ in project.answers("flat")})


def retrain(project_path: StrPath) -> Ordering | None:
    """Adapt the project's model from its flat answers so far and order the queries by the
    adapted model; ``None`` if there are too few answers. Run by the background process."""
    from qseg.annotation.gold import read_annotated
    from qseg.models import save
    from qseg.models.adapting import base_model, fit_adapted

    for made in (order_path(project_path), model_path(project_path)):
        for leftover in made.parent.glob(f".{made.name}.*.tmp"):  # of a retrain killed
            leftover.unlink(missing_ok=True)
    with Project.open(Path(project_path)) as project:
        base_spec = project.settings()["model"] or "default"
    gold = read_annotated(project_path)
    if len(gold.words) < MIN_ANSWERS:
        return None
    adapted = fit_adapted(base_model(base_spec), gold.words, gold.targets, "continue")
    target = model_path(project_path)
    save(adapted, target)
    with Project.open(Path(project_path)) as project:
        ordering = rank(project, str(target), len(gold.words))
    write_ordering(project_path, ordering)
    return ordering


def retrain_due(project: Project) -> bool:
    """Whether enough answers came since the order was made for a retrain."""
    every = int(project.settings()["retrain_every"] or 0)
    if every <= 0 or project.settings()["order"] != "uncertain":
        return False
    current = read_ordering(project.path)
    learned = current.learned_from if current is not None else 0
    return answered_queries(project) - learned >= every


def start_retrain(project_path: StrPath) -> bool:
    """Start a retrain in a process of its own unless one is running (``False`` then): the
    caller never waits for it."""
    lock = _lock_path(project_path)
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        if _holder_alive(lock):
            return False
        lock.unlink(missing_ok=True)  # its process was killed: taken over
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
    process = subprocess.Popen(
        [sys.executable, "-m", "qseg.annotation.ordering", str(project_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    os.write(fd, str(process.pid).encode())
    os.close(fd)
    return True


def _holder_alive(lock: Path) -> bool:
    try:
        pid = int(lock.read_text() or "0")
    except (OSError, ValueError):
        return False
    if pid <= 0:
        return True  # being written by the process that took it
    return process_running(pid)


def process_running(pid: int) -> bool:
    """Whether process ``pid`` still runs: a zombie (exited, not yet reaped by the service
    that started it) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def main(argv: list[str]) -> int:
    """The background retrain: one line on stderr if it fails; the lock released either way."""
    project_path = argv[0]
    try:
        retrain(project_path)
    except QsegError as exc:
        print(f"qseg: retrain of {project_path}: {exc}", file=sys.stderr)
        return 1
    finally:
        _lock_path(project_path).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
