"""Reproduction of the original authors' outputs and statistics on Webis-QSeC-10 (training).

Skips when ../shared is absent.
"""

from __future__ import annotations

import ast

import pytest
from conftest import webis_file

from qseg.corpora import read_queries, read_segmentations, read_votes
from qseg.evaluation import evaluate
from qseg.resources import LogProbabilities, NgramCounts, TitleSet
from qseg.segmenters import NaiveSegmenter, PmiSegmenter, WikiSegmenter

DATA = "data/webis-qsec-10-training-set-"
ALGORITHMS = "segmentations-of-algorithms/webis-qsec-10-training-set-segmentations-"


@pytest.fixture(scope="module")
def queries():
    return read_queries(webis_file("webis-qsec-10-training-set-queries.txt"))


@pytest.fixture(scope="module")
def counts():
    return NgramCounts.from_file(webis_file(DATA + "n-gram-web-frequencies-google.txt"))


@pytest.fixture(scope="module")
def titles():
    return TitleSet.from_file(webis_file(DATA + "n-gram-wikipedia-titles.txt"))


@pytest.fixture(scope="module")
def probabilities():
    return LogProbabilities.from_files(
        webis_file(DATA + "1-gram-web-frequencies-msn.txt"),
        webis_file(DATA + "2-gram-web-frequencies-msn.txt"),
    )


def compare(segmenter, queries, algorithm):
    """How many queries were compared with the original output, and those that differ."""
    original = read_segmentations(webis_file(ALGORITHMS + algorithm + ".txt"))
    assert original.keys() == queries.keys()
    outputs = segmenter.segment_many(" ".join(words) for words in queries.values())
    differ = [qid for qid, seg in zip(queries, outputs, strict=True) if seg != original[qid]]
    return len(original), differ


def test_all_files_load_as_they_are(queries, counts, titles, probabilities):
    assert len(queries) == 3848
    assert len(counts) == 20319 and counts.max_order == 5
    assert len(titles) == 4130
    assert len(probabilities.unigrams) == 7405 and len(probabilities.bigrams) == 13199
    votes = read_votes(webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt"))
    assert votes.keys() == queries.keys()
    assert all(refs[0].segmentation.words == queries[q] for q, refs in votes.items())


def test_naive_reproduces_stein2010j(queries, counts):
    compared, differ = compare(NaiveSegmenter(counts), queries, "stein2010j")
    assert compared == 3848  # every query of the corpus ...
    assert differ == []  # ... segmented as the original authors' code did


def test_wiki_reproduces_stein2011e(queries, counts, titles):
    compared, differ = compare(WikiSegmenter(counts, titles), queries, "stein2011e")
    assert compared == 3848  # every query of the corpus ...
    assert differ == []  # ... segmented as the original authors' code did


def test_the_paper_reading_of_unseen_titles_explains_the_only_alternative(queries, counts, titles):
    """With unseen titles weighted too, exactly the queries that hold such a title differ."""
    unseen = WikiSegmenter(counts, titles, unseen_titles=True)
    _, differ = compare(unseen, queries, "stein2011e")
    assert differ
    for qid in differ:
        chosen = unseen.segment(" ".join(queries[qid]))
        assert any(s in titles and counts.count(s) == 0 for s in chosen.segment_texts)


def test_wiki_weights_times_length_equal_the_normalized_file(counts, titles):
    wiki = WikiSegmenter(counts, titles)
    lines = 0
    for line in webis_file(DATA + "n-gram-web-frequencies-normalized.txt").read_text().splitlines():
        ngram, value = line.split("\t")
        words = tuple(ngram.split(" "))
        row = wiki.span_weights(words)[0]
        assert dict(row).get(len(words), 0) == int(value), ngram
        lines += 1
    assert lines == 20319


def test_pmi_from_msn_probabilities_equals_the_pmi_values_file(probabilities):
    values = webis_file(DATA + "n-gram-pmi-values.txt").read_text().splitlines()
    assert len(values) == 13199
    for line in values:
        bigram, value = line.split("\t")
        first, second = bigram.split(" ")
        assert probabilities.pmi(first, second) == pytest.approx(float(value), abs=1e-9)


def test_pmi_with_the_paper_tau_reproduces_pmi_baseline(queries, probabilities):
    compared, differ = compare(PmiSegmenter(probabilities), queries, "pmi-baseline")
    assert compared == 3848 and differ == []


def test_protocols_on_the_crowd_votes():
    path = webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt")
    gold = read_votes(path)
    unanimous = sum(
        len(ast.literal_eval(line.split("\t")[1])) == 1 for line in path.read_text().splitlines()
    )
    systems = {
        name: read_segmentations(webis_file(ALGORITHMS + name + ".txt"))
        for name in ("stein2010j", "stein2011e", "pmi-baseline")
    }
    majority = evaluate(systems, gold, "majority")
    best = evaluate(systems, gold, "best-of")
    agree = evaluate(systems, gold, "all-agree")
    for m, b, a in zip(majority, best, agree, strict=True):
        assert m.queries == b.queries == 3848
        assert a.queries == unanimous == 133
        assert b.query_accuracy >= m.query_accuracy
        assert b.break_accuracy >= m.break_accuracy
