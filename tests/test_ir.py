"""The IR-based evaluation (paper 000): versions, engine, metrics, oracle, BQV_BF, cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED
from helpers import assert_one_line_error

from qseg.corpora import ir
from qseg.errors import InputError, QsegError
from qseg.evaluation.ir.engines.tantivy_engine import TantivyEngine
from qseg.evaluation.ir.framework import (
    BQV,
    UNSEGMENTED,
    evaluate_ir,
    kendall_taus,
    parse_measures,
    query_words,
    score_rankings,
)
from qseg.evaluation.ir.versions import (
    QuotedQuery,
    all_quoted,
    bqv_candidates,
    nested_versions,
    quoted_versions,
)
from qseg.resources import Resources
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.registry import default_spec

# -- quoted versions ------------------------------------------------------------------------


def test_versions_of_a_segmented_query_in_the_style_of_table_1():
    """Paper 000, section 2: 2^n versions, deduplicated (quoting one word changes nothing)."""
    seg = Segmentation.from_pipe("harry potter|game|pc download")
    texts = [v.text for v in quoted_versions(seg)]
    assert texts == [
        "harry potter game pc download",
        '"harry potter" game pc download',
        'harry potter game "pc download"',
        '"harry potter" game "pc download"',
    ]  # 2^3 = 8 choices, 4 distinct: quoting "game" changes nothing
    assert all_quoted(seg).text == texts[-1]
    assert quoted_versions(Segmentation.from_pipe("a|b|c"))[0].text == "a b c"


def test_a_version_separates_required_phrases_from_free_words():
    version = QuotedQuery.of(Segmentation.from_pipe("new york|yankees tickets|x"), frozenset({0}))
    assert version.phrases == (("new", "york"),)
    assert version.free == ("yankees", "tickets", "x")


def test_versions_of_a_tree_quote_constituents_that_do_not_overlap():
    tree = NestedSegmentation.from_brackets("(((new york) yankees) tickets)")
    assert [v.text for v in nested_versions(tree)] == [
        "new york yankees tickets",
        '"new york yankees tickets"',
        '"new york" yankees tickets',
        '"new york yankees" tickets',  # as typed: the root's multiword children quoted
    ]
    balanced = nested_versions(NestedSegmentation.from_brackets("((a b) (c d))"))
    assert [v.text for v in balanced] == [
        "a b c d",
        '"a b c d"',
        '"a b" c d',
        'a b "c d"',
        '"a b" "c d"',
    ]
    assert [v.text for v in nested_versions(NestedSegmentation.from_brackets("x"))] == ["x"]
    words = [f"w{i}" for i in range(32)]
    tree = words
    while len(tree) > 1:  # a balanced tree of 32 words has 458,330 versions
        tree = [(tree[i], tree[i + 1]) for i in range(0, len(tree), 2)]
    with pytest.raises(QsegError, match="has 458330 quoted versions; at most 4096"):
        nested_versions(NestedSegmentation.from_tree(tree[0]))


def test_bqv_candidates_are_every_segmentation_fully_quoted():
    words = ("a", "b", "c", "d")
    candidates = list(bqv_candidates(words))
    assert len(candidates) == 2 ** (len(words) - 1)
    assert candidates[0][1].text == "a b c d"  # the unsegmented query first
    assert candidates[-1][1].text == '"a b c d"'
    assert len({text for _, text in ((s, v.text) for s, v in candidates)}) == 8


# -- metrics --------------------------------------------------------------------------------


def test_metric_definitions_on_a_hand_checked_ranking():
    """nDCG@5 graded, AP@5 with grade >= 1 relevant, RR@5 with grade 2 relevant."""
    measures = parse_measures(["nDCG@5", "AP(rel=1)@5", "RR(rel=2)@5"])
    qrels = {"q": {"d1": 2, "d2": 1, "d3": 0}, "empty": {"d1": 2}}
    run = {"q": {"d3": 3.0, "d1": 2.0, "d2": 1.0}, "empty": {}}
    values = score_rankings(measures, qrels, run)
    dcg = 2 / 1.584962500721156 + 1 / 2  # d1 at rank 2 (gain 2), d2 at rank 3 (gain 1)
    ideal = 2 / 1 + 1 / 1.584962500721156
    assert values["q"]["nDCG@5"] == pytest.approx(dcg / ideal)
    assert values["q"]["AP@5"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert values["q"]["RR(rel=2)@5"] == pytest.approx(1 / 2)
    assert values["empty"] == {"nDCG@5": 0.0, "AP@5": 0.0, "RR(rel=2)@5": 0.0}
    with pytest.raises(QsegError, match="unknown measure"):
        parse_measures(["nope@5"])


# -- engine, oracle and BQV_BF on a tiny collection ------------------------------------------

DOCS = {
    "target": "new york yankees tickets",
    "decoy": "tickets yankees york new tickets yankees york new",
    "other": "boston red sox tickets",
    "filler1": "the weather in york",
    "filler2": "new car prices",
    "filler3": "yankee candle shop",
}


def tiny_collection(docs=DOCS) -> ir.Collection:
    return ir.Collection(
        name="tiny",
        documents=lambda: iter(docs.items()),
        queries={"q1": "New York Yankees tickets", "q2": "boston red sox"},
        qrels={"q1": {"target": 2, "decoy": 0}, "q2": {"other": 1}},
    )


def test_tantivy_phrases_are_required_and_free_words_optional(tmp_path):
    engine = TantivyEngine(tmp_path / "index")
    engine.index(tiny_collection())
    free = QuotedQuery.of(Segmentation.from_pipe("new york yankees tickets"), frozenset())
    quoted = QuotedQuery.of(Segmentation.from_pipe("new york yankees|tickets"), frozenset({0}))
    assert {doc for doc, _ in engine.search(free, 10)} >= {"target", "decoy", "filler2"}
    assert [doc for doc, _ in engine.search(quoted, 10)] == ["target"]


def test_oracle_qvrs_and_bqv_bf(tmp_path):
    collection = tiny_collection()
    words = query_words(collection)
    systems = {
        "split": {q: Segmentation(w, (1,) * (len(w) - 1)) for q, w in words.items()},
        "joined": {
            "q1": Segmentation.from_pipe("new york yankees|tickets"),
            "q2": Segmentation.from_pipe("boston red sox"),
        },
    }
    results = evaluate_ir(
        collection,
        TantivyEngine(tmp_path / "index"),
        systems,
        measures=["nDCG@5", "RR(rel=2)@5"],
        cache=None,
    )
    ndcg = results.scores
    # the decoy repeats every query word, so the unsegmented query ranks it first
    assert ndcg[UNSEGMENTED]["nDCG@5"]["q1"] < 1.0
    assert ndcg["joined all-quoted"]["nDCG@5"]["q1"] == 1.0
    assert ndcg["joined QVRS"]["nDCG@5"]["q1"] == 1.0
    assert ndcg["split QVRS"]["nDCG@5"]["q1"] == ndcg[UNSEGMENTED]["nDCG@5"]["q1"]
    assert ndcg[BQV]["nDCG@5"]["q1"] == 1.0
    best = results.bqv_reference["nDCG@5"]["q1"]  # the first best: fewest quotes first
    assert best.to_pipe() == "new|york|yankees tickets"  # "yankees tickets" shuts the decoy out
    for column in results.columns:  # the oracle is never below the unsegmented query
        if column.endswith("QVRS") or column == BQV:
            for qid, value in ndcg[column]["nDCG@5"].items():
                assert value >= ndcg[UNSEGMENTED]["nDCG@5"][qid]
    table = {row["measure"]: row for row in results.table()}
    assert table["nDCG@5"][BQV] == pytest.approx(sum(ndcg[BQV]["nDCG@5"].values()) / 2)
    tau = results.kendall_tau(results.bqv_reference, systems)
    assert {row["measure"] for row in tau} == {"nDCG@5", "RR(rel=2)@5"}


def test_the_oracle_of_nested_segmentations(tmp_path):
    collection = tiny_collection()
    nested = {
        "q1": NestedSegmentation.from_brackets("(((new york) yankees) tickets)"),
        "q2": NestedSegmentation.from_brackets("((boston red) sox)"),
    }
    split = {q: Segmentation(w, (1,) * (len(w) - 1)) for q, w in query_words(collection).items()}
    systems = {"nested": nested, "split": split}
    results = evaluate_ir(
        collection, TantivyEngine(tmp_path / "index"), systems, measures=["nDCG@5"], cache=None
    )
    ndcg = results.scores
    assert ndcg["nested top-level quoted"]["nDCG@5"]["q1"] == 1.0  # "new york yankees" tickets
    assert ndcg["nested QVRS"]["nDCG@5"]["q1"] == 1.0
    assert ndcg[UNSEGMENTED]["nDCG@5"]["q1"] < 1.0
    assert kendall_taus(results, systems, bqv=True) == {}  # one flat system: no ranking
    # a query a system could not nest (nest_queries gives None) is left out of every column
    nested["q2"] = None
    fewer = evaluate_ir(
        collection, TantivyEngine(tmp_path / "index"), systems, measures=["nDCG@5"], cache=None
    )
    assert fewer.skipped_nested == ["q2"] and fewer.queries == 1
    assert set(fewer.scores["split QVRS"]["nDCG@5"]) == {"q1"}


def test_systems_must_segment_the_words_the_engine_sees(tmp_path):
    collection = tiny_collection()
    bad = {"q1": Segmentation.from_pipe("new york"), "q2": Segmentation.from_pipe("boston")}
    with pytest.raises(QsegError, match="system s segmented query q1 as 'new york'"):
        evaluate_ir(collection, TantivyEngine(tmp_path / "i"), {"s": bad}, cache=None)


def test_results_are_cached_and_the_cache_follows_the_index(tmp_path):
    collection = tiny_collection()
    words = query_words(collection)
    systems = {"split": {q: Segmentation(w, (1,) * (len(w) - 1)) for q, w in words.items()}}
    cache = str(tmp_path / "results.sqlite")
    first = evaluate_ir(collection, TantivyEngine(tmp_path / "i"), systems, cache=cache)
    second = evaluate_ir(collection, TantivyEngine(tmp_path / "i"), systems, cache=cache)
    assert first.searches > 0 and first.cache_hits == 0
    assert second.searches == 0 and second.cache_hits == first.searches
    assert second.scores == first.scores
    changed = tiny_collection(DOCS | {"filler3": "new york yankees tickets again"})
    third = evaluate_ir(changed, TantivyEngine(tmp_path / "i"), systems, cache=cache)
    assert third.cache_hits == 0 and third.searches == first.searches


def test_engine_stopwords_leave_position_gaps(tmp_path):
    docs = {"a": "effects of caffeine on health", "b": "effects caffeine"}
    engine = TantivyEngine(tmp_path / "i", stopwords=frozenset({"of", "on"}))
    engine.index(ir.Collection("s", lambda: iter(docs.items()), {}, {}))
    phrase = QuotedQuery((("effects", "caffeine"),), (), '"effects caffeine"')
    assert [d for d, _ in engine.search(phrase, 5)] == ["b"]


# -- readers --------------------------------------------------------------------------------


def test_trec_qrels_with_a_grade_mapping(write):
    path = write("qrels", "q1 0 d1 3\nq1 0 d2 1\n\nq2 0 d1 2\n")
    assert ir.read_qrels(path) == {"q1": {"d1": 3, "d2": 1}, "q2": {"d1": 2}}
    assert ir.read_qrels(path, {3: 2, 2: 1, 1: None}) == {"q1": {"d1": 2}, "q2": {"d1": 1}}
    with pytest.raises(InputError, match=":2: grade 1 has no mapping"):
        ir.read_qrels(path, {3: 2, 2: 1})
    with pytest.raises(InputError, match=":1: expected `qid iter docid grade`"):
        ir.read_qrels(write("bad", "q1 d1 3\n"))


def test_trec_documents_and_topics(write):
    docs = write(
        "docs.trec",
        "<DOC>\n<DOCNO> 7 </DOCNO>\nfirst line\nsecond <b>x</b> line\n</DOC>\n"
        "<DOC><DOCNO>8</DOCNO>one</DOC>\n",
    )
    assert ir.read_trec_tagged(docs, "doc", "docno", ()) == {
        "7": "first line second line",
        "8": "one",
    }
    topics = write("topics", "<top>\n<num>1</num><title>\nNEW YORK\n</title>\n</top>\n")
    assert ir.read_trec_tagged(topics, "top", "num", ("title",)) == {"1": "NEW YORK"}
    with pytest.raises(InputError, match="is not closed"):
        ir.read_trec_tagged(write("open", "<DOC><DOCNO>1</DOCNO>x\n"), "doc", "docno", ())


def test_smart_records_and_tsv(write):
    smart = write("cran", ".I 001\n.T\na title\n.A\nsomeone\n.W\nthe text\nmore\n.I 004\n.W\nq\n")
    assert ir.read_smart(smart) == [("001", "a title the text more"), ("004", "q")]
    assert ir.read_smart(smart, "W") == [("001", "the text more"), ("004", "q")]
    assert ir.read_tsv(write("t.tsv", "a\tx y\nb\tz\n")) == {"a": "x y", "b": "z"}
    with pytest.raises(InputError, match=":2: duplicate id 'a'"):
        ir.read_tsv(write("d.tsv", "a\tx\na\ty\n"))


def test_the_shared_collections_load_as_they_are():
    root = SHARED / "data" / "ir"
    if not root.exists():
        pytest.skip(f"IR collections not found at {root} (../shared is absent)")
    nf = ir.nfcorpus(root / "nfcorpus")
    assert len(list(nf.documents())) == 3162  # the last line has no newline
    assert len(nf.queries) == 144  # vid-titles repeat nontopic-titles ids and texts
    assert set(nf.qrels["PLAIN-2"].values()) <= {0, 1, 2}
    assert "the" in nf.stopwords
    cran = ir.cranfield(root / "cranfield")
    assert len(list(cran.documents())) == 1400 and len(cran.queries) == 225
    assert cran.queries["3"].startswith("what problems of heat conduction")  # .I 004, 3rd
    assert all(-1 not in grades.values() for grades in cran.qrels.values())
    vas = ir.vaswani(root / "vaswani")
    assert len(vas.queries) == 93 and vas.queries["1"].startswith("MEASUREMENT OF")


def test_ir_eval_command_on_files(tmp_path, write):
    docs = write("docs.tsv", "".join(f"{k}\t{v}\n" for k, v in DOCS.items()))
    queries = write("queries.tsv", "q1\tNew York Yankees tickets\nq2\tboston red sox\n")
    qrels = write("qrels", "q1 0 target 2\nq1 0 decoy 0\nq2 0 other 1\n")
    seg = write("seg.txt", "q1\tnew york yankees|tickets\nq2\tboston red sox\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "qseg",
            "ir-eval",
            "--docs",
            str(docs),
            "--queries",
            str(queries),
            "--qrels",
            str(qrels),
            "--gold",
            str(seg),
            "--segmentations",
            f"joined={seg}",
            "--system",
            "naive=naive",
            "--format",
            "json",
            "--quiet",
            "--cache-dir",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["columns"] == [
        UNSEGMENTED,
        "naive all-quoted",
        "naive QVRS",
        "joined all-quoted",
        "joined QVRS",
        BQV,
    ]
    assert report["queries"] == 2
    ndcg5 = next(row for row in report["table"] if row["measure"] == "nDCG@5")
    assert ndcg5[BQV] == 1.0 and ndcg5["joined QVRS"] == 1.0
    assert Path(tmp_path / "cache" / "results.sqlite").exists()
    assert set(report["kendall_tau"]) == {"BQV_BF", "the gold segmentations"}
    gold_tau = report["kendall_tau"]["the gold segmentations"]
    assert {row["measure"] for row in gold_tau} == {row["measure"] for row in report["table"]}


def lucene_engine(folder, **options):
    pytest.importorskip("jnius_config", reason="no pyjnius (pip install qseg[lucene])")
    try:
        from qseg.evaluation.ir.engines.lucene_engine import LuceneEngine

        return LuceneEngine(folder, **options)
    except QsegError as exc:
        pytest.skip(f"Lucene is not available: {exc}")


def test_lucene_ranks_like_tantivy_and_requires_phrases(tmp_path):
    lucene = lucene_engine(tmp_path / "lucene")
    tantivy = TantivyEngine(tmp_path / "tantivy")
    for engine in (lucene, tantivy):
        engine.index(tiny_collection())
    for query in (
        QuotedQuery.of(Segmentation.from_pipe("new york yankees tickets"), frozenset()),
        QuotedQuery.of(Segmentation.from_pipe("new york yankees|tickets"), frozenset({0})),
        QuotedQuery.of(Segmentation.from_pipe("red sox|boston"), frozenset({0})),
    ):
        assert [d for d, _ in lucene.search(query, 3)] == [d for d, _ in tantivy.search(query, 3)]
    stop = lucene_engine(tmp_path / "stop", stopwords=frozenset({"of", "on"}))
    docs = {"a": "effects of caffeine on health", "b": "effects caffeine"}
    stop.index(ir.Collection("s", lambda: iter(docs.items()), {}, {}))
    phrase = QuotedQuery((("effects", "caffeine"),), (), '"effects caffeine"')
    assert [d for d, _ in stop.search(phrase, 5)] == ["b"]


def test_lucene_takes_bm25_parameters_and_the_proximity_rewrite(tmp_path):
    from qseg.integrations.syntax import Syntax, render

    engine = lucene_engine(tmp_path / "lucene")
    docs = {"a": "new x york x new x york", "b": "new york", "c": "york new city"}
    engine.index(ir.Collection("p", lambda: iter(docs.items()), {}, {}))
    base = engine.search_text("new york", 3)
    engine.bm25(0.0, 0.0)  # term frequency and length ignored: every match scores alike
    flat = engine.search_text("new york", 3)
    assert len({round(score, 4) for _, score in flat}) == 1 and len({s for _, s in base}) > 1
    engine.bm25(1.2, 0.75)
    assert engine.search_text("new york", 3) == base
    # Lucene parses the segment proximity rewrite; the doc holding the pair in order ranks first
    text = str(render(Segmentation.from_pipe("york new"), Syntax(proximity=True)))
    assert engine.search_text(text, 3)[0][0] == "c"


def test_the_oracle_on_lucene(tmp_path):
    collection = tiny_collection()
    words = query_words(collection)
    systems = {
        "joined": {
            "q1": Segmentation.from_pipe("new york yankees|tickets"),
            "q2": Segmentation.from_pipe("boston red sox"),
        }
    }
    results = evaluate_ir(
        collection, lucene_engine(tmp_path / "l"), systems, measures=["nDCG@5"], cache=None
    )
    assert results.scores["joined QVRS"]["nDCG@5"]["q1"] == 1.0
    assert results.scores[BQV]["nDCG@5"] == {"q1": 1.0, "q2": 1.0}
    assert set(words) == {"q1", "q2"}


def test_ir_eval_on_document_counts_compares_the_rule_based_methods(tmp_path, write):
    """The shipped model runs only on its own counts: on a collection's counts the defaults
    are naive and the rule-based default, never a refusal."""
    docs = write("docs.tsv", "".join(f"{k}\t{v}\n" for k, v in DOCS.items()))
    queries = write("queries.tsv", "q1\tNew York Yankees tickets\n")
    qrels = write("qrels", "q1 0 target 2\nq1 0 decoy 0\n")
    args = ["--docs", str(docs), "--queries", str(queries), "--qrels", str(qrels)]
    cache = ["--cache-dir", str(tmp_path / "cache"), "--format", "json", "--quiet"]
    result = subprocess.run(
        [sys.executable, "-m", "qseg", "ir-eval", *args, "--counts-from-documents", *cache],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    rule_based = default_spec(Resources())  # wiki(unseen_titles=true) where titles are installed
    systems = {c.rsplit(" ", 1)[0] for c in json.loads(result.stdout)["columns"][1:-1]}
    assert systems == {"naive", rule_based}


def test_ir_eval_command_with_nested_systems(tmp_path, write):
    docs = write("docs.tsv", "".join(f"{k}\t{v}\n" for k, v in DOCS.items()))
    queries = write("queries.tsv", "q1\tNew York Yankees tickets\nq2\tboston red sox\n")
    qrels = write("qrels", "q1 0 target 2\nq1 0 decoy 0\nq2 0 other 1\n")
    args = ["--docs", docs, "--queries", queries, "--qrels", qrels, "--format", "json", "--quiet"]
    command = [sys.executable, "-m", "qseg", "ir-eval", *map(str, args), "--no-cache"]
    flat, nested = (
        subprocess.run(
            [*command, "--system", "wiki=wiki", *extra, "--cache-dir", str(tmp_path / "c")],
            capture_output=True,
            text=True,
            check=False,
        )
        for extra in ([], ["--nested"])
    )
    assert flat.returncode == 0 and nested.returncode == 0, flat.stderr + nested.stderr
    flat_rows, nested_rows = (json.loads(r.stdout)["table"] for r in (flat, nested))
    for a, b in zip(flat_rows, nested_rows, strict=True):
        # the tree holds the flat segments as constituents: its versions include the flat ones
        assert b["wiki QVRS"] >= a["wiki QVRS"]
        assert a[UNSEGMENTED] == b[UNSEGMENTED]


def test_a_query_too_long_to_nest_gets_no_tree():
    from qseg.evaluation.ir.framework import nest_queries
    from qseg.segmenters.registry import create

    trees = nest_queries(create("always-split"), {"short": ("a", "b", "c"), "long": ("w",) * 45})
    assert trees["long"] is None
    assert trees["short"] == NestedSegmentation.from_brackets("(a (b c))")


KILLED = """
import os, sys
sys.path.insert(0, sys.argv[1])
from test_ir import tiny_collection
from qseg.evaluation.ir.cache import CachedSearch
from qseg.evaluation.ir.engines.tantivy_engine import TantivyEngine
from qseg.evaluation.ir.versions import QuotedQuery
from qseg.segmentation import Segmentation
engine = TantivyEngine(sys.argv[2])
search = CachedSearch(engine, engine.index(tiny_collection()), sys.argv[3])
for text in ("new york", "red sox", "boston"):
    search.search(QuotedQuery.of(Segmentation.from_pipe(text), frozenset()), 10)
os._exit(9)  # killed: no close
"""


def test_the_result_cache_is_shared_and_survives_a_killed_run(tmp_path):
    from qseg.evaluation.ir.cache import CachedSearch

    cache = tmp_path / "results.sqlite"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(Path(__file__).parent), tmp_path / "i", cache],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 9, done.stderr
    engine = TantivyEngine(tmp_path / "i")
    fingerprint = engine.index(tiny_collection())
    first, second = (CachedSearch(engine, fingerprint, cache) for _ in range(2))  # two at once
    queries = [QuotedQuery.of(Segmentation.from_pipe(t), frozenset()) for t in
               ("new york", "red sox", "boston", "tickets")]  # fmt: skip
    for query in queries:
        first.search(query, 10)
        second.search(query, 10)
    assert (first.hits, first.misses) == (3, 1)  # the killed run's three searches were kept
    assert (second.hits, second.misses) == (4, 0)  # and the first one's fourth, at once
    first.close()
    second.close()


def test_kendall_tau_marks_ties_and_says_in_what_steps_it_moves(tmp_path):
    from qseg.evaluation.ir.framework import MATCHING
    from qseg.evaluation.ir.report import tau_note, tau_rows

    words = query_words(tiny_collection())
    split = {q: Segmentation(w, (1,) * (len(w) - 1)) for q, w in words.items()}
    joined = {
        "q1": Segmentation.from_pipe("new york yankees|tickets"),
        "q2": Segmentation.from_pipe("boston red sox"),
    }
    systems = {"split": split, "joined": joined, "twin": dict(joined)}
    engine = TantivyEngine(tmp_path / "index")
    results = evaluate_ir(tiny_collection(), engine, systems, measures=["nDCG@5"], cache=None)
    (row,) = kendall_taus(results, systems, bqv=True)["BQV_BF"]
    # joined and its twin tie everywhere; scipy's tau-b of (a < b = b) against (c < d = d)
    # is 2 / sqrt(2 * 2) = 1, of three untied values it would move in steps of 2/3
    assert row["systems"] == 3 and row["tied"] == list(MATCHING)
    _, cells = tau_rows([row])
    assert all(cell.endswith("~") for cell in cells[0][1:])
    assert tau_note([row]).startswith(
        "3 systems (3 pairs): where neither ranking ties, tau moves in steps of 2/3; ~: systems "
        "tie in QVRS or in the matching metric, and tau-b leaves the tied pairs out"
    )
    two = {"split": split, "joined": joined}
    results = evaluate_ir(tiny_collection(), engine, two, measures=["nDCG@5"], cache=None)
    (row,) = kendall_taus(results, two, bqv=True)["BQV_BF"]
    # joined has the higher QVRS; split is BQV_BF's first best of q2 (every version finds
    # its one relevant document first, and the fewest quotes come first), joined of neither
    assert row["tied"] == [] and row["query_accuracy"] == -1.0
    assert tau_note([row]) == (
        "2 systems (1 pair): where neither ranking ties, tau moves in steps of 2"
    )


BINARY_DOCS = {**DOCS, "stop": "of the and"}


def test_binary_judgments_leave_rr_rel_2_out_and_the_dropped_queries_are_named(tmp_path, write):
    """On 0/1 judgments no document has grade 2: RR(rel=2) would be 0 for every query."""
    docs = write("docs.tsv", "".join(f"{k}\t{v}\n" for k, v in BINARY_DOCS.items()))
    queries = write(
        "queries.tsv",
        "q1\tNew York Yankees tickets\nq2\tboston red sox\nq3\tnew car prices\nq4\tof the\n",
    )  # q3 has no relevant document, q4 no word but stopwords
    qrels = write("qrels", "q1 0 target 1\nq1 0 decoy 0\nq2 0 other 1\nq3 0 filler2 0\n"
                  "q4 0 stop 1\n")  # fmt: skip
    stop = write("stop.txt", "of\nthe\n")
    seg = write("seg.txt", "q1\tnew york yankees|tickets\nq2\tboston red sox\n")
    split = write("split.txt", "q1\tnew|york|yankees|tickets\nq2\tboston|red|sox\n")
    command = [sys.executable, "-m", "qseg", "ir-eval", "--docs", str(docs), "--queries",
               str(queries), "--qrels", str(qrels), "--stopwords", str(stop), "--segmentations",
               f"joined={seg}", "--segmentations", f"split={split}", "--quiet", "--cache-dir",
               str(tmp_path / "cache")]  # fmt: skip
    run = subprocess.run([*command, "--format", "json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert [row["measure"] for row in report["table"]] == ["nDCG@5", "nDCG@10", "AP@5", "AP@10"]
    assert report["left_out_measures"] == {"RR(rel=2)@5": 1, "RR(rel=2)@10": 1}
    assert report["queries"] == 2
    assert report["left_out_queries"] == {
        "no judgment of grade >= 1": ["q3"],
        "no words left for the engine (stopwords and punctuation removed)": ["q4"],
    }
    assert run.stderr.splitlines() == [
        "qseg: note: RR(rel=2)@5, RR(rel=2)@10 left out: they count only documents of a grade "
        "above the highest judged (1; binary judgments?), so they are 0 for every query and "
        "system; --grades maps grades, e.g. 1:2",
        "qseg: note: 2 queries left out (no judgment of grade >= 1: q3; no words left for "
        "the engine (stopwords and punctuation removed): q4)",
    ]
    table = subprocess.run(command, capture_output=True, text=True)
    assert "RR(rel=2)" not in table.stdout and "\n2 queries left out (" in table.stdout
    mapped = subprocess.run([*command, "--grades", "1:2,0:0", "--format", "json"],
                            capture_output=True, text=True)  # fmt: skip
    assert "RR(rel=2)@5" in {row["measure"] for row in json.loads(mapped.stdout)["table"]}
    only = subprocess.run([*command, "--measures", "RR(rel=2)@5"], capture_output=True)
    assert_one_line_error(only, "no measure left: RR(rel=2)@5 count only grades above")


def test_left_out_queries_are_those_query_words_leaves_out():
    from qseg.evaluation.ir.framework import left_out_queries

    collection = ir.Collection(
        "c",
        lambda: iter(()),
        {"a": "new york", "b": "the", "c": "boston", "d": "red sox"},
        {"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 0}},
        stopwords=frozenset({"the"}),
    )
    assert set(query_words(collection)) == {"a"}
    assert left_out_queries(collection) == {
        "no judgment of grade >= 1": ["c", "d"],
        "no words left for the engine (stopwords and punctuation removed)": ["b"],
    }


def test_a_long_list_of_left_out_queries_is_cut_after_ten():
    from qseg.evaluation.ir.framework import UNJUDGED, IrResults
    from qseg.evaluation.ir.report import left_out_note

    results = IrResults([], [], [], {}, left_out={UNJUDGED: [f"t{i}" for i in range(1, 13)]})
    assert left_out_note(results) == (
        "12 queries left out (no judgment of grade >= 1: t1, t2, t3, t4, t5, t6, t7, t8, t9, "
        "t10 and 2 more)"
    )
    assert left_out_note(IrResults([], [], [], {})) is None


# -- tuned BM25 -----------------------------------------------------------------------------


def test_tuned_bm25_scores_no_query_with_parameters_chosen_on_itself():
    from qseg.evaluation.ir import bm25

    ids = [f"q{i}" for i in range(10)]
    lucky = "q3"
    steady, spiky = (1.2, 0.75), (0.6, 0.3)
    # spiky is best over all queries only thanks to one query; the fold holding it must not
    # see that query when it chooses
    grid = {
        steady: {"nDCG@10": dict.fromkeys(ids, 0.5)},
        spiky: {"nDCG@10": {q: 1.0 if q == lucky else 0.45 for q in ids}},
    }
    scores, chosen = bm25.tuned(grid, ids)
    split = bm25.folds(ids)
    assert sorted(q for fold in split for q in fold) == sorted(ids) and len(split) == 5
    assert bm25.folds(reversed(ids)) == split  # the split does not depend on input order
    with_lucky = next(i for i, fold in enumerate(split) if lucky in fold)
    assert chosen["nDCG@10"] == [steady if i == with_lucky else spiky for i in range(5)]
    assert scores["nDCG@10"][lucky] == 0.5
    assert all(scores["nDCG@10"][q] == 0.45 for q in ids if q not in split[with_lucky])
    # one query: nothing to choose on, BM25's usual parameters
    assert bm25.tuned(grid, ["q1"])[1] == {"nDCG@10": [bm25.DEFAULT]}


def test_tuned_bm25_column_on_lucene_is_each_fold_run_with_its_chosen_parameters(tmp_path):
    from qseg.evaluation.ir.framework import TUNED
    from qseg.evaluation.ir.report import AGAINST_TUNED, bm25_note, table_rows

    collection = tiny_collection()
    engine = lucene_engine(tmp_path / "l")
    systems = {
        "joined": {
            "q1": Segmentation.from_pipe("new york yankees|tickets"),
            "q2": Segmentation.from_pipe("boston red sox"),
        }
    }
    cache = str(tmp_path / "results.sqlite")
    results = evaluate_ir(
        collection, engine, systems, measures=["nDCG@5"], cache=cache, tuned_bm25=True
    )
    assert results.columns[:2] == [UNSEGMENTED, TUNED]
    plain = evaluate_ir(collection, engine, systems, measures=["nDCG@5"], cache=None)
    # every other pair of the grid ran both queries; BM25's usual pair is the unsegmented run
    assert results.searches == plain.searches + 24 * 2
    assert results.scores[UNSEGMENTED] == plain.scores[UNSEGMENTED]
    chosen = results.bm25_parameters["nDCG@5"]
    assert len(chosen) == 2  # two queries: two folds of one
    words = query_words(collection)
    for fold, params in zip(folds_of(results), chosen, strict=True):
        engine.bm25(*params)
        for qid in fold:
            plain = QuotedQuery.of(Segmentation(words[qid], (1,) * (len(words[qid]) - 1)), set())
            run = {qid: dict(engine.search(plain, 1000))}
            qrels = {qid: collection.qrels[qid]}
            expected = score_rankings(parse_measures(["nDCG@5"]), qrels, run)[qid]["nDCG@5"]
            assert results.scores[TUNED]["nDCG@5"][qid] == expected
    engine.bm25(1.2, 0.75)
    row = results.table()[0]
    assert "joined QVRS p tuned" in row and "unsegmented p tuned" not in row
    assert len(table_rows(results)[1][0]) == len(results.columns) + 1
    assert "k1/b chosen per fold" in bm25_note(results)
    assert AGAINST_TUNED == "\u2020"
    # a second run reads the grid's results from the cache, keyed by the parameters
    again = evaluate_ir(
        collection, engine, systems, measures=["nDCG@5"], cache=cache, tuned_bm25=True
    )
    assert again.searches == 0 and again.scores == results.scores


def folds_of(results):
    from qseg.evaluation.ir import bm25

    return bm25.folds(results.scores[UNSEGMENTED]["nDCG@5"])


def test_tuned_bm25_needs_an_engine_whose_parameters_can_be_set(tmp_path):
    engine = TantivyEngine(tmp_path / "index")
    with pytest.raises(QsegError, match=r"k1 and b can be set.*tantivy's are fixed"):
        evaluate_ir(tiny_collection(), engine, {}, measures=["nDCG@5"], tuned_bm25=True)
