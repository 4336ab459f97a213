"""tantivy, the embedded default engine: BM25 over a positional index, built in-process.

Documents and queries go through one analyzer: tantivy's simple tokenizer (alphanumeric runs),
lower-casing, and an optional stopword list; removed stopwords leave position gaps, as in
Lucene, so ``"effects of caffeine"`` matches ``effects of caffeine`` but not ``effects
caffeine``. A quoted phrase is a required clause, a free word an optional one.

Indexes are kept under ``folder/<fingerprint>``, the fingerprint covering tantivy's version, the
analyzer and every document, so a changed collection or configuration gets a new index.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

from qseg.corpora.ir import Collection
from qseg.errors import QsegError
from qseg.evaluation.ir.engines.base import Ranking, fingerprint, processed_documents
from qseg.evaluation.ir.versions import QuotedQuery
from qseg.fileio import atomic_directory

ANALYZER = "qseg"
_COMPLETE = "complete"


class TantivyEngine:
    """BM25 retrieval with tantivy (the ``tantivy`` package)."""

    name = "tantivy"

    def __init__(
        self, folder: str | Path, stopwords: frozenset[str] = frozenset(), progress: Any = None
    ) -> None:
        import tantivy

        self._tantivy = tantivy
        self.folder = Path(folder)
        self.stopwords = stopwords
        self.progress = progress
        builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(
            tantivy.Filter.lowercase()
        )
        if stopwords:
            builder = builder.filter(tantivy.Filter.custom_stopword(sorted(stopwords)))
        self.analyzer = builder.build()
        schema = tantivy.SchemaBuilder()
        schema.add_text_field("id", stored=True, tokenizer_name="raw")
        schema.add_text_field(
            "body", stored=False, tokenizer_name=ANALYZER, index_option="position"
        )
        self.schema = schema.build()
        self._index: Any = None
        self._searcher: Any = None
        self.fingerprint = ""

    def _config(self) -> Iterator[str]:
        yield f"tantivy {version('tantivy')}"
        yield "simple tokenizer, lowercase"
        yield "stopwords: " + " ".join(sorted(self.stopwords))

    def index(self, collection: Collection) -> str:
        documents = list(processed_documents(collection))
        digest = fingerprint(self._iter_config_and_documents(documents))
        target = self.folder / digest
        if not (target / _COMPLETE).exists():
            self._build(documents, target)
        index = self._tantivy.Index(self.schema, path=str(target), reuse=True)
        index.register_tokenizer(ANALYZER, self.analyzer)
        index.reload()
        self._index = index
        self._searcher = index.searcher()
        self.fingerprint = digest
        return digest

    def _iter_config_and_documents(self, documents: list[tuple[str, str]]) -> Iterator[str]:
        yield from self._config()
        for ident, text in documents:
            yield ident
            yield text

    def _build(self, documents: list[tuple[str, str]], target: Path) -> None:
        tantivy = self._tantivy
        with atomic_directory(target) as tmp:
            index = tantivy.Index(self.schema, path=str(tmp))
            index.register_tokenizer(ANALYZER, self.analyzer)
            writer = index.writer(heap_size=128_000_000, num_threads=1)
            for ident, text in documents:
                writer.add_document(tantivy.Document(id=ident, body=text))
                if self.progress:
                    self.progress(1)
            writer.commit()
            writer.wait_merging_threads()
            (tmp / _COMPLETE).write_text("ok\n")

    def _query(self, query: QuotedQuery) -> Any:
        tantivy = self._tantivy
        clauses = []
        for phrase in query.phrases:
            parsed = self._index.parse_query('"' + " ".join(phrase) + '"', ["body"])
            clauses.append((tantivy.Occur.Must, parsed))
        for word in query.free:
            for token in self.analyzer.analyze(word):
                term = tantivy.Query.term_query(self.schema, "body", token)
                clauses.append((tantivy.Occur.Should, term))
        return tantivy.Query.boolean_query(clauses) if clauses else None

    def search(self, query: QuotedQuery, k: int) -> Ranking:
        if self._searcher is None:
            raise QsegError("the engine has no index: call index(collection) first")
        built = self._query(query)
        return [] if built is None else self._hits(built, k)

    def search_text(self, text: str, k: int) -> Ranking:
        if self._searcher is None:
            raise QsegError("the engine has no index: call index(collection) first")
        try:
            parsed = self._index.parse_query(text, ["body"])
        except ValueError as exc:
            raise QsegError(f"tantivy cannot parse the query {text!r}: {exc}") from None
        return self._hits(parsed, k)

    def _hits(self, query: Any, k: int) -> Ranking:
        searcher = self._searcher
        hits = searcher.search(query, k).hits
        return [(searcher.doc(address)["id"][0], float(score)) for score, address in hits]
