import pytest
from helpers import assert_one_line_error, qseg

from qseg.models import open_segmenter
from qseg.resources import NgramCounts, Resources, TitleSet
from qseg.segmenters import METHODS, canonical_spec, create, parse_spec
from qseg.segmenters.registry import SpecError

RESOURCES = Resources(ngrams=NgramCounts({"a": 5, "b": 5, "a b": 3}), titles=TitleSet({"a b"}))


@pytest.mark.parametrize(
    "spec, canonical",
    [
        ("naive", "naive"),
        ("NAIVE()", "naive"),
        ("wiki", "wiki"),
        ("wiki(unseen_titles=true)", "wiki(unseen_titles=true)"),
        ("wiki( unseen_titles = yes , median=3461030 )", "wiki(unseen_titles=true)"),
        ("wiki(median=10)", "wiki(median=10)"),
        ("pmi(tau=0.894775)", "pmi"),
        ("pmi(tau=1.5)", "pmi(tau=1.5)"),
        ("features(classifier='logreg')", "features(classifier=logreg)"),
        ('JOINT(rank_votes=no, classifier="xgboost")', "joint(rank_votes=false)"),
    ],
)
def test_specs_round_trip_and_match_the_built_segmenter(spec, canonical):
    assert canonical_spec(spec) == canonical
    assert canonical_spec(canonical) == canonical
    assert create(spec, RESOURCES).spec == canonical


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "nope",
            "unknown method 'nope'; available: always-split, embeddings, features, joint, "
            "naive, never-split, phrases, pmi, querylog, wiki",
        ),
        ("naive(k=1)", "unknown parameter 'k=1'; known: none"),
        ("pmi(tau=high)", "tau must be of type float"),
        ("pmi(tau=nan)", "pmi: tau must be a finite number, not 'nan'"),
        ("pmi(tau=inf)", "pmi: tau must be a finite number, not 'inf'"),
        ("pmi(tau=-Infinity)", "pmi: tau must be a finite number, not '-Infinity'"),
        ("pmi(tau=1e999)", "pmi: tau must be a finite number, not '1e999'"),
        ("pmi(tau=1, tau=2)", "pmi: tau is given twice"),
        ("wiki(unseen_titles=true, unseen_titles=true)", "wiki: unseen_titles is given twice"),
        ("phrases(threshold=1e400)", "phrases: threshold must be a finite number"),
        ("wiki(unseen_titles=maybe)", "unseen_titles must be of type bool"),
        ("wiki(median=0)", "median must be positive"),
        ("wiki(median)", "unknown parameter 'median'"),
        ("naive(", "malformed method spec"),
        ("naive(,)", "malformed method spec 'naive(,)': an empty parameter (a stray comma)"),
        ("naive(a=1,)", "malformed method spec 'naive(a=1,)': an empty parameter"),
        ("naive(,a=1)", "malformed method spec 'naive(,a=1)': an empty parameter"),
        ("wiki(unseen_titles=true, )", "malformed method spec 'wiki(unseen_titles=true, )'"),
        ("wiki(unseen_titles=true,,median=3)", "an empty parameter (a stray comma)"),
        ("features(classifier=perceptron)", "classifier must be one of xgboost, logreg, svm"),
        ("embeddings", "needs word vectors: give `Resources(vectors=...)`"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        create(spec, RESOURCES)


@pytest.mark.parametrize("spec", ["naive(,)", "wiki(unseen_titles=true,)"])
def test_an_empty_parameter_is_one_line_on_the_command_line(spec):
    assert_one_line_error(qseg("segment", "--method", spec, "a b"), repr(spec), "empty parameter")


def test_a_saved_models_options_name_the_spec_they_came_in():
    with pytest.raises(SpecError, match=r"^malformed method spec 'default\(style=web,\)': an emp"):
        open_segmenter("default(style=web,)")


def test_every_method_has_defaults_that_parse():
    for name, method in METHODS.items():
        parsed, params = parse_spec(name)
        assert parsed is method
        assert params == {key: p.default for key, p in method.params.items()}


def test_without_titles_wiki_is_a_clear_error_and_the_default_is_naive(monkeypatch):
    import qseg.resources.default
    from qseg.errors import QsegError
    from qseg.segmenters.registry import BEST_SPEC, default_spec

    assert default_spec(RESOURCES) == BEST_SPEC == "wiki(unseen_titles=true)"
    monkeypatch.setattr(qseg.resources.default, "default_titles", lambda: None)
    with pytest.raises(QsegError, match="needs Wikipedia titles: give `titles=FILE`, or"):
        create("wiki", Resources(ngrams=RESOURCES.ngrams))
    assert default_spec(Resources(ngrams=RESOURCES.ngrams)) == "naive"
