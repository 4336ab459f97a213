"""Tree ensembles as arrays: the same outputs as XGBoost to the bit, and checked when read."""

from __future__ import annotations

import io

import numpy as np
import pytest

from qseg.segmenters.learned.trees import TreeEnsemble


def boosters(objective: str, missing: float = 0.2, rows: int = 300):
    import xgboost as xgb

    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 7)).astype(np.float32)
    x[rng.random(x.shape) < missing] = np.nan  # missing values take the default direction
    y = (x[:, 0] > 0).astype(float) if objective == "binary:logistic" else rng.normal(size=400)
    params = {"objective": objective, "max_depth": 4, "eta": 0.3, "seed": 0, "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(x, label=y), 25)
    return booster, rng.normal(size=(rows, 7)).astype(np.float32)


@pytest.mark.parametrize("rows", [300, 30_000])  # one block of rows, and several (_trees.pyx)
@pytest.mark.parametrize("objective", ["binary:logistic", "reg:squarederror"])
def test_the_same_outputs_as_xgboost(objective, rows):
    booster, x = boosters(objective, rows=rows)
    x[::3, 2] = np.nan
    logistic = objective == "binary:logistic"
    trees = TreeEnsemble.from_bytes(
        TreeEnsemble.from_booster(booster, logistic=logistic).to_bytes()
    )
    expected = booster.inplace_predict(x, predict_type="value" if logistic else "margin")
    assert np.array_equal(trees.predict(x), expected)  # bit for bit
    assert np.array_equal(trees.predict(x.astype(np.float64)), expected)  # read as float32
    with pytest.raises(ValueError, match="take 7 features"):
        trees.predict(x[:, :3])


def _with(trees: TreeEnsemble, **arrays) -> bytes:
    with np.load(io.BytesIO(trees.to_bytes())) as z:
        current = {k: z[k] for k in z.files} | arrays
    buffer = io.BytesIO()
    np.savez(buffer, **current)
    return buffer.getvalue()


def test_damaged_arrays_are_refused():
    booster, _ = boosters("reg:squarederror")
    trees = TreeEnsemble.from_booster(booster, logistic=False)
    left = trees.left.copy()
    split = int(np.flatnonzero(left >= 0)[0])
    cycle = left.copy()
    cycle[split] = split  # a node that points at itself would never end
    outside = left.copy()
    outside[split] = len(left) + 5
    for data, message in (
        (_with(trees, left=cycle), "points outside its tree"),
        (_with(trees, left=outside), "points outside its tree"),
        (_with(trees, feature=np.full_like(trees.feature, 99)), "outside its tree or its features"),
        (_with(trees, value=trees.value.astype(np.float64)), "value is float64"),
        (_with(trees, roots=trees.roots[::-1].copy()), "trees do not follow each other"),
        (_with(trees, value=np.full_like(trees.value, np.inf)), "NaN or infinite"),
        (b"junk", "not a tree ensemble"),
    ):
        with pytest.raises(ValueError, match=message):
            TreeEnsemble.from_bytes(data)
