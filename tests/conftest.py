"""Shared fixtures: the real corpora in ../shared (tests skip cleanly without them)."""

from __future__ import annotations

import compileall
import functools
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

# pytest keeps the test modules it rewrites (for its assertion messages) as bytecode beside
# them, unless the environment says to write none (PYTHONDONTWRITEBYTECODE): then each test
# process rewrote all of them again, a third of its collection. Written here as the package's
# is (pytest_configure), in __pycache__ folders git ignores.
sys.dont_write_bytecode = False

# Hypothesis's deadline (200 ms an example by default) is a timing assertion: on a busy
# machine an example of the decoder's tests took 347 ms in a CI run and failed it. The tests
# check answers; speed is the benchmarks' (benchmarks/).
try:
    from hypothesis import settings as _hypothesis

    _hypothesis.register_profile("qseg", deadline=None)
    _hypothesis.load_profile("qseg")
except ImportError:  # (the test extra brings it)
    pass

# The test processes share this machine's cores: a library that spreads its work over every
# core (OpenBLAS, OpenMP in torch and xgboost) would have their threads wait on each other's
# (what a caller sets is kept). Set before numpy loads, in the processes the tests start too.
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

# The tests build into a cache of their own, never the user's ~/.cache/qseg (a caller that sets
# QSEG_CACHE chooses another); subprocesses inherit it.
os.environ.setdefault("QSEG_CACHE", str(ROOT / ".pytest_cache" / "qseg-cache"))
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""The tests' JVMs (Spark's: a build's child process, `qseg segment --engine spark`; Lucene's,
in the test process through pyjnius) run for seconds on small inputs: the quick compiler alone
and one collector thread spare the other test process's core the optimizing compiler's work
(about a tenth of the Spark tests' time, a third of the Lucene test's)."""
try:
    import jnius_config
except ImportError:  # no Lucene engine here
    pass
else:
    if not jnius_config.vm_running:
        jnius_config.add_options(*JVM_OPTIONS.split())


def spark_class_archive() -> Path | None:
    """Where Spark's classes are archived for this PySpark and Java (tests/spark_classes.py
    writes it), if both are installed: a JVM that maps it starts a session in half the time
    (the Spark tests 43 -> 25 s)."""
    import hashlib
    import importlib.metadata
    import shutil

    java = shutil.which("java")
    try:
        version = importlib.metadata.version("pyspark")
    except importlib.metadata.PackageNotFoundError:
        return None
    if java is None:
        return None
    real = os.path.realpath(java)
    key = f"{version}\0{real}\0{os.stat(real).st_mtime_ns}\0{JVM_OPTIONS}"
    name = hashlib.sha256(key.encode()).hexdigest()[:16]
    return ROOT / ".pytest_cache" / "spark-classes" / f"{name}.jsa"


SPARK_CLASSES = None
"""The archive this run's controller makes if it is missing (None: the options were given, by
the caller or, for the test processes, by the controller)."""
if "SPARK_SUBMIT_OPTS" not in os.environ:
    SPARK_CLASSES = spark_class_archive()
    archived = f" -XX:SharedArchiveFile={SPARK_CLASSES} -Xlog:cds*=off" if SPARK_CLASSES else ""
    # a missing archive is passed over by the JVM, its messages silenced
    os.environ["SPARK_SUBMIT_OPTS"] = JVM_OPTIONS + archived
WEBIS = SHARED / "data" / "webis-qsec-10-training"


def webis_file(name: str) -> Path:
    """A file of the Webis-QSeC-10 training corpus, skipping the test if it is absent."""
    path = WEBIS / name
    if not path.exists():
        pytest.skip(f"Webis-QSeC-10 corpus not found at {path} (../shared is absent)")
    return path


@pytest.fixture
def write(tmp_path: Path):
    """Write text (str) or raw bytes to a file in a temporary directory; returns its path."""

    def _write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


def pytest_configure(config: pytest.Config) -> None:
    """The package compiled to bytecode once, before any worker starts: where the environment
    sets PYTHONDONTWRITEBYTECODE, every qseg run as a subprocess would otherwise compile its
    modules again (a third of a second each, hundreds of times)."""
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(ROOT / "src" / "qseg", quiet=1)
        if SPARK_CLASSES is not None and not SPARK_CLASSES.exists():
            archive_spark_classes(SPARK_CLASSES)


def archive_spark_classes(archive: Path) -> None:
    """Archive Spark's classes in the background, at the lowest priority (the tests' own
    work goes first; the JVMs that start after it is there use it): a minute of one core,
    once per PySpark and Java. A killed run's part is removed by a later one."""
    import subprocess
    import time

    archive.parent.mkdir(parents=True, exist_ok=True)
    for old in archive.parent.glob("*.part"):
        if old.stat().st_mtime < time.time() - 3600:
            old.unlink(missing_ok=True)
    partial = archive.with_name(f"{archive.stem}.{os.getpid()}.part")
    options = f"{JVM_OPTIONS} -XX:ArchiveClassesAtExit={partial} -Xlog:cds*=off"
    subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "spark_classes.py"), str(archive), str(partial)],
        env=os.environ | {"SPARK_SUBMIT_OPTS": options},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=lambda: os.nice(19),
    )


MODULE_SECONDS = "qseg/module-seconds"
"""Where pytest's cache keeps each test file's seconds in the runs before (setup, call and
teardown of its tests, summed)."""
_seconds: dict[str, float] = {}


def _module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


ENCODER_FILES = frozenset(
    f"tests/test_{name}.py" for name in ("contextual", "contract", "default_model", "styles")
)
"""The files whose tests load the contextual encoder (importing torch and transformers costs a
process 4 CPU seconds): they run in one test process, one after the other."""


def _scope_of(nodeid: str) -> str:
    """What one test process runs whole: a file, or the files that load the encoder."""
    module = _module_of(nodeid)
    return "tests/(the encoder's files)" if module in ENCODER_FILES else module


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the encoder's files as one unit (see :data:`ENCODER_FILES`)."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _scope_of(nodeid)

    return Scheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first (the test processes take files one at a time, and a long one
    taken last leaves the others idle while it runs): by their seconds in the last run that
    ran them, else the modules marked ``long`` first; the tests of a file in their order."""
    cache = getattr(config, "cache", None)  # None: the cache plugin is off (-p no:cacheprovider)
    seen = cache.get(MODULE_SECONDS, {}) if cache is not None else {}
    recorded = seen if isinstance(seen, dict) else {}

    def seconds(item: pytest.Item) -> float:
        known = recorded.get(_module_of(item.nodeid))
        if isinstance(known, int | float):
            return float(known)
        return 60.0 if item.get_closest_marker("long") else 0.0

    files = {_module_of(item.nodeid): item for item in items}  # one test of each file
    totals: dict[str, float] = {}  # a scope's seconds: its files'
    for module, item in files.items():
        totals[_scope_of(module)] = totals.get(_scope_of(module), 0.0) + seconds(item)
    items.sort(key=lambda item: (-totals[_scope_of(item.nodeid)], _scope_of(item.nodeid)))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each file's seconds in this run (in the process that reports: with xdist, the one
    that hands out the files)."""
    module = _module_of(report.nodeid)
    _seconds[module] = _seconds.get(module, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The files' seconds kept for the next run's order (those this run did not run keep
    theirs); not by the test processes of xdist, whose reports reach the main process."""
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _seconds:
        return
    seen = cache.get(MODULE_SECONDS, {})
    merged = seen if isinstance(seen, dict) else {}
    merged.update({module: round(value, 2) for module, value in _seconds.items()})
    cache.set(MODULE_SECONDS, merged)


@functools.cache
def _built_in_stores() -> BaseException | None:
    """The one try at building the built-in stores in this process: what it raised, if
    anything (kept, since functools.cache keeps only what a call returns)."""
    from qseg import models
    from qseg.resources.default import default_counts, default_titles

    try:
        default_counts()
        default_titles()
        models.open_segmenter(models.DEFAULT)
    except Exception as error:  # every test that needs them reports it
        return error
    return None


def build_built_in_stores() -> None:
    """Build the built-in stores (and the default model's carried titles) once, in this
    process and without a time limit: a command run as a subprocess with a timeout would
    otherwise build them inside it on a cold cache. A build that failed is not tried again
    by every later test (each try costs up to a minute): they fail at once, naming why."""
    error = _built_in_stores()
    if error is not None:
        pytest.fail(f"the built-in stores could not be built: {error!r}", pytrace=False)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Only a test that runs qseg as a subprocess (its module imports ``subprocess``, or the
    ``qseg`` runner of helpers.py) has the built-in stores built first: every other test
    builds what it uses, when it uses it, so a test that needs none costs no build."""
    module = getattr(item, "module", None)
    if module is None:
        return
    names = vars(module)
    if "subprocess" in names or getattr(names.get("qseg"), "__module__", None) == "helpers":
        build_built_in_stores()


@pytest.fixture(scope="session")
def webis():
    """400 Webis queries with their votes, and the corpus's counts and titles (word counts
    from a toy table, which keeps the built-in counts out of the tests)."""
    from helpers import WORDS

    from qseg.corpora import read_votes
    from qseg.resources import NgramCounts, Resources, TitleSet

    votes = read_votes(webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt"))
    data = "data/webis-qsec-10-training-set-"
    resources = Resources(
        ngrams=NgramCounts.from_file(webis_file(data + "n-gram-web-frequencies-google.txt")),
        words=NgramCounts(WORDS),
        titles=TitleSet.from_file(webis_file(data + "n-gram-wikipedia-titles.txt")),
    )
    ids = list(votes)[:400]
    return {i: votes[i] for i in ids}, resources


@pytest.fixture(scope="session", params=["toy", "webis"])
def voted(request):
    """400 queries with their annotators' votes and the resources to train on: the synthetic
    toy world (always), and the Webis corpus (skipped when ../shared is absent)."""
    if request.param == "webis":
        return request.getfixturevalue("webis")
    import toy

    return dict(toy.votes(400)), toy.resources()
