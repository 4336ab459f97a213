"""The trainable segmenters are scikit-learn estimators: scikit-learn's own checks, and the
conventions those checks test on numeric data, tested here on queries."""

from __future__ import annotations

import warnings

import pytest
import toy
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import check_estimator

from qseg.segmenters.learned.supervised import BreakClassifier
from qseg.segmenters.learned.trainable import Boosting, Decoding, Inputs
from qseg.segmenters.registry import METHODS, create

NUMERIC = (
    "it fits a numeric matrix X; a segmenter fits queries (text) and their segmentations, "
    "so the property is tested on queries in this module instead"
)
NUMERIC_ONLY = (
    "it feeds a numeric matrix X (sparse, complex, NaN, dtype or memory layout variants); "
    "a segmenter's input is query text, where none of these exist"
)
WEIGHTS = (
    "it weighs rows of a numeric matrix X; a segmenter weighs queries: weights of ones giving "
    "the model of no weights, other weights another, and zero weights refused are tested on "
    "queries in tests/test_domain.py"
)
SKIPPED = {
    "check_fit_score_takes_y": NUMERIC,
    "check_estimators_overwrite_params": NUMERIC,
    "check_dont_overwrite_parameters": NUMERIC,
    "check_estimators_fit_returns_self": NUMERIC,
    "check_dict_unchanged": NUMERIC,
    "check_fit_idempotent": NUMERIC,
    "check_fit_check_is_fitted": NUMERIC,
    "check_methods_sample_order_invariance": NUMERIC,
    "check_methods_subset_invariance": NUMERIC,
    "check_estimators_pickle": NUMERIC,
    "check_n_features_in_after_fitting": NUMERIC,
    "check_n_features_in": NUMERIC,
    "check_pipeline_consistency": NUMERIC,
    "check_readonly_memmap_input": NUMERIC_ONLY,
    "check_positive_only_tag_during_fit": NUMERIC_ONLY,
    "check_estimators_dtypes": NUMERIC_ONLY,
    "check_complex_data": NUMERIC_ONLY,
    "check_dtype_object": NUMERIC_ONLY,
    "check_estimators_nan_inf": NUMERIC_ONLY,
    "check_estimator_sparse_tag": NUMERIC_ONLY,
    "check_estimator_sparse_array": NUMERIC_ONLY,
    "check_estimator_sparse_matrix": NUMERIC_ONLY,
    "check_f_contiguous_array_estimator": NUMERIC_ONLY,
    "check_fit2d_1sample": NUMERIC_ONLY,
    "check_fit2d_1feature": NUMERIC_ONLY,
    "check_fit1d": NUMERIC_ONLY,
    "check_fit2d_predict1d": NUMERIC_ONLY,
    "check_all_zero_sample_weights_error": WEIGHTS,
    "check_sample_weight_equivalence_on_dense_data": WEIGHTS,
    "check_sample_weights_list": WEIGHTS,
    "check_sample_weights_not_an_array": WEIGHTS,
    "check_sample_weights_not_overwritten": WEIGHTS,
    "check_sample_weights_pandas_series": WEIGHTS,
    "check_sample_weights_shape": WEIGHTS,
    "check_estimators_empty_data_messages": "empty training data is refused with a QsegError "
    "naming what is missing (too few queries), not scikit-learn's ValueError about arrays",
}
TRAINABLE = [name for name, method in METHODS.items() if method.trains]


@pytest.mark.parametrize("name", TRAINABLE)
def test_scikit_learn_checks(name):
    """Every check runs; those that cannot apply to a segmenter are named with the reason."""
    outcomes: dict[str, str] = {}

    def record(*, check_name, status, **_):
        outcomes[check_name] = status

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(
            create(toy.TRAINED_SPECS[name], toy.resources()),
            expected_failed_checks=SKIPPED,
            on_fail=None,
            callback=record,
        )
    passed = {check for check, status in outcomes.items() if status == "passed"}
    assert {
        "check_estimator_cloneable",
        "check_no_attributes_set_in_init",
        "check_parameters_default_constructible",
        "check_get_params_invariance",
        "check_set_params",
        "check_estimators_unfitted",
        "check_estimator_repr",
        "check_do_not_raise_errors_in_init_or_set_params",
    } <= passed
    assert not {check for check, status in outcomes.items() if status == "failed"}
    xfailed = {check for check, status in outcomes.items() if status == "xfail"}
    assert xfailed == set(SKIPPED) & set(outcomes)  # (older scikit-learns run fewer checks)
    assert len(outcomes) > 40


def _fit(model: BreakClassifier, n: int = 120) -> BreakClassifier:
    queries = toy.gold(n)
    return model.fit([q.words for q in queries], list(queries))


@pytest.mark.parametrize("name", TRAINABLE)
def test_estimator_conventions_on_queries(name):
    model = create(toy.TRAINED_SPECS[name], toy.resources())
    params = model.get_params()
    before = set(vars(model))
    with pytest.raises(NotFittedError):
        model.predict(["new york"])
    assert _fit(model) is model  # fit returns self
    assert model.get_params() == params  # fitting changes no parameter
    learned = set(vars(model)) - before
    assert learned and all(attr.endswith("_") for attr in learned)  # learned state ends in _
    state = dict(vars(model))
    queries = [q.query for q in toy.gold(40, seed=1)]
    predicted = model.predict(queries)
    assert vars(model) == state  # predicting changes nothing
    assert _fit(model).predict(queries) == predicted  # fitting again: the same model
    assert model.predict(queries[::-1]) == predicted[::-1]  # order and batch do not matter
    assert model.predict(queries[:7]) == predicted[:7]
    copy = clone(model)
    assert copy.get_params() == params and not hasattr(copy, "gap_model_")


def test_parameters_are_grouped_and_round_trip():
    model = BreakClassifier(
        inputs=Inputs(lexicon=False),
        boosting=Boosting(n_estimators=50),
        decoding=Decoding(joint=False),
        classifier="logreg",
    )
    params = model.get_params()
    assert sorted(params) == [
        "adaptation",
        "base",
        "boosting",
        "classifier",
        "decoding",
        "inner_folds",
        "inputs",
        "n_jobs",
        "random_state",
        "resources",
    ]
    assert BreakClassifier().set_params(**params).get_params() == params
    assert clone(model).get_params() == params
    assert model.spec == "features(classifier=logreg, n_estimators=50)"
    with pytest.raises(Exception, match="none of the registered methods"):
        _ = BreakClassifier(decoding=Decoding(joint=False)).spec
    with pytest.raises(Exception, match=r"boosting.max_depth must be int"):
        _fit(BreakClassifier(toy.resources(), boosting=Boosting(max_depth=2.5)))  # type: ignore[arg-type]
