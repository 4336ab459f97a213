"""Lucene through pyserini: the engine paper 000 used, as a second engine beside tantivy.

pyserini 0.25.0 is the newest release whose Lucene (Anserini 0.25) runs on Java 17; from 0.35 on
Anserini needs Java 21. qseg uses only its JVM access, analyzer and indexer, so install it
without its machine-learning dependencies::

    pip install --no-deps pyserini==0.25.0 && pip install pyjnius

The analyzer matches tantivy's: words as indexed (qseg passes already tokenized text),
lower-cased, no stemming, and the optional stopword list (removed with position gaps). BM25
runs with tantivy's parameters (k1 = 1.2, b = 0.75), so the two engines rank alike. A quoted
phrase is a required clause (Lucene's ``+"..."``), a free word an optional one.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from qseg.corpora.ir import Collection
from qseg.errors import QsegError
from qseg.evaluation.ir.engines.base import Ranking, fingerprint, processed_documents
from qseg.evaluation.ir.versions import QuotedQuery
from qseg.fileio import atomic_directory
from qseg.jvm import log4j_config

_COMPLETE = "complete"
_BATCH = 10_000


def _quiet_jvm() -> None:
    """Before the JVM starts: Lucene's log on stderr, warnings only (Anserini logs to stdout)."""
    import jnius_config

    config = log4j_config(Path(tempfile.gettempdir()), "lucene")
    with contextlib.suppress(ValueError):  # a JVM started elsewhere keeps its logging
        jnius_config.add_options(f"-Dlog4j2.configurationFile=file:{config}")


def _pyserini() -> dict[str, Any]:
    try:
        version("pyserini")
        _quiet_jvm()
        from pyserini.index.lucene import LuceneIndexer
        from pyserini.pyclass import autoclass
    except (PackageNotFoundError, ImportError) as exc:
        raise QsegError(
            "the Lucene engine needs pyserini 0.25.0 and Java 17+: pip install --no-deps "
            f"pyserini==0.25.0 && pip install pyjnius ({exc})"
        ) from None
    return {
        "LuceneIndexer": LuceneIndexer,
        "Searcher": autoclass("io.anserini.search.SimpleSearcher"),
        "Analyzer": autoclass("io.anserini.analysis.DefaultEnglishAnalyzer"),
        "QueryParser": autoclass("org.apache.lucene.queryparser.classic.QueryParser"),
        "Term": autoclass("org.apache.lucene.index.Term"),
        "TermQuery": autoclass("org.apache.lucene.search.TermQuery"),
        "BooleanQuery": autoclass("org.apache.lucene.search.BooleanQuery$Builder"),
        "Occur": autoclass("org.apache.lucene.search.BooleanClause$Occur"),
    }


class LuceneEngine:
    """BM25 retrieval with Lucene (Anserini 0.25 through pyserini 0.25.0)."""

    name = "lucene"

    def __init__(
        self, folder: str | Path, stopwords: frozenset[str] = frozenset(), progress: Any = None
    ) -> None:
        self.lucene = _pyserini()
        self.folder = Path(folder)
        self.stopwords = stopwords
        self.progress = progress
        self.fingerprint = ""
        self._searcher: Any = None
        self._analyzer: Any = None

    def _config(self) -> Iterator[str]:
        yield f"pyserini {version('pyserini')}"
        yield "DefaultEnglishAnalyzer, no stemming, bm25 1.2 0.75"
        yield "stopwords: " + " ".join(sorted(self.stopwords))

    def _analyzer_args(self, folder: Path) -> tuple[list[str], Any]:
        """Indexer flags and the matching query analyzer (stopwords from a file if any)."""
        analyzer = self.lucene["Analyzer"]
        if not self.stopwords:
            return ["-stemmer", "none", "-keepStopwords"], analyzer.fromArguments(
                "none", True, None
            )
        words = folder / "stopwords.txt"
        if not words.exists():
            words.write_text("\n".join(sorted(self.stopwords)) + "\n")
        return ["-stemmer", "none", "-stopwords", str(words)], analyzer.fromArguments(
            "none", False, str(words)
        )

    def index(self, collection: Collection) -> str:
        documents = list(processed_documents(collection))
        digest = fingerprint(iter([*self._config(), *(p for d in documents for p in d)]))
        target = self.folder / digest
        if not (target / _COMPLETE).exists():
            self._build(documents, target)
        _, analyzer = self._analyzer_args(target)
        searcher = self.lucene["Searcher"](str(target / "index"))
        searcher.set_analyzer(analyzer)
        searcher.set_bm25(1.2, 0.75)
        self._searcher, self._analyzer, self.fingerprint = searcher, analyzer, digest
        return digest

    def bm25(self, k1: float, b: float) -> None:
        """Rank with BM25 of these parameters from now on (the index is the same)."""
        if self._searcher is None:
            raise QsegError("the engine has no index: call index(collection) first")
        self._searcher.set_bm25(float(k1), float(b))

    def _build(self, documents: list[tuple[str, str]], target: Path) -> None:
        with atomic_directory(target) as tmp:
            flags, _ = self._analyzer_args(tmp)
            indexer = self.lucene["LuceneIndexer"](
                args=["-index", str(tmp / "index"), "-storePositions", "-storeDocvectors", *flags],
                threads=1,
            )
            for start in range(0, len(documents), _BATCH):
                batch = documents[start : start + _BATCH]
                indexer.add_batch_dict([{"id": i, "contents": text} for i, text in batch])
                if self.progress:
                    self.progress(len(batch))
            indexer.close()
            (tmp / _COMPLETE).write_text("ok\n")

    def search(self, query: QuotedQuery, k: int) -> Ranking:
        if self._searcher is None:
            raise QsegError("the engine has no index: call index(collection) first")
        lucene = self.lucene
        parser = lucene["QueryParser"]("contents", self._analyzer)
        builder = lucene["BooleanQuery"]()
        clauses = 0
        for phrase in query.phrases:
            parsed = parser.parse('"' + " ".join(phrase) + '"')
            if parsed.toString():
                builder.add(parsed, lucene["Occur"].MUST)
                clauses += 1
        for word in query.free:
            parsed = parser.parse(word)
            if parsed.toString():
                builder.add(parsed, lucene["Occur"].SHOULD)
                clauses += 1
        if not clauses:
            return []
        return self._hits(builder.build(), k)

    def search_text(self, text: str, k: int) -> Ranking:
        if self._searcher is None:
            raise QsegError("the engine has no index: call index(collection) first")
        parser = self.lucene["QueryParser"]("contents", self._analyzer)
        try:
            parsed = parser.parse(text)
        except Exception as exc:  # a Java ParseException, raised through pyjnius
            raise QsegError(f"Lucene cannot parse the query {text!r}: {exc}") from None
        return self._hits(parsed, k) if parsed.toString() else []

    def _hits(self, query: Any, k: int) -> Ranking:
        return [(hit.docid, float(hit.score)) for hit in self._searcher.search(query, k)]
