"""The search engine protocol of the IR-based evaluation: index a collection, run quoted queries.

A quoted phrase must occur in a matching document with its words in order and adjacent (as on
web search engines; paper 000 calls it ordered contiguity); free words are optional and scored.
Every engine analyzes documents and queries with one analyzer, so that a phrase can match.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Protocol

from qseg.corpora.ir import Collection
from qseg.evaluation.ir.versions import QuotedQuery, ir_words

Ranking = list[tuple[str, float]]


class Engine(Protocol):
    """A retrieval engine behind the evaluation."""

    name: str
    fingerprint: str
    """The fingerprint of the index in use, empty before :meth:`index`."""

    def index(self, collection: Collection) -> str:
        """Index (or reopen the index of) ``collection``; returns the index fingerprint."""
        ...

    def search(self, query: QuotedQuery, k: int) -> Ranking:
        """The top ``k`` documents for ``query``: ``(doc id, score)``, best first."""
        ...

    def search_text(self, text: str, k: int) -> Ranking:
        """The top ``k`` documents for a query in the Lucene query syntax (``+"new york"
        tickets``, ``"new york"~1^2``), as :mod:`qseg.integrations.syntax` writes it."""
        ...


def fingerprint(parts: Iterator[str]) -> str:
    """A stable digest of an engine's configuration and the documents it indexes."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def processed_documents(collection: Collection) -> Iterator[tuple[str, str]]:
    """Documents as engines index them: :func:`ir_words` without the collection's stopwords."""
    for ident, text in collection.documents():
        yield ident, " ".join(ir_words(text, collection.stopwords))
