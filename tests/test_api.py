"""One Python API: one way to a segmenter (files or resources in memory), every segmenter
taking text or a word list, k checked one way, bad items named by index, the estimator's
scikit-learn conventions (nested parameters, score), and every error a caller can meet
importable from ``qseg``."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest
import toy
from helpers import PHRASES, WORDS, small

import qseg
from qseg.resources import NgramCounts
from qseg.segmentation import Reference
from qseg.segmenters.registry import METHODS


def test_segmenter_takes_resources_in_memory_or_files_not_both(write):
    resources = qseg.Resources(ngrams=NgramCounts(PHRASES | WORDS))
    assert qseg.segmenter("naive", resources).segment("new york yankees").to_pipe() == (
        "new york yankees"
    )
    counts = write("counts.txt", "".join(f"{k}\t{v}\n" for k, v in (PHRASES | WORDS).items()))
    from_file = qseg.segmenter("naive", ngrams=counts)
    assert from_file.segment("new york yankees") == qseg.Segmentation.from_pipe("new york yankees")
    with pytest.raises(qseg.QsegError, match=r"give resources or resource files \(ngrams\)"):
        qseg.segmenter("naive", resources, ngrams=counts)


def test_one_spelling_of_the_query_log():
    names = inspect.signature(qseg.segmenter).parameters
    assert "query_log" in names and "querylog" not in names
    assert "query_log" in inspect.signature(qseg.Resources.load).parameters
    assert "query_log" in {f for f in qseg.Resources.__dataclass_fields__}
    with pytest.raises(qseg.QsegError, match="needs a query log"):
        qseg.segmenter("querylog", qseg.Resources())


@pytest.fixture(scope="module")
def every_method():
    """Every registered method, trained small where it trains (the toy world)."""
    built = {}
    for name, method in METHODS.items():
        spec = toy.TRAINED_SPECS.get(name, name)
        built[name] = toy.train(spec) if method.trains else qseg.segmenter(spec, toy.resources())
    built["default"] = qseg.segmenter()
    return built


def test_every_segmenter_takes_a_word_list(every_method):
    for name, segmenter in every_method.items():
        text = segmenter.segment("New York  yankees tickets")
        assert segmenter.segment(["New", "York", "yankees", "tickets"]) == text, name
        assert segmenter.segment(("new", "york", "yankees", "tickets")) == text, name
        assert segmenter.rank(["new", "york"], 2) == segmenter.rank("new york", 2), name
        with pytest.raises(qseg.QueryError, match="text or a list of words"):
            segmenter.segment([b"new", b"york"])


@pytest.mark.parametrize("k", [0, -1, 2.5, "3", True, None])
def test_rank_checks_k_one_way_everywhere(every_method, k):
    for name, segmenter in every_method.items():
        with pytest.raises(qseg.QsegError, match="k must be a whole number of at least 1"):
            segmenter.rank("new york", k)  # type: ignore[arg-type]
        assert name


def test_segment_many_names_a_bad_item_or_skips_it(every_method):
    queries = ["new york", "", ["yankees", "tickets"], "w " * 1001, 7]
    for name, segmenter in every_method.items():
        with pytest.raises(qseg.QueryError, match=r"^query 1 \(''\): empty query"):
            list(segmenter.segment_many(queries))
        kept = list(segmenter.segment_many(queries, errors="skip"))
        assert [s.query for s in kept] == ["new york", "yankees tickets"], name
        with pytest.raises(qseg.QsegError, match="errors must be 'raise' or 'skip'"):
            list(segmenter.segment_many(queries, errors="ignore"))  # type: ignore[arg-type]
    with pytest.raises(qseg.QueryError, match=r"^query 3 \('w w w .*\.\.\.'\): query has 1001"):
        list(every_method["naive"].segment_many(queries[2:3] * 3 + queries[3:]))


def test_fit_takes_pipe_text_segmentations_and_votes_and_names_anything_else():
    votes = list(toy.votes(60).items())
    queries = [refs[0].segmentation.query for _, refs in votes]
    majority = [max(refs, key=lambda r: r.votes).segmentation for _, refs in votes]
    as_pipe = small(toy.resources()).fit(queries, [s.to_pipe() for s in majority])
    as_segmentations = small(toy.resources()).fit(queries, majority)
    assert as_pipe.predict(queries) == as_segmentations.predict(queries)
    for bad, message in (
        (42, "target 3: a target is a Segmentation, pipe text"),
        ([], "target 3: a target is a Segmentation"),
        ("new||york", "target 3: empty segment"),
        (
            [Reference(qseg.Segmentation.from_pipe("a b"), 1), Reference(majority[0], 1)],
            "list of Reference of one query",
        ),
    ):
        targets: list = list(majority)
        targets[3] = bad
        with pytest.raises(qseg.SegmentationError, match=message):
            small(toy.resources()).fit(queries, targets)


def test_nested_parameters_for_grid_search():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV

    model = small(toy.resources())
    model.set_params(boosting__n_estimators=7, decoding__max_candidates=2, inner_folds=4)
    assert model.boosting.n_estimators == 7 and model.boosting.max_depth == 3
    assert model.decoding.max_candidates == 2 and model.inner_folds == 4
    assert clone(model).boosting.n_estimators == 7
    with pytest.raises(qseg.QsegError, match="boosting has no field 'trees'"):
        model.set_params(boosting__trees=3)
    with pytest.raises(qseg.QsegError, match="nested parameters are fields of"):
        model.set_params(classifier__depth=3)

    votes = list(toy.votes(90).items())
    queries = [refs[0].segmentation.query for _, refs in votes]
    targets = [refs for _, refs in votes]
    search = GridSearchCV(
        small(toy.resources()), {"boosting__n_estimators": [2, 20]}, cv=3, error_score="raise"
    )
    search.fit(queries, targets)
    assert search.best_params_ in ({"boosting__n_estimators": 2}, {"boosting__n_estimators": 20})
    scores = search.cv_results_["mean_test_score"]
    assert all(0.5 < s <= 1 for s in scores)


def test_score_is_pooled_break_accuracy_against_the_majority():
    votes = list(toy.votes(60).items())
    queries = [refs[0].segmentation.query for _, refs in votes]
    targets = [refs for _, refs in votes]
    model = small(toy.resources()).fit(queries, targets)
    predicted = model.predict(queries)
    right = gaps = 0
    for seg, refs in zip(predicted, targets, strict=True):
        best = max(refs, key=lambda r: r.votes).segmentation
        right += sum(a == b for a, b in zip(seg.breaks, best.breaks, strict=True))
        gaps += len(best.breaks)
    assert model.score(queries, targets) == pytest.approx(right / gaps)
    flipped = [qseg.Segmentation(s.words, [1 - b for b in s.breaks]) for s in predicted]
    assert model.score(queries, flipped) == pytest.approx(0.0)
    assert model.score(queries, [s.to_pipe() for s in predicted]) == 1.0


def test_every_error_a_caller_can_meet_is_exported():
    import qseg.errors

    exported = {getattr(qseg, name) for name in qseg.__all__}
    classes = [
        obj
        for module in (qseg.errors, qseg.query, qseg.segmentation)
        for obj in vars(module).values()
        if isinstance(obj, type) and issubclass(obj, Exception)
    ]
    assert set(classes) <= exported
    for name in ("SpecError", "ModelError", "ResourceMismatch", "StoreError", "QueryError"):
        assert issubclass(getattr(qseg, name), qseg.QsegError)
    assert issubclass(qseg.NotFittedSegmenterError, qseg.QsegError)
    with pytest.raises(qseg.NotFittedSegmenterError):
        small(toy.resources()).segment("new york")


def test_errors_raised_to_python_name_python_arguments(tmp_path):
    """The library names the argument of the call that mends an error; the command line
    prints the same errors with its flags (tests/test_errors.py, tests/test_models.py)."""
    from dataclasses import replace

    from qseg import models
    from qseg.cli.wording import for_command_line
    from qseg.resources.builders import build_ngrams

    path = tmp_path / "m.qseg"
    models.save(toy.train(toy.TRAINED_SPECS["features"]), path)
    other = replace(toy.resources(), ngrams=NgramCounts({"new york": 3, "new": 5}))
    with pytest.raises(qseg.ResourceMismatch) as refused:
        qseg.segmenter(str(path), other)
    assert "`allow_other_resources=True`" in str(refused.value) and "--" not in str(refused.value)
    assert "--allow-other-resources" in for_command_line(str(refused.value))
    assert qseg.segmenter(str(path), other, allow_other_resources=True).segment("new york")
    with pytest.raises(qseg.QsegError, match="give `query_log=FILE`") as needs:
        qseg.segmenter("querylog", qseg.Resources())
    assert "give --query-log FILE" in for_command_line(str(needs.value))
    with pytest.raises(qseg.QsegError, match="`min_count` must be at least 1, got 0") as bad:
        build_ngrams([tmp_path / "none.txt"], tmp_path / "x.qseg", min_count=0)
    assert for_command_line(str(bad.value)) == "--min-count must be at least 1, got 0"


def test_a_missing_extra_is_the_one_line_error_the_command_line_prints(tmp_path):
    """Without duckdb, the built-in title store cannot be built: the library raises the
    QsegError naming the extra, not a bare ModuleNotFoundError."""
    code = (
        "import sys; sys.modules['duckdb'] = None\n"
        "import qseg\n"
        "try:\n"
        "    qseg.segmenter('wiki')\n"
        "except qseg.QsegError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "QSEG_CACHE": str(tmp_path)},
        timeout=120,
    )
    assert done.stdout == (
        "QsegError this needs the Python package 'duckdb', which is not installed: "
        "pip install 'qseg[build]' (or 'qseg[all]' for everything)\n"
    ), done.stderr
