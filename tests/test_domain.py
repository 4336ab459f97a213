"""Two kinds of query in one model: the domain input, and weights per query."""

from __future__ import annotations

import numpy as np
import pytest
import toy

from qseg import models
from qseg.errors import QsegError
from qseg.segmenters.learned.domain import DomainModel, featurize
from qseg.segmenters.learned.gap_features import FEATURE_NAMES

SPEC = toy.TRAINED_SPECS["joint"].replace("inner_folds=3", "inner_folds=3, domain=true")


def kinds(queries) -> list[str]:
    """A kind of query anyone can tell: those with a place name, and the others."""
    places = {"york", "francisco", "angeles", "münchen"}
    return ["place" if places & set(q.words) else "other" for q in queries]


def test_the_domain_model_tells_kinds_apart():
    queries = toy.gold(150)
    model = DomainModel.fit([q.words for q in queries], kinds(queries), seed=0)
    assert model.labels == ("other", "place")
    p = model.predict([("hotels", "in", "new", "york"), ("cheap", "coffee", "maker")])
    assert p.dtype == np.float32 and p[0] > 0.5 > p[1]
    again = DomainModel.from_bytes(model.to_bytes())
    assert np.array_equal(again.predict([("new", "york")]), model.predict([("new", "york")]))
    offsets, columns, values = featurize([("a", "b")])
    assert offsets.tolist() == [0, len(columns)] and np.isclose(np.square(values).sum(), 1.0)
    with pytest.raises(ValueError, match="two kinds"):
        DomainModel.fit([("a",)], ["x"], seed=0)


def test_a_model_with_the_domain_input(tmp_path):
    queries = toy.gold(150)
    words, targets = [q.words for q in queries], list(queries)
    model = models.estimator(SPEC, toy.resources())
    with pytest.raises(QsegError, match=r"needs fit\(domains=\.\.\.\)"):
        model.fit(words, targets)
    stages: list[str] = []
    model.fit(words, targets, domains=kinds(queries), progress=stages.append)
    assert stages[:3] == ["features", "domain", "gap model"]
    gap_features = len(FEATURE_NAMES)
    assert model.model_.domain is not None and model.n_features_in_ == gap_features + 1 + 6
    models.save(model, tmp_path / "m.qseg")
    loaded = models.load(tmp_path / "m.qseg", toy.resources())
    texts = [q.query for q in toy.gold(40, seed=1)]
    assert loaded.predict(texts) == model.predict(texts)
    assert loaded.rank(texts[0], 3) == model.rank(texts[0], 3)


def test_weights_per_query_change_the_model():
    queries = toy.gold(150)
    words, targets = [q.words for q in queries], list(queries)
    spec = toy.TRAINED_SPECS["features"]
    plain = models.estimator(spec).fit(words, targets)
    ones = models.estimator(spec).fit(words, targets, sample_weight=[1.0] * len(words))
    texts = [q.query for q in toy.gold(60, seed=1)]
    assert np.allclose(
        np.concatenate(ones.break_probabilities(texts)),
        np.concatenate(plain.break_probabilities(texts)),
        atol=1e-6,
    )
    heavy = [10.0 if k == "place" else 0.1 for k in kinds(queries)]
    weighted = models.estimator(spec).fit(words, targets, sample_weight=heavy)
    assert not np.allclose(
        np.concatenate(weighted.break_probabilities(texts)),
        np.concatenate(plain.break_probabilities(texts)),
    )
    with pytest.raises(QsegError, match="one positive number per query"):
        models.estimator(spec).fit(words, targets, sample_weight=[0.0] * len(words))
