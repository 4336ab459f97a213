"""``qseg annotate``: annotation projects, and the pages to annotate them in a browser
(``pip install 'qseg[serve]'``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO

from qseg.annotation.project import MODES, Project, ProjectExists, Record, check_folder, records_of
from qseg.cli.common import counted

EXPORT_FORMATS = ("table", "label-studio")


def configure(annotate: argparse.ArgumentParser) -> None:
    from qseg.annotation.ordering import ORDERS
    from qseg.cli.serve import add_settings
    from qseg.service.foundation.settings import DEFAULT_HOST

    annotate.description = (
        "Annotate queries in the browser, flat and nested, as several annotators; measure "
        "their agreement as it comes in; export what they gave. The project is one SQLite "
        "file, made by the first --queries or --import. Without --export or --no-serve, the "
        "pages are served at http://HOST:PORT/. See docs/annotation.md."
    )
    annotate.add_argument("project", metavar="PROJECT.db", help="the project file")
    annotate.add_argument(
        "--queries",
        action="append",
        metavar="FILE",
        help="add [id<TAB>]query lines (repeatable; empty, bad, too long and duplicate lines "
        "are reported and left out)",
    )
    annotate.add_argument(
        "--import",
        dest="imports",
        action="append",
        metavar="FILE",
        help="add answers from an annotation file: item<TAB>annotator<TAB>segmentation, Webis "
        "votes, bracket files, or a Label Studio JSON export (*.json, *.jsonl) (repeatable)",
    )
    annotate.add_argument(
        "--prefill",
        metavar="SPEC",
        help="start the flat page from this method's segmentation ('off': from none, for "
        "unbiased gold; a project setting, kept)",
    )
    annotate.add_argument(
        "--order",
        choices=ORDERS,
        help="serve the queries as added, or those --model is least sure of first (a project "
        "setting, kept; default: added)",
    )
    annotate.add_argument(
        "--model",
        metavar="SPEC",
        help="of --order uncertain: the model whose uncertainty orders the queries, and the "
        "base a retrain adapts (default: the shipped default model)",
    )
    annotate.add_argument(
        "--retrain-every",
        type=int,
        metavar="N",
        help="of --order uncertain: adapt the model from the answers so far (qseg train "
        "--from) every N answered queries, in a background process, and order the "
        "unanswered queries again (0: never; a project setting, kept)",
    )
    annotate.add_argument(
        "--suggest",
        action=argparse.BooleanOptionalAction,
        help="show the model's answer (of --order uncertain's model, the latest adapted) as a "
        "hint to confirm; exports mark answers given so, as by 'NAME (suggested)' (a project "
        "setting, kept; default off: annotators anchor on suggestions)",
    )
    annotate.add_argument(
        "--expert",
        action=argparse.BooleanOptionalAction,
        help="allow nested nodes of more than two parts (a project setting, kept; default off)",
    )
    annotate.add_argument(
        "--export",
        metavar="FILE",
        help="write the latest answers of --mode to FILE and exit (- for stdout)",
    )
    annotate.add_argument("--mode", choices=MODES, default="flat", help="of --export")
    annotate.add_argument(
        "--format",
        choices=EXPORT_FORMATS,
        help="of --export (default: label-studio for *.json, else table)",
    )
    annotate.add_argument(
        "--raw",
        action="store_true",
        help="of a table --export: cells as stored, without the leading ' that keeps a "
        "spreadsheet from running a cell beginning with = + - @ as a formula",
    )
    annotate.add_argument(
        "--no-serve", action="store_true", help="add, import or set, then exit without serving"
    )
    annotate.add_argument("--host", default=DEFAULT_HOST, help="default: %(default)s")
    annotate.add_argument(
        "--port", type=int, default=8000, help="default: %(default)s; 0: a free one"
    )
    add_settings(annotate, numbers=False)  # --token (a browser signs in at /login), proxies
    annotate.set_defaults(run=run)


def run(args: argparse.Namespace, out: IO[str]) -> None:
    from qseg.errors import PathError, QsegError

    if not 0 <= args.port <= 65535:
        raise QsegError(f"--port {args.port} is not a port (0 to 65535)")
    path = Path(args.project)
    adding = bool(args.queries or args.imports)
    prefill = None if args.prefill is None else _prefill(args.prefill)  # before any change
    serving = args.export is None and not args.no_serve
    ordering = (args.order, args.model, args.retrain_every, args.suggest) != (None,) * 4
    if args.retrain_every is not None and args.retrain_every < 0:
        raise QsegError("--retrain-every must be 0 (never) or more")
    if args.model is not None:
        _prefill(args.model)  # a spec that names nothing is refused before any change
    writing = adding or prefill is not None or args.expert is not None or serving or ordering
    if not adding and not path.exists():
        check_folder(path)
        raise PathError(path, "no such project: make it with --queries FILE or --import FILE")
    project, created = _project(path, writing)
    with project:
        try:
            for queries in args.queries or ():
                _add_queries(project, queries)
            for imported in args.imports or ():
                _import(project, imported)
        except BaseException:
            if created:  # a project this run made is not left behind half made
                project.close()
                for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                    leftover.unlink(missing_ok=True)
            raise
        if prefill is not None:
            project.set_setting("prefill", prefill)
        if args.expert is not None:
            project.set_setting("expert", "1" if args.expert else "0")
        _set_order(project, args)
        if args.export is not None:
            _export(project, args, out)
            return
        settings = project.settings()
        count = project.query_count()
    if args.no_serve:
        return
    if count == 0:
        raise QsegError(f"{path}: the project has no queries: add some with --queries FILE")
    _serve(args, str(path), settings["prefill"])


def _prefill(spec: str) -> str:
    """The pre-filling method as the project keeps it ("" for none), opened once now so that
    a spec that names nothing is refused here rather than when the pages are served."""
    from qseg.models import open_segmenter

    if spec.strip() == "off":
        return ""
    open_segmenter(spec.strip())
    return spec.strip()


def _project(path: Path, writing: bool) -> tuple[Project, bool]:
    """The project, checked (and, ``writing``, writable and held by no other process), and
    whether this run made it: of two runs making it at once, one makes it, the other opens
    it, and both add their queries."""
    if not path.exists():
        try:
            return Project.create(path), True
        except ProjectExists:
            pass
    return Project.open(path, write=writing), False


def _add_queries(project: Project, source: str) -> None:
    from qseg.fileio import open_binary

    with open_binary(source) as lines:
        report = project.add_queries(lines, source)
    for line in report.refused:
        print(f"qseg: left out {line}", file=sys.stderr)
    duplicates = report.duplicates
    if duplicates:  # one line, not one per query: a restart gives every query again
        more = f" (and {len(duplicates) - 1:,} more)" if len(duplicates) > 1 else ""
        print(f"qseg: duplicate left out: {duplicates[0]}{more}", file=sys.stderr)
    print(
        f"qseg: {source}: {counted(report.added, 'query', 'queries')} added, "
        f"{counted(len(duplicates), 'duplicate')} and {counted(len(report.refused), 'bad line')} "
        "left out",
        file=sys.stderr,
    )


def _import(project: Project, source: str) -> None:
    from qseg.annotation.labelstudio import read_tasks
    from qseg.corpora.annotations import read_annotations

    problems: list[str] = []
    records: list[Record]
    if source.endswith((".json", ".jsonl")):
        imported = read_tasks(source)
        problems += imported.problems
        records = imported.answers
    else:
        records = list(records_of(read_annotations([source])))
    report = project.import_records(records, source)
    for line in problems + report.refused:
        print(f"qseg: not imported: {line}", file=sys.stderr)
    print(
        f"qseg: {source}: {counted(report.answers, 'answer')} imported "
        f"({counted(report.queries, 'new query', 'new queries')}), "
        f"{len(problems) + len(report.refused)} left out",
        file=sys.stderr,
    )


def _export(project: Project, args: argparse.Namespace, out: IO[str]) -> None:
    """The export of ``--mode``, checked whole first (nothing is written from a damaged
    project), then how many answers it holds, on stderr."""
    from qseg.annotation.labelstudio import tasks_json, to_tasks, write_tasks
    from qseg.fileio import atomic_write, check_output_file

    kind = args.format or ("label-studio" if args.export.endswith(".json") else "table")
    rows = project.exported(args.mode)  # the project checked whole, once
    answers = len(rows)
    if answers == 0:  # an empty table is no gold: said now, kindly, not by the next command
        print(
            f"qseg: {Path(project.path).name} has no {args.mode} answers yet, so there is nothing "
            f"to export: annotate first (qseg annotate {project.path} serves the pages)",
            file=sys.stderr,
        )
        raise SystemExit(1)
    if kind == "table":
        text = project.export_table(args.mode, raw=args.raw, rows=rows)
        if args.export == "-":
            out.write(text)
        else:
            with atomic_write(check_output_file(args.export, "export")) as handle:
                handle.write(text)
    else:
        tasks = to_tasks(project.queries(), project.records(args.mode, rows))
        if args.export == "-":
            out.write(tasks_json(tasks))
        else:
            write_tasks(tasks, args.export)
    where = "stdout" if args.export == "-" else args.export
    print(f"qseg: wrote {counted(answers, f'{args.mode} answer')} to {where}", file=sys.stderr)


def _set_order(project: Project, args: argparse.Namespace) -> None:
    """The order settings given, and with ``uncertain`` the order made now if the model
    changed (the pages serve it from the start)."""
    from qseg.annotation.ordering import rank, read_ordering, write_ordering

    if args.order is not None:
        project.set_setting("order", args.order)
    if args.model is not None:
        project.set_setting("model", args.model.strip())
    if args.retrain_every is not None:
        project.set_setting("retrain_every", str(args.retrain_every))
    if args.suggest is not None:
        project.set_setting("suggest", "1" if args.suggest else "0")
    settings = project.settings()
    if settings["order"] != "uncertain" or project.query_count() == 0:
        return
    model = settings["model"] or "default"
    current = read_ordering(project.path)
    if (
        current is None
        or (current.learned_from == 0 and current.model != model)
        or (args.model is not None and current.model != model)
    ):
        print(f"qseg: ordering the queries by how sure {model} is of them", file=sys.stderr)
        write_ordering(project.path, rank(project, model))


def _serve(args: argparse.Namespace, project: str, prefill: str) -> None:
    from qseg.cli.serve import settings_of
    from qseg.service.server import serve

    methods = (prefill,) if prefill else ()
    settings = settings_of(args, methods=methods, project=str(Path(project).resolve()))
    # no drain on SIGTERM: no load balancer stands before annotation pages to see 503s, and
    # the requests in flight (a save) finish either way
    serve(settings, host=args.host, port=args.port, drain=0)
