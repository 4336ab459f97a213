"""Nested segmentations from flat segmenters: Huang et al.'s splitting, bottom-up merging."""

from __future__ import annotations

import pytest
import toy
from conftest import webis_file
from helpers import assert_one_line_error, out, qseg

from qseg.models import open_segmenter
from qseg.resources.counts import NgramCounts
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.nesting import merge_tree, nest, split_tree
from qseg.segmenters.rules.naive import NaiveSegmenter


def test_merging_joins_the_weakest_breaks_first():
    words = ("a", "b", "c", "d")
    assert merge_tree(words, [0.1, 0.9, 0.2]).to_brackets() == "((a b) (c d))"
    assert merge_tree(words, [0.1, 0.2, 0.3]).to_brackets() == "(((a b) c) d)"
    assert merge_tree(words, [0.3, 0.2, 0.1]).to_brackets() == "(a (b (c d)))"
    assert merge_tree(words, [0.5, 0.5, 0.5]).to_brackets() == "(((a b) c) d)"  # leftmost first
    assert merge_tree(("a",), []).to_brackets() == "a"


def test_merging_held_to_a_flat_segmentation_keeps_its_segments_as_nodes():
    words = ("a", "b", "c", "d")
    # the weakest gap (b|c, 0.1) is a break of the flat segmentation a b|c d: joined last
    tree = merge_tree(words, [0.6, 0.1, 0.7], breaks=(0, 1, 0))
    assert tree.to_brackets() == "((a b) (c d))"
    assert {(0, 2), (2, 4)} <= set(tree.spans)
    assert merge_tree(words, [0.6, 0.1, 0.7]).to_brackets() == "((a (b c)) d)"


def test_the_spans_of_a_tree_are_its_nodes():
    tree = NestedSegmentation.from_brackets("(((new york) yankees) (cheap tickets))")
    assert tree.spans == ((0, 1), (0, 2), (0, 3), (0, 5), (1, 2), (2, 3), (3, 4), (3, 5), (4, 5))
    assert NestedSegmentation.from_brackets("a").spans == ((0, 1),)


def test_splitting_held_to_a_flat_segmentation_cuts_at_its_breaks():
    """Without the flat segmentation naive splits new york yankees|tickets first; held to
    new york|yankees tickets, it cuts there first and keeps both segments as nodes."""
    counts = NgramCounts(
        {"new york": 1000, "york yankees": 10, "yankees tickets": 50, "new york yankees": 500}
    )
    segmenter = NaiveSegmenter(counts)
    query = "new york yankees tickets"
    held = split_tree(segmenter, query, Segmentation.from_pipe("new york|yankees tickets").breaks)
    assert held.to_brackets() == "((new york) (yankees tickets))"


@pytest.mark.parametrize(
    "spec", ["default", "wiki(unseen_titles=true)", "naive", "pmi", "always-split", "never-split"]
)
def test_every_flat_segment_is_a_node_of_the_tree_over_the_corpus(spec):
    """On the first 1,500 Webis queries, each method's tree holds every segment of its flat
    answer (the default model's did not on 12 of them: its tree came from gap probabilities,
    its flat answer from joint decoding)."""
    path = webis_file("webis-qsec-10-training-set-queries.txt")
    queries = [line.split("\t", 1)[1] for line in path.read_text().splitlines()[:1500]]
    segmenter = open_segmenter(spec)
    for query in queries:
        flat = segmenter.segment(query)
        tree = nest(segmenter, query)
        assert set(flat.spans) <= set(tree.spans), (query, flat, tree)


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
    flat = model.segment(query).breaks
    expected = merge_tree(words, model.break_probabilities([words])[0], flat)
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
