"""Readers for IR test collections: documents, queries and graded relevance judgments.

Formats: TREC qrels (``qid iter docid grade``), TREC topics (``<top><num>..<title>..``), TREC
``<DOC><DOCNO>`` documents, tab-separated ``id<TAB>text`` documents and queries, and the SMART
format of Cranfield (``.I id`` then ``.T``/``.A``/``.B``/``.W`` fields). Grades are mapped to the
0/1/2 scale of paper 000 by a configurable mapping; a grade mapped to ``None`` is dropped.
The three collections in ``../shared/data/ir`` load with :func:`nfcorpus`, :func:`cranfield`
and :func:`vaswani`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, read_lines

Grades = Mapping[int, int | None]


@dataclass
class Collection:
    """Documents (read lazily), queries and judgments of one IR test collection.

    ``stopwords`` are removed from documents and queries before anything else -- indexing,
    counting, segmentation -- as NFCorpus's documents were stored (so a phrase of the remaining
    words can match across a removed stopword).
    """

    name: str
    documents: Callable[[], Iterator[tuple[str, str]]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    stopwords: frozenset[str] = frozenset()
    sources: list[str] = field(default_factory=list)

    def judged_queries(self) -> dict[str, str]:
        """The queries that have at least one relevant (grade >= 1) document."""
        return {
            qid: text
            for qid, text in self.queries.items()
            if any(grade >= 1 for grade in self.qrels.get(qid, {}).values())
        }


def read_qrels(
    path: StrPath, grades: Grades | None = None, columns: int = 4
) -> dict[str, dict[str, int]]:
    """Judgments, one a line (any whitespace): TREC ``qid iteration docid grade`` (4 columns) or
    ``qid docid grade`` (3, as Cranfield's ``cranqrel``); grades mapped by ``grades``."""
    source = str(path)
    layout = "`qid iter docid grade`" if columns == 4 else "`qid docid grade`"
    qrels: dict[str, dict[str, int]] = {}
    for lineno, line in read_lines(path):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != columns:
            raise InputError(source, lineno, f"expected {layout}, got {line!r}")
        qid, docid, grade = fields[0], fields[-2], fields[-1]
        value = _grade(grade, grades, source, lineno)
        if value is not None:
            qrels.setdefault(qid, {})[docid] = value
    if not qrels:
        raise InputError(source, None, "no judgments in file")
    return qrels


def _grade(text: str, grades: Grades | None, source: str, lineno: int) -> int | None:
    try:
        grade = int(text)
    except ValueError:
        raise InputError(source, lineno, f"grade {text!r} is not an integer") from None
    if grades is None:
        return grade
    if grade not in grades:
        raise InputError(source, lineno, f"grade {grade} has no mapping ({dict(grades)})")
    return grades[grade]


def read_tsv(path: StrPath) -> dict[str, str]:
    """``id<TAB>text`` lines (documents or queries)."""
    source = str(path)
    rows: dict[str, str] = {}
    for lineno, line in read_lines(path):
        ident, tab, text = line.partition("\t")
        if not tab or not ident.strip():
            raise InputError(source, lineno, "expected `id<TAB>text`")
        if ident in rows:
            raise InputError(source, lineno, f"duplicate id {ident!r}")
        rows[ident] = text
    if not rows:
        raise InputError(source, None, "no records in file")
    return rows


_TAG = re.compile(r"<(/?)(\w+)>")


def read_trec_tagged(
    path: StrPath, record: str, key: str, text_tags: Sequence[str]
) -> dict[str, str]:
    """Records ``<record>..</record>`` with an id in ``<key>`` and text in ``text_tags``
    (or all untagged text when ``text_tags`` is empty): TREC ``<DOC>`` files and topics."""
    source = str(path)
    records: dict[str, str] = {}
    current: dict[str, list[str]] | None = None
    open_tag: str | None = None
    start = 0
    for lineno, line in read_lines(path):
        pos = 0
        for match in _TAG.finditer(line):
            if current is not None and open_tag is not None:
                current.setdefault(open_tag, []).append(line[pos : match.start()])
            closing, tag = match.group(1) == "/", match.group(2).lower()
            pos = match.end()
            if tag == record:
                if closing:
                    if current is None:
                        raise InputError(source, lineno, f"</{record}> without <{record}>")
                    _finish_record(current, key, text_tags, records, source, start)
                    current, open_tag = None, None
                else:
                    current, open_tag, start = {}, "", lineno
            elif current is not None:
                open_tag = "" if closing else tag
        if current is not None and open_tag is not None:
            current.setdefault(open_tag, []).append(line[pos:] + "\n")
    if current is not None:
        raise InputError(source, start, f"<{record}> is not closed")
    if not records:
        raise InputError(source, None, f"no <{record}> records in file")
    return records


def _finish_record(
    parts: dict[str, list[str]],
    key: str,
    text_tags: Sequence[str],
    records: dict[str, str],
    source: str,
    lineno: int,
) -> None:
    ident = "".join(parts.get(key, [])).strip()
    if not ident:
        raise InputError(source, lineno, f"record without <{key}>")
    tags = text_tags or [""]
    text = " ".join("".join(parts.get(tag, [])) for tag in tags)
    records[ident] = " ".join(text.split())


def read_smart(path: StrPath, fields: str = "TW") -> list[tuple[str, str]]:
    """SMART records (``.I id`` then ``.X`` field lines) as ``(id, text of fields)`` in order."""
    source = str(path)
    records: list[tuple[str, str]] = []
    ident: str | None = None
    field_name = ""
    text: list[str] = []
    for lineno, line in read_lines(path):
        if line.startswith(".I"):
            if ident is not None:
                records.append((ident, " ".join(" ".join(text).split())))
            ident = line[2:].strip()
            if not ident:
                raise InputError(source, lineno, ".I without an id")
            field_name, text = "", []
        elif len(line) >= 2 and line[0] == "." and line[1].isalpha() and line[2:].strip() == "":
            field_name = line[1]
        elif ident is None:
            raise InputError(source, lineno, "text before the first .I")
        elif field_name in fields:
            text.append(line)
    if ident is not None:
        records.append((ident, " ".join(" ".join(text).split())))
    if not records:
        raise InputError(source, None, "no .I records in file")
    return records


def read_words(path: StrPath) -> frozenset[str]:
    """A stopword list: one word a line, lower-cased."""
    return frozenset(line.strip().lower() for _, line in read_lines(path) if line.strip())


# -- the collections in ../shared/data/ir ----------------------------------------------------

NFCORPUS_GRADES: Grades = {3: 2, 2: 1, 1: 0}
CRANFIELD_GRADES: Grades = {1: 2, 2: 2, 3: 1, 4: 0, -1: None}
VASWANI_GRADES: Grades = {1: 2}


def nfcorpus(
    folder: StrPath,
    queries: Sequence[str] = ("nontopic-titles", "vid-titles"),
    split: str = "test",
    qrels: str = "3-2-1",
    grades: Grades = NFCORPUS_GRADES,
) -> Collection:
    """NFCorpus: its documents are stored without the words of ``raw/stopwords.large``."""
    root = Path(folder)
    docs = root / f"{split}.docs"
    texts: dict[str, str] = {}
    for kind in queries:
        path = root / f"{split}.{kind}.queries"
        for qid, text in read_tsv(path).items():
            if texts.setdefault(qid, text) != text:
                raise InputError(path, None, f"query {qid} differs from the same id elsewhere")
    return Collection(
        name=f"nfcorpus-{split}-{'+'.join(queries)}",
        documents=lambda: iter(read_tsv(docs).items()),
        queries=texts,
        qrels=read_qrels(root / f"{split}.{qrels}.qrel", grades),
        stopwords=read_words(root / "raw" / "stopwords.large"),
        sources=[str(docs)],
    )


def cranfield(
    folder: StrPath, grades: Grades = CRANFIELD_GRADES, stopwords: frozenset[str] = frozenset()
) -> Collection:
    """Cranfield 1400: SMART files; queries are numbered 1..225 by position in ``cran.qry``."""
    root = Path(folder)
    docs = root / "cran.all.1400"
    queries = {str(i): text for i, (_, text) in enumerate(read_smart(root / "cran.qry", "W"), 1)}
    return Collection(
        name="cranfield",
        documents=lambda: iter(read_smart(docs, "TW")),
        queries=queries,
        qrels=read_qrels(root / "cranqrel", grades, columns=3),
        stopwords=stopwords,
        sources=[str(docs)],
    )


def vaswani(
    folder: StrPath, grades: Grades = VASWANI_GRADES, stopwords: frozenset[str] = frozenset()
) -> Collection:
    """NPL (Vaswani): TREC ``<DOC>`` documents and topics, binary judgments (relevant = 2)."""
    root = Path(folder)
    docs = root / "corpus" / "doc-text.trec"
    return Collection(
        name="vaswani",
        documents=lambda: iter(read_trec_tagged(docs, "doc", "docno", ()).items()),
        queries=read_trec_tagged(root / "query-text.trec", "top", "num", ("title",)),
        qrels=read_qrels(root / "qrels", grades),
        stopwords=stopwords,
        sources=[str(docs)],
    )


def parse_grades(text: str) -> Grades:
    """A grade mapping such as ``3:2,2:1,1:0,-1:drop`` (``drop``: leave the judgment out)."""
    mapping: dict[int, int | None] = {}
    for item in text.split(","):
        source, colon, target = item.partition(":")
        try:
            mapping[int(source)] = None if target.strip() == "drop" else int(target)
        except ValueError:
            raise QsegError(f"grades: {item!r} is not GRADE:GRADE or GRADE:drop") from None
        if not colon:
            raise QsegError(f"grades: {item!r} is not GRADE:GRADE or GRADE:drop")
    return mapping


KNOWN = ("nfcorpus", "cranfield", "vaswani")
FILE_FORMATS = ("tsv", "trec", "smart")


def known_collection(
    name: str,
    folder: StrPath,
    nfcorpus_queries: Sequence[str] = ("nontopic-titles", "vid-titles"),
    stopwords: frozenset[str] = frozenset(),
) -> Collection:
    """One of the collections of ``../shared/data/ir`` by name, from its folder."""
    if name == "nfcorpus":
        return nfcorpus(folder, queries=nfcorpus_queries)
    if name == "cranfield":
        return cranfield(folder, stopwords=stopwords)
    if name == "vaswani":
        return vaswani(folder, stopwords=stopwords)
    raise QsegError(f"unknown collection {name!r}; known: {', '.join(KNOWN)}")


def collection_from_files(
    docs: StrPath,
    queries: StrPath,
    qrels: StrPath,
    *,
    docs_format: str = "tsv",
    queries_format: str = "tsv",
    grades: Grades | None = None,
    stopwords: frozenset[str] = frozenset(),
) -> Collection:
    """A collection from a document file, a query file (each ``tsv``, ``trec`` or
    ``smart``) and TREC qrels."""
    documents = {
        "tsv": lambda: read_tsv(docs),
        "trec": lambda: read_trec_tagged(docs, "doc", "docno", ()),
        "smart": lambda: dict(read_smart(docs)),
    }[docs_format]
    topics = {
        "tsv": lambda: read_tsv(queries),
        "trec": lambda: read_trec_tagged(queries, "top", "num", ("title",)),
        "smart": lambda: {str(i): t for i, (_, t) in enumerate(read_smart(queries, "W"), 1)},
    }[queries_format]
    return Collection(
        name=Path(docs).stem,
        documents=lambda: iter(documents().items()),
        queries=topics(),
        qrels=read_qrels(qrels, grades),
        stopwords=stopwords,
        sources=[str(docs)],
    )
