"""gensim's Phrases as a baseline segmenter on qseg's counts."""

from __future__ import annotations

import itertools
from collections import Counter

import helpers
import pytest
from gensim.models.phrases import ENGLISH_CONNECTOR_WORDS, Phrases

import qseg
from qseg.errors import QsegError
from qseg.evaluation.tuning import threshold_accuracies, tune_phrases
from qseg.resources.counts import NgramCounts
from qseg.segmentation import Reference
from qseg.segmenters.rules.phrases import PhrasesSegmenter

SENTENCES = [
    "new york yankees tickets",
    "new york times",
    "cheap new york hotels",
    "bank of america login",
    "bank of america careers",
    "yankees tickets cheap",
    "chest freezer reviews",
    "chest freezer sale",
    "new car prices",
] * 3


def _trained(**options):
    """gensim trained on the sentences in the usual way, and its vocabulary as qseg counts."""
    model = Phrases([s.split() for s in SENTENCES], delimiter=" ", **options)
    return model, NgramCounts(dict(model.vocab))


@pytest.mark.parametrize(
    "options",
    [
        {"min_count": 1, "threshold": 1.0},
        {"min_count": 2, "threshold": 0.2, "scoring": "npmi"},
        {"min_count": 1, "threshold": 1.0, "connector_words": ENGLISH_CONNECTOR_WORDS},
    ],
)
def test_the_same_phrases_as_gensim_trained_on_the_sentences(options):
    model, counts = _trained(**options)
    segmenter = PhrasesSegmenter(
        counts,
        scoring=options.get("scoring", "default"),
        threshold=options["threshold"],
        min_count=options["min_count"],
        connectors="connector_words" in options,
    )
    for sentence in [*set(SENTENCES), "yankees new york", "bank of america new york"]:
        expected = [len(token.split(" ")) for token in model[sentence.split()]]
        got = [len(segment) for segment in segmenter.segment(sentence).segments]
        assert got == expected, sentence
    assert segmenter.segment("new york yankees tickets").to_pipe() != "new|york|yankees|tickets"


def test_connectors_join_across_of_and_two_layers_join_phrases():
    _, with_of = _trained(min_count=1, threshold=1.0, connector_words=ENGLISH_CONNECTOR_WORDS)
    connected = PhrasesSegmenter(with_of, "default", 1.0, min_count=1, connectors=True)
    assert connected.segment("bank of america login").to_pipe() == "bank of america|login"
    # breaking inside the phrase costs the phrase's own score at either of its gaps, not -inf
    ranked = connected.rank("bank of america login", 4)
    inside = {seg.to_pipe(): score for seg, score in ranked[1:]}
    assert inside["bank|of america|login"] == inside["bank of|america|login"] > float("-inf")
    ngrams = Counter(
        " ".join(words[i : i + n])
        for words in (s.split() for s in SENTENCES)
        for n in range(1, 5)
        for i in range(len(words) - n + 1)
    )
    counts = NgramCounts(ngrams)  # every n-gram of the sentences, up to 4 words
    one = PhrasesSegmenter(counts, "default", 1.0, min_count=1, connectors=False)
    two = PhrasesSegmenter(counts, "default", 1.0, min_count=1, connectors=False, layers=2)
    assert one.segment("new york yankees tickets").to_pipe() == "new york|yankees tickets"
    # the second pass sees the tokens "new york" and "yankees tickets" and the 4-gram's count
    assert two.segment("new york yankees tickets").to_pipe() == "new york yankees tickets"


def test_ranking_flips_the_gaps_nearest_the_threshold():
    _, counts = _trained(min_count=1, threshold=1.0)
    segmenter = PhrasesSegmenter(counts, "default", threshold=1.0, min_count=1)
    ranked = segmenter.rank("new york yankees tickets", 8)
    assert ranked[0] == (segmenter.segment("new york yankees tickets"), 0.0)
    assert all(score < 0 for _, score in ranked[1:])
    never_together = segmenter.rank("tickets reviews", 2)  # no count of the pair
    assert [s.to_pipe() for s, _ in never_together] == ["tickets|reviews", "tickets reviews"]
    assert never_together[1][1] == float("-inf")


def test_the_defaults_join_pairs_of_the_built_in_counts():
    """gensim's default scorer is not scale-free: on Web1T-sized counts nothing reaches its
    threshold 10, which made the method's defaults exactly always-split; npmi's independence
    (threshold 0) is."""
    default = qseg.segmenter("phrases")
    assert (default.scoring, default.threshold, default.connectors) == ("npmi", 0.0, True)
    assert default.segment("new york yankees tickets").to_pipe() == "new york|yankees|tickets"
    assert 0 < default.pair_score("new", "york") < 1
    gensims = qseg.segmenter("phrases(scoring=default)")
    assert gensims.threshold == 10.0 and gensims.pair_score("new", "york") < 1e-4
    assert gensims.segment("new york yankees tickets").to_pipe() == "new|york|yankees|tickets"


def test_specs_and_errors():
    segmenter = qseg.segmenter("phrases(scoring=npmi, threshold=0.5)")
    assert segmenter.spec == "phrases(threshold=0.5)"
    assert qseg.segmenter("phrases").spec == "phrases"
    assert qseg.segmenter("phrases(scoring=npmi, threshold=0)").spec == "phrases"
    assert qseg.segmenter("phrases(scoring=default, threshold=10)").spec == (
        "phrases(scoring=default)"
    )
    with pytest.raises(QsegError, match=r"npmi scorer scores in \[-1, 1\]"):
        qseg.segmenter("phrases(threshold=10)")
    with pytest.raises(QsegError, match="layers must be 1 or 2"):
        qseg.segmenter("phrases(layers=3)")


def test_tuning_recovers_a_threshold_that_made_the_references(tmp_path):
    _, counts = _trained(min_count=1, threshold=1.0)
    truth = PhrasesSegmenter(counts, "default", threshold=2.0, min_count=1)
    gold = {str(i): [Reference(truth.segment(s), 1)] for i, s in enumerate(set(SENTENCES))}
    assert any(
        PhrasesSegmenter(counts, "default", 0.5, min_count=1).segment(refs[0].segmentation.query)
        != refs[0].segmentation
        for refs in gold.values()
    )  # another threshold segments differently
    choice = tune_phrases(gold, counts, scoring="default", min_count=1)
    assert (choice.break_accuracy, choice.query_accuracy, choice.queries) == (1.0, 1.0, len(gold))
    tuned = PhrasesSegmenter(counts, "default", threshold=choice.threshold, min_count=1)
    assert all(tuned.segment(r[0].segmentation.query) == r[0].segmentation for r in gold.values())


@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("scoring", ["default", "npmi"])
def test_each_thresholds_accuracies_are_those_of_segmenting_at_it(scoring, layers):
    """Tuning segments a query once for each run of thresholds that give it the same breaks:
    its figures at every threshold (between and on the scores gensim compares, with connector
    words and two passes) are those of segmenting every query at that threshold."""
    _, counts = _trained(min_count=1, threshold=1.0)
    truth = PhrasesSegmenter(counts, "default", threshold=2.0, min_count=1)
    queries = [*set(SENTENCES), "bank of america new york times", "the new york of america"]
    references = [truth.segment(q) for q in queries]
    options = {"scoring": scoring, "min_count": 1, "layers": layers}

    def probe(threshold, ref):
        return PhrasesSegmenter(counts, threshold=threshold, **options).breaks_and_scores(
            ref.words
        )[1]

    low = -1.0 if scoring == "npmi" else 1e-9
    scores = sorted(  # the scores gensim compares at the lowest threshold, and then at each
        {
            s
            for t in (low, *sorted({s for ref in references for s in probe(low, ref)}))
            for ref in references
            for s in probe(t, ref)
        }
    )
    thresholds = sorted({low, *scores[:-1], *((a + b) / 2 for a, b in itertools.pairwise(scores))})
    expected = []
    for threshold in thresholds:
        segmenter = PhrasesSegmenter(counts, threshold=threshold, **options)
        right_gaps = right_queries = 0
        for ref in references:
            breaks = segmenter.breaks_of(ref.words)
            right_gaps += sum(b == r for b, r in zip(breaks, ref.breaks, strict=True))
            right_queries += breaks == ref.breaks
        expected.append((right_gaps, right_queries))
    assert len(set(expected)) > 3  # the thresholds segment differently
    assert threshold_accuracies(references, counts, thresholds, **options) == expected


def test_qseg_tune_phrases(write):
    counts = write("counts.txt", "new\t100\nyork\t80\nnew york\t60\ntickets\t90\nyork tickets\t1\n")
    gold = write("gold.txt", "q1\tnew york|tickets\n")
    tune = ["tune", "phrases", "--gold", gold, "--ngrams", counts, "--min-count", "1"]
    spec, accuracy, *_ = helpers.out(helpers.qseg(*tune)).split("\t")
    # the method's own defaults: npmi with gensim's connector words, as --method phrases
    assert spec.startswith("phrases(threshold=") and spec.endswith(", min_count=1)"), spec
    assert accuracy == "break_accuracy=1.0000"
    text = helpers.out(helpers.qseg(*tune, "--scoring", "default", "--no-connectors"))
    spec = text.split("\t")[0]
    assert spec.startswith("phrases(scoring=default, threshold=") and spec.endswith(
        ", connectors=false)"
    ), spec


def test_qseg_tune_reads_queryner_gold(write):
    counts = write("counts.txt", "new\t100\nyork\t80\nnew york\t60\ntickets\t90\n")
    line = (
        '{"example_id": 1, "tokens": ["new", "york", "tickets"], "labels": ["B-a", "I-a", "B-b"]}'
    )
    gold = write("dev.jsonl", line + "\n")
    text = helpers.out(helpers.qseg("tune", "pmi", "--gold", gold, "--ngrams", counts))
    assert text.startswith("tau=") and "queries=1" in text
