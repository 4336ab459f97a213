"""qseg in PyTerrier pipelines (``pip install 'qseg[pyterrier]'``).

:class:`QsegRewriter` segments the ``query`` column and writes it in an engine's query syntax,
keeping the original in ``query_0`` (PyTerrier's rewrite convention, so ``pt.rewrite.reset()``
undoes it): ``QsegRewriter("default") >> retriever``.

PyTerrier's own Terrier engine downloads its jars when it starts, so this module brings a
retriever that runs here: :class:`QsegRetriever`, BM25 over a positional index of a collection
built in-process by tantivy (or by Lucene through pyserini, where Java is installed), reading
queries in the Lucene syntax the rewriter writes by default (``+"new york yankees"
tickets``: required phrases; ``new york yankees tickets "new york yankees"^0.25``: phrase boosts).
It keeps every input column, ``query_0`` included.

:func:`topics` and :func:`qrels` give a collection of ``../shared/data/ir`` as PyTerrier's
frames, the queries as the IR evaluation sees them (stopwords of the collection removed).
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pandas as pd
import pyterrier as pt

from qseg.corpora.ir import Collection
from qseg.errors import QsegError
from qseg.evaluation.ir.engines import open_engine
from qseg.evaluation.ir.framework import query_words
from qseg.integrations.syntax import Syntax, renderer
from qseg.models import DEFAULT, open_segmenter
from qseg.query import QueryError, normalize
from qseg.segmenters.base import Segmenter


class QsegRewriter(pt.Transformer):
    """Rewrite each query as its segmentation in ``syntax`` (a :class:`Syntax`, or a syntax's
    name: ``lucene``, the default, ``es-dsl``, ``terrier``); the original goes to ``query_0``.
    ``segmenter``: a segmenter or a spec (default: the shipped default model); ``phrases``: a
    phrase file whose phrases every rewrite keeps whole (with a spec)."""

    def __init__(
        self,
        segmenter: Segmenter | str = DEFAULT,
        syntax: Syntax | str = "lucene",
        *,
        phrases: str | os.PathLike[str] | None = None,
    ) -> None:
        if isinstance(segmenter, str):
            segmenter = open_segmenter(segmenter, phrases=phrases)
        elif phrases is not None:
            raise QsegError("phrases go with a spec; give open_segmenter(spec, phrases=...)")
        self.segmenter = segmenter
        self.syntax = Syntax(syntax) if isinstance(syntax, str) else syntax
        self._render = renderer(self.syntax.name, self.syntax)

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        if "query" not in topics.columns:
            raise QsegError(f"QsegRewriter needs a query column; the frame has {list(topics)}")
        texts = [str(text) for text in topics["query"]]
        for qid, text in zip(_ids(topics), texts, strict=True):
            try:
                normalize(text)
            except QueryError as exc:
                raise QsegError(f"query {qid} ({text!r:.60}): {exc}") from None
        rewritten = [self._render(s) for s in self.segmenter.segment_many(texts)]
        out = pt.model.push_queries(topics, inplace=False)
        out["query"] = rewritten
        return out

    def __repr__(self) -> str:
        options = "" if self.syntax == Syntax(self.syntax.name) else f", {self.syntax}"
        return f"QsegRewriter({self.segmenter.spec!r}, {self.syntax.name!r}{options})"


class QsegRetriever(pt.Transformer):
    """BM25 over ``collection`` with ``engine`` (``tantivy``, embedded; ``lucene``, through
    pyserini on Java): the top ``k`` documents of each query (Lucene syntax), every input
    column kept, with ``docno``, ``score`` and ``rank``. Indexes are built once under
    ``folder`` (default: qseg's cache), as ``qseg ir-eval`` builds them. ``bm25``: BM25's
    ``(k1, b)`` (Lucene only; default 1.2, 0.75, tantivy's fixed ones)."""

    def __init__(
        self,
        collection: Collection,
        engine: str = "tantivy",
        k: int = 1000,
        folder: str | Path | None = None,
        bm25: tuple[float, float] | None = None,
    ) -> None:
        from qseg.fileio import cache_dir

        if bm25 is not None and engine != "lucene":
            raise QsegError(f"{engine} ranks with BM25's k1 = 1.2, b = 0.75: bm25 needs lucene")
        self.collection = collection
        self.k = k
        self.bm25 = bm25
        place = Path(folder) if folder is not None else cache_dir() / "ir" / "indexes"
        self.engine = open_engine(engine, place)
        self.engine.index(collection)
        if bm25 is not None:
            from qseg.evaluation.ir.engines.lucene_engine import LuceneEngine

            assert isinstance(self.engine, LuceneEngine)
            self.engine.bm25(*bm25)

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        if "query" not in topics.columns:
            raise QsegError(f"QsegRetriever needs a query column; the frame has {list(topics)}")
        rows: list[dict[Hashable, Any]] = []
        for record in topics.to_dict("records"):
            ranking = self.engine.search_text(str(record["query"]), self.k)
            for rank, (docno, score) in enumerate(ranking):
                rows.append(record | {"docno": docno, "score": score, "rank": rank})
        return pd.DataFrame(rows, columns=[*topics.columns, "docno", "score", "rank"])

    def __repr__(self) -> str:
        tuned = "" if self.bm25 is None else f", bm25={self.bm25}"
        return f"QsegRetriever({self.collection.name!r}, {self.engine.name!r}{tuned})"


def topics(collection: Collection) -> pd.DataFrame:
    """The judged queries as a ``qid``, ``query`` frame, as the IR evaluation sees them."""
    words = query_words(collection)
    return pd.DataFrame({"qid": list(words), "query": [" ".join(w) for w in words.values()]})


def qrels(collection: Collection) -> pd.DataFrame:
    """The judgments as a ``qid``, ``docno``, ``label`` frame."""
    rows = [
        (qid, docno, grade)
        for qid, judged in collection.qrels.items()
        for docno, grade in judged.items()
    ]
    return pd.DataFrame(rows, columns=["qid", "docno", "label"])


def _ids(topics: pd.DataFrame) -> list[str]:
    return [str(q) for q in topics["qid"]] if "qid" in topics else [str(i) for i in topics.index]
