"""Nested segmentations from flat segmenters: Huang et al.'s splitting, bottom-up merging."""

from __future__ import annotations

import toy
from helpers import assert_one_line_error, out, qseg

from qseg.resources.counts import NgramCounts
from qseg.segmentation import NestedSegmentation
from qseg.segmenters.naive import NaiveSegmenter
from qseg.segmenters.nesting import merge_tree, nest, split_tree


def test_merging_joins_the_weakest_breaks_first():
    words = ("a", "b", "c", "d")
    assert merge_tree(words, [0.1, 0.9, 0.2]).to_brackets() == "((a b) (c d))"
    assert merge_tree(words, [0.1, 0.2, 0.3]).to_brackets() == "(((a b) c) d)"
    assert merge_tree(words, [0.3, 0.2, 0.1]).to_brackets() == "(a (b (c d)))"
    assert merge_tree(words, [0.5, 0.5, 0.5]).to_brackets() == "(((a b) c) d)"  # leftmost first
    assert merge_tree(("a",), []).to_brackets() == "a"


def test_splitting_at_the_weakest_boundary_by_hand():
    """naive: |s|^|s| freq(s). For the whole query the best segmentation breaking after
    "yankees" scores 27 * 500 (new york yankees), after "york" 4 * 1000 + 4 * 50, after "new"
    4 * 50: the first split is before "tickets"; then "new york|yankees" (4,000) beats
    "new|york yankees" (40)."""
    counts = NgramCounts(
        {"new york": 1000, "york yankees": 10, "yankees tickets": 50, "new york yankees": 500}
    )
    tree = split_tree(NaiveSegmenter(counts), "new york yankees tickets")
    assert tree == NestedSegmentation.from_brackets("(((new york) yankees) tickets)")
    assert tree.is_binary and tree.heights == (0, 1, 2)


def test_a_trained_model_nests_by_its_break_probabilities():
    model = toy.train(toy.TRAINED_SPECS["joint"])
    query = "cheap new york yankees tickets"
    words = tuple(query.split())
    expected = merge_tree(words, model.break_probabilities([words])[0])
    assert nest(model, query) == expected and expected.is_binary


def test_every_tree_is_binary_over_the_query_words():
    segmenter = NaiveSegmenter(toy.resources().require_ngrams())
    for query in ("a", "new york", "cheap new york yankees tickets sale online now"):
        tree = nest(segmenter, query)
        assert tree.words == tuple(query.split()) and (len(tree.words) < 3 or tree.is_binary)


def test_qseg_segment_nested(write):
    counts = write(
        "counts.txt",
        "new york\t1000\nyork yankees\t10\nyankees tickets\t50\nnew york yankees\t500\n",
    )
    text = out(
        qseg(
            "segment",
            "--nested",
            "--method",
            "naive",
            "--ngrams",
            counts,
            "new york yankees tickets",
        )
    )
    assert text == "(((new york) yankees) tickets)\n"
    assert_one_line_error(
        qseg("segment", "--nested", "--k", "2", "a b"), "--nested prints one tree"
    )
