"""scripts/lab/judges.py, the default report's out-of-domain judges: the counting functions on toy
segmentations, the spec edits, the candidates, and the unlabelled query sets of ../shared
(skipped without it). Nothing here trains a model."""

from __future__ import annotations

from pathlib import Path

import pytest
from lab import judges as _judges
from lab import recipes
from lab.judges import (
    QUICK,
    Candidate,
    Scale,
    as_candidate,
    count_gaps,
    count_long,
    has_domain,
    with_estimators,
    without_domain,
)
from lab.recipes import ROOT, V3, Corpora, Recipe

from qseg.segmentation import Segmentation

SHARED = Path(__file__).resolve().parents[2] / "shared"


def pipe(text: str) -> Segmentation:
    return Segmentation.from_pipe(text)


def test_the_bench_finds_the_repository_and_its_shipped_models():
    """The lab's paths are the repository's (they pointed into scripts/ once the bench moved
    to scripts/lab/, and the reports failed on their first file)."""
    assert (ROOT / "pyproject.toml").is_file()
    assert (ROOT / "src" / "qseg" / "models" / "shipped").is_dir()
    assert recipes.SHARED == SHARED


def test_count_long_counts_queries_of_five_words_and_those_left_whole():
    segs = [
        pipe("a b c d e"),  # long, whole
        pipe("a b|c d e"),  # long, broken
        pipe("a b c d"),  # short, whole: not counted
        pipe("a b c d e f g"),  # long, whole
    ]
    assert count_long(segs) == (3, 2)
    assert count_long(segs, least=7) == (1, 1)
    assert count_long([]) == (0, 0)


def test_count_gaps_splits_function_word_gaps_from_content_gaps():
    # gaps: containers|for (function), for|food (function), food|storage (content)
    gold = pipe("containers for food|storage")
    predicted = pipe("containers|for food storage")
    counts = count_gaps([(predicted, gold)])
    assert (counts.function, counts.function_correct, counts.function_broken) == (2, 1, 1)
    assert (counts.content, counts.content_correct, counts.content_broken) == (1, 0, 0)
    assert counts.function_accuracy == 0.5 and counts.content_accuracy == 0.0
    # a segmentation against itself: all correct, the broken counts are its break rates
    itself = count_gaps([(gold, gold)])
    assert itself.function_correct == 2 and itself.function_broken == 0
    assert itself.content_broken == 1


def test_count_gaps_function_words_on_either_side_and_other_lists():
    seg = pipe("the|new york|times")
    counts = count_gaps([(seg, seg)])
    assert (counts.function, counts.content) == (1, 2)  # the|new; new york, york|times
    counts = count_gaps([(seg, seg)], function_words=frozenset({"york"}))
    assert (counts.function, counts.content) == (2, 1)
    assert count_gaps([]).function_accuracy is None


def test_count_gaps_refuses_different_words():
    with pytest.raises(ValueError, match="different words"):
        count_gaps([(pipe("a b"), pipe("a c"))])


def test_spec_edits_keep_the_rest_of_the_spec():
    assert has_domain(V3.spec)
    plain = without_domain(V3.spec)
    assert not has_domain(plain) and "learning_rate=0.1" in plain and "n_estimators=150" in plain
    small = with_estimators(V3.spec, 30)
    assert "n_estimators=30" in small and has_domain(small)
    assert with_estimators("joint(n_estimators=10)", 30) == "joint(n_estimators=10)"
    assert with_estimators("naive", 30) == "naive"


def test_candidates_from_specs_recipes_and_both():
    naive = as_candidate("naive")
    assert naive.unsupervised and naive.key == "naive" and naive.recipe is None
    wiki = as_candidate("wiki(unseen_titles=true)")
    assert wiki.unsupervised and wiki.key == "wiki"
    shipped = as_candidate("qseg-default-v2")
    assert not shipped.unsupervised and shipped.segmenter == "qseg-default-v2"
    recipe = as_candidate(V3)
    assert recipe.recipe is V3 and recipe.segmenter is None and not recipe.unsupervised
    both = Candidate("qseg-default-v2", segmenter="qseg-default-v2", recipe=V3, key="v2")
    assert as_candidate(both) is both and not both.unsupervised
    assert Candidate("v3 stand-in: the v2 recipe", recipe=V3).key == "v3-stand-in--the-v2-recipe"
    with pytest.raises(ValueError):
        Candidate("nothing")


def test_scale_cuts_the_training_queries_and_the_boosters():
    refs = {str(i): [] for i in range(10)}
    train = {str(i): pipe("a b") for i in range(8)}
    corpora = Corpora(refs, train, {"d": pipe("a|b")})  # type: ignore[arg-type]
    small = QUICK.corpora(corpora)
    assert list(small.webis_votes) == ["0", "4", "8"] and list(small.queryner_train) == ["0", "4"]
    assert small.queryner_dev is corpora.queryner_dev
    assert Scale().corpora(corpora) is corpora and Scale().full and not QUICK.full
    recipe = Recipe("r", "joint(n_estimators=150)")
    assert "n_estimators=30" in QUICK.recipe(recipe).spec and Scale().recipe(recipe) is recipe


def test_unlabelled_sets_are_the_engine_words_of_every_query():
    if not (SHARED / "data" / "ir").exists():
        pytest.skip(f"IR collections not found at {SHARED / 'data' / 'ir'} (../shared is absent)")
    sets = _judges.unlabelled_sets(SHARED)
    assert {k: len(v) for k, v in sets.items()} == {
        "NFCorpus": 144,
        "Cranfield": 225,
        "Vaswani": 93,
        "Saha Roy 500": 500,
    }
    for texts in sets.values():
        assert all(t == t.lower() and "." not in t and t.strip() == t for t in texts)


def test_recipes_with_the_same_training_share_a_key():
    same = Recipe("another name", V3.spec, resources=V3.resources, notes="n", jobs=2)
    assert _judges.recipe_key(same) == _judges.recipe_key(V3)
    other = Recipe("default", V3.spec, resources=V3.resources, weights=(2.0, 1.0))
    assert _judges.recipe_key(other) != _judges.recipe_key(V3)


def test_differing_picks_function_word_differences_then_content_ones():
    web = [pipe("a|b"), pipe("toys|for|kids"), pipe("new york|times"), pipe("red|car")]
    product = [pipe("a|b"), pipe("toys|for kids"), pipe("new york times"), pipe("red car")]
    answers = {"web": web, "product": product}
    # 0: the same; 1: differs at for|kids (a function word); 2, 3: between content words
    assert _judges.differing(answers, per_kind=1) == [1, 2]
    assert _judges.differing(answers, per_kind=2) == [1, 2, 3]
    assert _judges.differing({"web": web[:1], "product": product[:1]}) == []


def test_style_cost_is_the_right_fixed_style_minus_auto():
    rows = [
        {"style": "auto", "figures": [0.70, 0.50, 0.80, 0.60]},
        {"style": "web", "figures": [0.72, 0.53, 0.75, 0.55]},
        {"style": "product", "figures": [0.65, 0.45, 0.79, 0.62]},
    ]
    cost = _judges.style_cost(rows)
    assert cost["webis"] == pytest.approx([0.02, 0.03])
    assert cost["queryner"] == pytest.approx([-0.01, 0.02])


def test_verdict_of_two_query_accuracy_differences():
    verdict = _judges.verdict
    assert verdict(0.02, 0.03) == "helps both"
    assert verdict(-0.02, -0.03) == "hurts both"
    assert verdict(0.005, -0.005) == "within noise"
    assert verdict(0.02, -0.02) == "helps web, hurts product"
    assert verdict(0.02, 0.0) == "helps web, within noise on product"
    assert verdict(0.0, -0.02) == "hurts product, within noise on web"
