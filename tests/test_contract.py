"""The segmenter contract, checked on every registered method (trainable ones trained small on
the toy world of ``toy.py``), on a model loaded from its file and on the shipped default model
(with the built-in resources it was trained with).

A new method is one registry entry; :func:`test_every_registered_method_is_under_contract`
fails until it has a case here.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import toy

from qseg import models
from qseg.models import open_segmenter
from qseg.query import QueryError, normalize
from qseg.resources.bundle import Resources
from qseg.segmentation import Segmentation
from qseg.segmenters.base import Segmenter
from qseg.segmenters.nesting import nest
from qseg.segmenters.registry import METHODS, canonical_spec, create

QUERIES = [
    "cheap new york yankees tickets",
    "New York  Yankees",
    "stainless steel chest freezer reviews",
    "best café münchen",
    "東京 タワー \uff43\uff41\uff46é",  # full-width letters
    "x-ray u.s. mother's day 2024",
    "tickets",
]
LONG = " ".join(itertools.islice(itertools.cycle(" ".join(QUERIES[:4]).split()), 40))

CASES = {
    "naive": "naive",
    "wiki": "wiki",
    "wiki(unseen_titles=true)": "wiki(unseen_titles=true)",
    "pmi": "pmi",
    "phrases": "phrases(threshold=0.1, min_count=1)",
    "phrases (npmi, two layers)": "phrases(scoring=npmi, threshold=0.1, min_count=1, layers=2)",
    "querylog": "querylog",
    "querylog (Seg-Phase-1 only)": "querylog(wiki=false)",
    "always-split": "always-split",
    "never-split": "never-split",
    "joint": toy.TRAINED_SPECS["joint"],
    "joint (contextual)": toy.TRAINED_SPECS["joint"].replace(", contextual=false", ""),
    "joint (saved)": toy.TRAINED_SPECS["joint"],
    "features": toy.TRAINED_SPECS["features"],
    "features (saved)": toy.TRAINED_SPECS["features"],
    "features (svm, saved)": "features(classifier=svm)",
    "features (pair counts, saved)": toy.TRAINED_SPECS["features"].replace(
        ")", ", pair_counts=true)"
    ),
    "embeddings": toy.TRAINED_SPECS["embeddings"],
    "default (shipped)": models.DEFAULT,
}
_built: dict[str, Segmenter] = {}


def model_of(segmenter: Segmenter) -> object:
    """A trained classifier's fitted model (a loaded model is one already)."""
    return getattr(segmenter, "model_", segmenter)


def resources_for(spec: str) -> Resources | None:
    """The shipped model runs on the built-in resources; every other case on the toy world's."""
    return None if spec == models.DEFAULT else toy.resources()


def _method(case: str) -> str:
    return CASES[case].split("(")[0]


def _words(query: str) -> list[str]:
    return list(normalize(query))


def make(case: str, folder: Path) -> Segmenter:
    """The segmenter of a case: a registry method, trained if it trains, or saved and loaded."""
    spec = CASES[case]
    if spec == models.DEFAULT or not METHODS[_method(case)].trains:
        return open_segmenter(spec, resources_for(spec))
    if "contextual" in case:
        pytest.importorskip("torch", reason="the contextual probe needs qseg[contextual]")
    model = toy.train(spec)
    if "saved" not in case:
        return model
    path = folder / f"{case.split()[0]}.qseg"
    models.save(model, path)
    return open_segmenter(str(path), toy.resources())


@pytest.fixture(scope="module", params=list(CASES))
def segmenter(request, tmp_path_factory) -> Segmenter:
    case = request.param
    if case not in _built:
        _built[case] = make(case, tmp_path_factory.mktemp("contract"))
    return _built[case]


def test_every_registered_method_is_under_contract():
    assert {_method(case) for case in CASES} == set(METHODS) | {models.DEFAULT}


def test_the_words_come_back_unchanged(segmenter):
    for query in [*QUERIES, LONG]:
        assert list(segmenter.segment(query).words) == _words(query)


def test_segment_is_the_best_of_rank(segmenter):
    for query in [*QUERIES, LONG]:
        (best, _), *rest = segmenter.rank(query, 1)
        assert best == segmenter.segment(query) and rest == []


def test_rank_lists_distinct_segmentations_best_first(segmenter):
    for query in [*QUERIES, LONG]:
        ranked = segmenter.rank(query, 5)
        n = len(_words(query))
        expected = min(5, 2 ** (n - 1))
        if hasattr(segmenter, "score"):  # paper 003: segmentations scoring -1 are not listed
            assert 1 <= len(ranked) <= expected
        else:
            assert len(ranked) == expected
        assert len({seg for seg, _ in ranked}) == len(ranked)
        assert all(seg.words == ranked[0][0].words for seg, _ in ranked)
        scores = [score for _, score in ranked]
        assert scores == sorted(scores, reverse=True)


def test_segment_many_is_segment_on_each(segmenter):
    expected = [segmenter.segment(q) for q in QUERIES]
    assert list(segmenter.segment_many(QUERIES)) == expected
    assert list(segmenter.segment_many(iter(QUERIES))) == expected
    assert list(segmenter.segment_many([])) == []


def test_deterministic(segmenter, tmp_path):
    first = [segmenter.segment(q) for q in QUERIES]
    assert [segmenter.segment(q) for q in QUERIES] == first
    case = next(c for c, s in _built.items() if s is segmenter)
    again = make(case, tmp_path)  # built, trained or saved anew
    assert [again.segment(q) for q in QUERIES] == first
    assert [again.rank(q, 3) for q in QUERIES] == [segmenter.rank(q, 3) for q in QUERIES]


@pytest.mark.parametrize("query", ["", "   \t  ", '"|()"'])
def test_a_query_without_words_is_a_clear_error(segmenter, query):
    with pytest.raises(QueryError, match="empty query: it has no words"):
        segmenter.segment(query)
    with pytest.raises(QueryError, match="empty query"):
        segmenter.rank(query, 2)
    with pytest.raises(QueryError, match="empty query"):
        list(segmenter.segment_many(["a b", query]))


def test_one_word_and_forty_words(segmenter):
    assert segmenter.segment("Tickets") == Segmentation.from_pipe("tickets")
    assert [seg for seg, _ in segmenter.rank("tickets", 3)] == [Segmentation.from_pipe("tickets")]
    long = segmenter.segment(LONG)
    assert len(long.words) == 40 and len(long.breaks) == 39


def test_non_ascii_words(segmenter):
    for query in (
        "best café münchen",
        "東京 タワー",
        "\uff4e\uff45\uff57 \uff59\uff4f\uff52\uff4b",
        "straße köln ß",
    ):
        seg = segmenter.segment(query)
        assert list(seg.words) == _words(query)
        assert Segmentation.from_pipe(seg.to_pipe()) == seg


def test_nested_trees_are_binary_over_the_words(segmenter):
    for query in [*QUERIES, LONG]:
        tree = nest(segmenter, query)
        assert list(tree.words) == _words(query)
        assert len(tree.words) < 3 or tree.is_binary


def test_the_tree_holds_every_flat_segment(segmenter):
    for query in [*QUERIES, LONG]:
        flat = segmenter.segment(query)
        assert set(flat.spans) <= set(nest(segmenter, query).spans)


def test_the_spec_recreates_the_segmenter(segmenter):
    spec = segmenter.spec
    if hasattr(segmenter, "get_params"):
        # a trained model not saved: its spec is the registry spec it was made from
        assert canonical_spec(spec) == spec
        assert create(spec, toy.resources()).get_params() == segmenter.get_params()
        return
    again = open_segmenter(spec, resources_for(spec))  # a rule-based method, or a model file
    assert again.spec == spec
    assert [again.segment(q) for q in QUERIES] == [segmenter.segment(q) for q in QUERIES]


def test_it_pickles_and_copies(segmenter):
    """Every segmenter, trained or not, goes through pickle and copy.deepcopy (stores that
    live in files travel as path and fingerprint and are opened again)."""
    import copy
    import pickle

    expected = [segmenter.segment(q) for q in QUERIES]
    for again in (pickle.loads(pickle.dumps(segmenter)), copy.deepcopy(segmenter)):
        assert [again.segment(q) for q in QUERIES] == expected
        assert again.rank(QUERIES[0], 3) == segmenter.rank(QUERIES[0], 3)


@pytest.mark.parametrize(
    "case", [c for c in CASES if _method(c) in METHODS and METHODS[_method(c)].trains]
)
def test_save_and_load_give_the_same_output(case, tmp_path):
    segmenter = _built.get(case) or make(case, tmp_path)
    path = tmp_path / "m.qseg"
    models.save(segmenter, path)
    loaded = models.load(path, toy.resources())
    assert [loaded.segment(q) for q in [*QUERIES, LONG]] == [
        segmenter.segment(q) for q in [*QUERIES, LONG]
    ]
    assert [loaded.rank(q, 4) for q in QUERIES] == [segmenter.rank(q, 4) for q in QUERIES]
