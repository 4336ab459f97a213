"""N-gram counts from a collection's own documents, for segmenting its queries.

The documents, as the search engine indexes them (:func:`processed_documents`), one a line,
are counted by ``qseg build ngrams --from text``; the store is kept in a folder under a digest
of the documents, so a rerun reuses it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from qseg.corpora.ir import Collection
from qseg.evaluation.ir.engines.base import fingerprint, processed_documents
from qseg.resources.counts import NgramCounts
from qseg.resources.store import Store


def collection_counts(
    collection: Collection, folder: str | Path, max_order: int = 5, quiet: bool = True
) -> NgramCounts:
    """1..``max_order``-gram counts of the documents (built once per document set)."""
    from qseg.resources.builders import build_ngrams

    documents = list(processed_documents(collection))
    digest = fingerprint(iter([f"counts {max_order}", *(text for _, text in documents)]))
    path = Path(folder) / f"{collection.name}-{digest}-counts.qseg"
    if Store.is_store(path):
        return NgramCounts.from_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        text = Path(tmp) / "documents.txt"
        with open(text, "w", encoding="utf-8") as out:
            for _, body in documents:
                if body:
                    out.write(body + "\n")
        build_ngrams([text], path, source="text", max_order=max_order, quiet=quiet)
    return NgramCounts.from_file(path)
