"""qseg in PyTerrier: the rewriter's convention, the embedded retriever, and a real
``pt.Experiment`` over a collection of ../shared/data/ir that agrees with ``qseg ir-eval``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import SHARED
from helpers import adapted_default, out, qseg

pt = pytest.importorskip("pyterrier", reason="the pyterrier extra is not installed")
pd = pytest.importorskip("pandas")

from qseg.corpora.ir import known_collection  # noqa: E402
from qseg.errors import QsegError  # noqa: E402
from qseg.integrations.pyterrier import QsegRetriever, QsegRewriter, qrels, topics  # noqa: E402
from qseg.integrations.syntax import Syntax  # noqa: E402

MEASURES = ["map", "ndcg_cut_10", "recip_rank"]


def collection(name: str):
    folder = SHARED / "data" / "ir" / name
    if not folder.exists():
        pytest.skip(f"{name} not found at {folder} (../shared is absent)")
    return known_collection(name, folder)


@pytest.fixture(scope="module")
def cranfield():
    return collection("cranfield")


@pytest.fixture(scope="module")
def bm25(cranfield, tmp_path_factory):
    return QsegRetriever(cranfield, folder=tmp_path_factory.mktemp("indexes"))


def test_the_rewriter_keeps_the_original_and_reset_restores_it():
    frame = pd.DataFrame({"qid": ["1", "2"], "query": ["new york yankees tickets", "c++ books"]})
    rewritten = QsegRewriter("wiki(unseen_titles=true)")(frame)
    assert list(rewritten["query_0"]) == list(frame["query"])
    printed = out(
        qseg(
            "segment", "--method", "wiki(unseen_titles=true)", "--format", "lucene", *frame["query"]
        )
    )
    assert list(rewritten["query"]) == printed.splitlines()
    restored = (QsegRewriter("naive") >> pt.rewrite.reset())(frame)
    assert list(restored["query"]) == list(frame["query"]) and "query_0" not in restored
    twice = (QsegRewriter("naive") >> QsegRewriter("naive", "terrier"))(frame)
    assert list(twice["query_1"]) == list(frame["query"])


def test_the_rewriter_keeps_a_phrase_list(tmp_path):
    phrases = tmp_path / "phrases.txt"
    phrases.write_text("yankees tickets\n")
    frame = pd.DataFrame({"qid": ["1"], "query": ["new york yankees tickets"]})
    rewritten = QsegRewriter("wiki(unseen_titles=true)", "lucene", phrases=phrases)(frame)
    printed = qseg("segment", "--method", "wiki(unseen_titles=true)", "--format", "lucene",
                   "--phrases", phrases, "new york yankees tickets")  # fmt: skip
    assert list(rewritten["query"]) == out(printed).splitlines()
    assert list(rewritten["query"]) != list(
        QsegRewriter("wiki(unseen_titles=true)")(frame)["query"]
    )


def test_an_adapted_model_rewrites_as_qseg_segment_formats(tmp_path):
    adapted = str(adapted_default(tmp_path))
    frame = pd.DataFrame({"qid": ["1", "2"], "query": ["containers for food", "c++ books"]})
    rewritten = QsegRewriter(adapted, "terrier")(frame)
    printed = out(qseg("segment", "--method", adapted, "--format", "terrier", *frame["query"]))
    assert list(rewritten["query"]) == printed.splitlines()


def test_bad_frames_are_named():
    with pytest.raises(QsegError, match="needs a query column"):
        QsegRewriter("naive")(pd.DataFrame({"qid": ["1"]}))
    with pytest.raises(QsegError, match=r"query q7 \(' \| '\): empty query"):
        QsegRewriter("naive")(pd.DataFrame({"qid": ["q7"], "query": [" | "]}))


def test_the_retriever_keeps_every_column_and_reads_phrases(cranfield, bm25):
    frame = topics(cranfield).head(5)
    rewritten = QsegRewriter("default")(frame)
    ranked = bm25(rewritten)
    assert {"qid", "query", "query_0", "docno", "score", "rank"} <= set(ranked)
    first = ranked[ranked["qid"] == frame["qid"].iloc[0]]
    assert list(first["rank"]) == list(range(len(first)))
    assert first["score"].is_monotonic_decreasing
    # a required phrase: every document found holds it
    phrase = bm25(pd.DataFrame({"qid": ["x"], "query": ['+"boundary layer"']}))
    plain = bm25(pd.DataFrame({"qid": ["x"], "query": ["boundary layer"]}))
    assert 0 < len(phrase) < len(plain)
    from qseg.evaluation.ir.engines.base import processed_documents

    texts = dict(processed_documents(cranfield))  # as indexed: alphanumeric runs
    assert all("boundary layer" in texts[d] for d in phrase["docno"])


def test_an_experiment_agrees_with_qseg_ir_eval(cranfield, bm25, tmp_path):
    """The same queries, engine and BM25 as ``qseg ir-eval``: the plain query equals its
    unsegmented column and the rewritten one its all-quoted column, query by query, where a
    query repeats no word (tantivy's query parser counts a repeated word once, ir-eval's
    queries each occurrence)."""
    from qseg.evaluation.ir.engines import open_engine
    from qseg.evaluation.ir.framework import UNSEGMENTED, evaluate_ir, query_words
    from qseg.models import open_segmenter

    frame, judged = topics(cranfield), qrels(cranfield)
    # the depth of qseg ir-eval's runs for nDCG@10, so that ties at the cut-off fall alike
    top10 = QsegRetriever(cranfield, k=10, folder=bm25.engine.folder.parent)
    systems = [
        top10,
        QsegRewriter("default") >> top10,
        QsegRewriter("default", Syntax("lucene", plain=True)) >> bm25,
    ]
    names = ["bm25", "default, required phrases", "default, phrase boosts"]
    table = pt.Experiment(systems, frame, judged, eval_metrics=MEASURES, names=names, baseline=0)
    assert list(table["name"]) == names
    assert {"map p-value", "ndcg_cut_10 p-value"} <= set(table.columns)
    per_query = pt.Experiment(
        systems[:2], frame, judged, eval_metrics=["ndcg_cut_10"], names=names[:2], perquery=True
    )
    words = query_words(cranfield)
    segmenter = open_segmenter("default")
    segmented = dict(zip(words, segmenter.segment_many(words.values()), strict=True))
    engine = open_engine("tantivy", tmp_path)
    found = evaluate_ir(cranfield, engine, {"default": segmented}, measures=["nDCG@10"], bqv=False)
    distinct = [qid for qid, query in words.items() if len(set(query)) == len(query)]
    assert len(distinct) > 80
    for name, column in zip(names, [UNSEGMENTED, "default all-quoted"], strict=False):
        rows = per_query[per_query["name"] == name]
        got = dict(zip(rows["qid"], rows["value"], strict=True))
        expected = found.scores[column]["nDCG@10"]
        assert [got[q] for q in distinct] == pytest.approx([expected[q] for q in distinct])


def test_lucene_is_a_second_engine_where_java_is(cranfield, tmp_path):
    if shutil.which("java") is None:
        pytest.skip("no Java: the Lucene engine (pyserini) needs Java 17")
    pytest.importorskip("pyserini", reason="the Lucene engine needs pyserini")
    lucene = QsegRetriever(cranfield, engine="lucene", folder=tmp_path)
    tantivy = QsegRetriever(cranfield, folder=Path(tmp_path) / "t")
    frame = topics(cranfield).head(40)
    rewriter = QsegRewriter("default")
    table = pt.Experiment(
        [tantivy, lucene, rewriter >> lucene],
        frame,
        qrels(cranfield),
        eval_metrics=MEASURES,
        names=["tantivy", "lucene", "lucene, required phrases"],
    ).set_index("name")
    # the same BM25 over the same analysis: the two engines agree closely
    assert table.loc["lucene", "map"] == pytest.approx(table.loc["tantivy", "map"], abs=0.02)
    assert table.loc["lucene, required phrases", "map"] < table.loc["lucene", "map"]
    # BM25's parameters on Lucene (tantivy's are fixed), and segment proximity as a pipeline
    tuned = QsegRetriever(cranfield, engine="lucene", folder=tmp_path, bm25=(1.8, 0.6))
    proximity = QsegRewriter("default", Syntax("lucene", proximity=True))
    ranked = pt.Experiment(
        [tuned, proximity >> lucene], frame, qrels(cranfield), eval_metrics=MEASURES,
        names=["tuned", "proximity"],
    ).set_index("name")  # fmt: skip
    assert ranked.loc["tuned", "map"] != table.loc["lucene", "map"]
    assert abs(ranked.loc["proximity", "map"] - table.loc["lucene", "map"]) < 0.05
    assert "bm25=(1.8, 0.6)" in repr(tuned)
    with pytest.raises(QsegError, match="bm25 needs lucene"):
        QsegRetriever(cranfield, folder=Path(tmp_path) / "t", bm25=(1.8, 0.6))
