"""Errors that qseg reports to users as one line, without a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike


class QsegError(Exception):
    """Base class of every error qseg raises on purpose. On the command line: exit status 2,
    a usage error (a bad argument, option or spec), unless it is a :class:`DataError`."""


class DataError(QsegError):
    """The data is wrong, not the command: a file's or stream's content, a store, a model.
    On the command line: exit status 1."""


class PathError(QsegError):
    """A path given that cannot be used as it is: missing, a directory, not readable or not
    writable. A usage error (exit status 2), found before any work where it can be."""

    def __init__(self, path: str | PathLike[str], message: str) -> None:
        self.path = str(path)
        super().__init__(f"{self.path}: {message}")


class CacheError(QsegError):
    """The cache folder cannot hold what qseg builds once, and no other place can either:
    the environment's problem (``QSEG_CACHE``), never the installation's."""


class AgreementError(QsegError):
    """Annotations on which an agreement statistic is not defined."""


class RandomModelError(QsegError):
    """A query length or kind the random model of agreement cannot enumerate."""


class InputError(DataError):
    """Bad content in a file or stream; the message names the source and, where known, the line."""

    def __init__(self, source: str | PathLike[str], line: int | None, message: str) -> None:
        self.source = str(source)
        self.line = line
        self.reason = message
        where = self.source if line is None else f"{self.source}:{line}"
        super().__init__(f"{where}: {message}")


class StyleHint(UserWarning):
    """A model answering in one style (the default's web style) is given queries that are
    mostly of another kind, whose style fits them better: said once a model, the answers
    unchanged. Silence it with ``warnings.filterwarnings("ignore", category=qseg.StyleHint)``."""


EXTRAS = {
    "duckdb": "build",
    "pyarrow": "build",
    "sklearn": "train",
    "xgboost": "train",
    "gensim": "train",
    "scipy": "eval",
    "tantivy": "eval",
    "ir_measures": "eval",
    "krippendorff": "eval",
    "matplotlib": "eval",
    "pyspark": "spark",
    "pandas": "spark",
    "jnius": "lucene",
    "jnius_config": "lucene",
    "torch": "contextual",
    "transformers": "contextual",
    "fastapi": "serve",
    "starlette": "serve",
    "pydantic": "serve",
    "pydantic_settings": "serve",
    "uvicorn": "serve",
    "uvicorn_worker": "serve",
    "gunicorn": "serve",
    "prometheus_client": "serve",
    "httpx": "serve",
    "fastapi_offline": "serve",
    "pyterrier": "pyterrier",
}
"""The extra of ``pip install 'qseg[EXTRA]'`` that brings each optional top-level module."""


def missing_extra(exc: ImportError) -> QsegError | None:
    """The one-line error for an optional module that is not installed, naming the extra that
    installs it; ``None`` for any other import failure (a bug, not a missing extra)."""
    name = (exc.name or "").split(".")[0]
    extra = EXTRAS.get(name)
    if extra is None:
        return None
    return needs_package(name, extra)


def needs_package(name: str, extra: str) -> QsegError:
    """The one-line error for the optional package ``name`` missing: ``extra`` brings it."""
    return QsegError(
        f"this needs the Python package {name!r}, which is not installed: "
        f"pip install 'qseg[{extra}]' (or 'qseg[all]' for everything)"
    )


@contextmanager
def extras_named() -> Iterator[None]:
    """Inside it, an optional module that is not installed raises the one-line error of
    :func:`missing_extra` (what the command line prints), not a bare ``ImportError``."""
    try:
        yield
    except ImportError as exc:
        missing = missing_extra(exc)
        if missing is None:
            raise
        raise missing from None
