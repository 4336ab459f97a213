"""Search engines behind the IR-based evaluation."""

from __future__ import annotations

from pathlib import Path

from qseg.evaluation.ir.engines.base import Engine

ENGINES = ("tantivy", "lucene")


def open_engine(name: str, folder: Path, stopwords: frozenset[str] = frozenset()) -> Engine:
    """The engine ``name`` (tantivy, embedded; or Lucene through pyserini), keeping its
    indexes under ``folder``; ``stopwords`` are the words its analyzer drops."""
    if name == "lucene":
        from qseg.evaluation.ir.engines.lucene_engine import LuceneEngine

        return LuceneEngine(folder / "lucene", stopwords)
    from qseg.evaluation.ir.engines.tantivy_engine import TantivyEngine

    return TantivyEngine(folder / "tantivy", stopwords)
