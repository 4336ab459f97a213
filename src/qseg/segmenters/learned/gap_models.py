"""The per-gap classifiers of the break classifier: logistic regression or boosted trees,
both fitted on the share of annotators who broke at each gap."""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import numpy as np

from qseg.fileio import read_npz


class LinearGapModel:
    """A linear model on imputed, standardized features (scikit-learn fits it): logistic
    regression, or a linear support vector machine (hinge loss, paper 004), whose decision
    value goes through the same logistic function, so a break is where it is positive."""

    ARRAYS = ("fill", "mean", "scale", "coef")

    def __init__(self, fill: np.ndarray, mean: np.ndarray, scale: np.ndarray, coef: np.ndarray):
        self.fill, self.mean, self.scale, self.coef = fill, mean, scale, coef

    @property
    def n_features(self) -> int:
        return len(self.fill)

    @classmethod
    def fit(
        cls,
        x: np.ndarray,
        rates: np.ndarray,
        seed: int,
        weights: np.ndarray | None = None,
        loss: str = "logistic",
    ) -> LinearGapModel:
        from sklearn.linear_model import LogisticRegression
        from sklearn.svm import LinearSVC

        if loss not in ("logistic", "hinge"):
            raise ValueError(f"loss must be logistic or hinge, not {loss!r}")

        fill = np.zeros(x.shape[1])
        present = ~np.isnan(x).all(axis=0)  # columns such as POS without tags stay at 0
        fill[present] = np.nanmedian(x[:, present], axis=0)
        z = np.where(np.isnan(x), fill, x)
        mean, scale = z.mean(axis=0), z.std(axis=0)
        scale[scale == 0] = 1.0
        z = (z - mean) / scale
        # a gap broken by a share r of the annotators is a positive of weight r, a negative of 1-r
        both = np.vstack([z, z])
        labels = np.r_[np.ones(len(z)), np.zeros(len(z))]
        shares = np.r_[rates, 1 - rates]
        if weights is not None:
            shares = shares * np.r_[weights, weights]
        if loss == "hinge":
            model: Any = LinearSVC(C=1.0, max_iter=20000, random_state=seed)
        else:
            model = LogisticRegression(C=1.0, max_iter=2000, random_state=seed)
        model.fit(both, labels, sample_weight=shares)
        return cls(fill, mean, scale, np.r_[model.intercept_, model.coef_[0]])

    def predict(self, x: np.ndarray) -> np.ndarray:
        z = (np.where(np.isnan(x), self.fill, x) - self.mean) / self.scale
        return 1.0 / (1.0 + np.exp(-(z @ self.coef[1:] + self.coef[0])))

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, fill=self.fill, mean=self.mean, scale=self.scale, coef=self.coef)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> LinearGapModel:
        """A model written by :meth:`to_bytes`; ``ValueError`` unless every array is a float64
        vector of one length (``coef`` one longer, for the intercept)."""
        arrays = read_npz(data, cls.ARRAYS, "a linear gap model")
        for name, array in arrays.items():  # first each a vector, then their lengths
            if array.dtype != np.float64 or array.ndim != 1:
                raise ValueError(
                    f"linear gap model: {name} is {array.dtype} of shape {array.shape}, "
                    "expected a float64 vector"
                )
        width = len(arrays["fill"])
        for name, array in arrays.items():
            expected = width + 1 if name == "coef" else width
            if len(array) != expected:
                more = "; coef one more, the intercept" if name == "coef" else ""
                raise ValueError(
                    f"linear gap model: {name} has {len(array)} values, expected {expected} "
                    f"(fill has {width}{more})"
                )
        if (arrays["scale"] == 0).any():
            raise ValueError("linear gap model: a scale of 0")
        return cls(*(arrays[name] for name in cls.ARRAYS))


class TreeGapModel:
    """Gradient-boosted trees (XGBoost) with the logistic loss on break shares, as trained;
    a trained model keeps them as arrays (:class:`.trees.TreeEnsemble`)."""

    def __init__(self, booster: Any) -> None:
        self.booster = booster

    @classmethod
    def fit(
        cls,
        x: np.ndarray,
        rates: np.ndarray,
        params: Mapping[str, Any],
        weights: np.ndarray | None = None,
    ) -> TreeGapModel:
        import xgboost as xgb

        model = xgb.XGBRegressor(objective="binary:logistic", **params)
        model.fit(x, rates, sample_weight=weights)
        return cls(model.get_booster())

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.booster.inplace_predict(x)
