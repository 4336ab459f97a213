"""Gradient-boosted tree ensembles as flat arrays: the form a trained model segments with.

XGBoost trains the trees; :meth:`TreeEnsemble.from_booster` reads them out of its JSON model
once, and from then on they are evaluated by the compiled kernel ``_trees.pyx`` with XGBoost's
own float32 arithmetic (the same outputs to the bit), so segmenting with a saved model imports
neither XGBoost nor scikit-learn and starts in a fraction of a second (DESIGN.md: train with
what trains best, then freeze to the compact arrays the fast path reads).

All trees' nodes are concatenated: ``left[i]``/``right[i]`` are absolute node indices (-1 at a
leaf), ``feature[i]`` and ``value[i]`` the split's feature and threshold, or at a leaf its
value; ``roots[t]`` is tree t's first node.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from qseg.fileio import read_npz
from qseg.segmenters.learned._trees import logit, margins

_ARRAYS = {
    "roots": np.int32,
    "left": np.int32,
    "right": np.int32,
    "feature": np.int32,
    "value": np.float32,
    "default_left": np.uint8,
    "base": np.float32,
}


@dataclass(frozen=True)
class TreeEnsemble:
    """Trees over ``n_features`` inputs; ``logistic``: outputs are probabilities, else margins."""

    roots: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    value: np.ndarray
    default_left: np.ndarray
    base: float
    n_features: int
    logistic: bool

    @classmethod
    def from_booster(cls, booster: Any, *, logistic: bool) -> TreeEnsemble:
        """The trees of an XGBoost booster (numeric splits), with its base margin: for the
        logistic objective XGBoost keeps the base score as a probability."""
        model = json.loads(booster.save_raw("json"))
        learner = model["learner"]
        base_score = float(learner["learner_model_param"]["base_score"].strip("[]"))
        base = logit(base_score) if logistic else base_score
        parts: dict[str, list[np.ndarray]] = {k: [] for k in ("left", "right", "feature")}
        parts |= {"value": [], "default_left": []}
        roots, offset = [], 0
        for tree in learner["gradient_booster"]["model"]["trees"]:
            left = np.asarray(tree["left_children"], dtype=np.int32)
            right = np.asarray(tree["right_children"], dtype=np.int32)
            roots.append(offset)
            parts["left"].append(np.where(left >= 0, left + offset, -1))
            parts["right"].append(np.where(right >= 0, right + offset, -1))
            parts["feature"].append(np.asarray(tree["split_indices"], dtype=np.int32))
            parts["value"].append(np.asarray(tree["split_conditions"], dtype=np.float32))
            parts["default_left"].append(np.asarray(tree["default_left"], dtype=np.uint8))
            offset += len(left)
        arrays = {k: np.concatenate([*v, []]).astype(_ARRAYS[k]) for k, v in parts.items()}
        return cls(
            roots=np.asarray(roots, dtype=np.int32),
            base=float(np.float32(base)),
            n_features=int(learner["learner_model_param"]["num_feature"]),
            logistic=logistic,
            **arrays,
        )

    def predict(self, x: np.ndarray) -> np.ndarray:
        """One output per row of ``x`` (float32, as XGBoost computes it)."""
        rows = np.ascontiguousarray(x, dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self.n_features:
            raise ValueError(f"the trees take {self.n_features} features, not {rows.shape[1:]}")
        return margins(
            rows,
            self.roots,
            self.left,
            self.right,
            self.feature,
            self.value,
            self.default_left,
            self.base,
            self.logistic,
        )

    def margins(self, x: np.ndarray) -> np.ndarray:
        """One margin per row of ``x`` (the base plus every tree's leaf, before any logistic):
        what trees boosted further from this ensemble start from."""
        return replace(self, logistic=False).predict(x)

    def emptied(self) -> TreeEnsemble:
        """No trees on the same features: what extends an ensemble by nothing."""
        nodes = np.zeros(0, dtype=np.int32)
        return replace(
            self,
            roots=nodes,
            left=nodes,
            right=nodes,
            feature=nodes,
            value=np.zeros(0, dtype=np.float32),
            default_left=np.zeros(0, dtype=np.uint8),
        )

    def extended(self, more: TreeEnsemble) -> TreeEnsemble:
        """This ensemble with the trees of ``more`` after its own (``more``'s base left out):
        boosting continued from this one's margins, as one ensemble."""
        if more.n_features != self.n_features:
            raise ValueError(
                f"trees on {more.n_features} features cannot extend trees on {self.n_features}"
            )
        offset = len(self.left)

        def moved(children: np.ndarray) -> np.ndarray:
            return np.where(children >= 0, children + offset, -1).astype(np.int32)

        return replace(
            self,
            roots=np.r_[self.roots, more.roots + offset].astype(np.int32),
            left=np.r_[self.left, moved(more.left)],
            right=np.r_[self.right, moved(more.right)],
            feature=np.r_[self.feature, more.feature].astype(np.int32),
            value=np.r_[self.value, more.value].astype(np.float32),
            default_left=np.r_[self.default_left, more.default_left].astype(np.uint8),
        )

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        meta = np.array([self.n_features, int(self.logistic)], dtype=np.int64)
        np.savez(
            buffer,
            roots=self.roots,
            left=self.left,
            right=self.right,
            feature=self.feature,
            value=self.value,
            default_left=self.default_left,
            base=np.array([self.base], dtype=np.float32),
            meta=meta,
        )
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> TreeEnsemble:
        """Trees written by :meth:`to_bytes`; ``ValueError`` unless the arrays have their types,
        agree in length, and every path from a root reaches a leaf inside its own tree (a
        child always follows its parent), on features the ensemble takes."""
        arrays = read_npz(data, (*_ARRAYS, "meta"), "a tree ensemble")
        for name, dtype in (*_ARRAYS.items(), ("meta", np.int64)):
            array = arrays[name]
            if array.dtype != dtype or array.ndim != 1:
                raise ValueError(
                    f"tree ensemble: {name} is {array.dtype} of shape {array.shape}, not a "
                    f"vector of {np.dtype(dtype)}"
                )
        meta = arrays["meta"]
        if len(meta) != 2 or meta[0] < 0 or meta[1] not in (0, 1) or len(arrays["base"]) != 1:
            raise ValueError("tree ensemble: bad header")
        nodes, roots = len(arrays["left"]), arrays["roots"]
        if any(len(arrays[k]) != nodes for k in ("right", "feature", "value", "default_left")):
            raise ValueError("tree ensemble: node arrays of different lengths")
        ends = np.r_[roots[1:], nodes] if len(roots) else roots
        if len(roots) and (roots[0] != 0 or (np.diff(roots) <= 0).any() or roots[-1] >= nodes):
            raise ValueError("tree ensemble: trees do not follow each other")
        tree_end = np.repeat(ends, np.diff(np.r_[roots, nodes])) if nodes else ends
        index = np.arange(nodes)
        left, right = arrays["left"], arrays["right"]
        split = left >= 0
        if (
            (split != (right >= 0)).any()
            or (left[split] <= index[split]).any()
            or (right[split] <= index[split]).any()
            or (left[split] >= tree_end[split]).any()
            or (right[split] >= tree_end[split]).any()
            or (arrays["feature"][split] < 0).any()
            or (arrays["feature"][split] >= meta[0]).any()
        ):
            raise ValueError("tree ensemble: a node points outside its tree or its features")
        return cls(
            roots=roots,
            left=left,
            right=right,
            feature=arrays["feature"],
            value=arrays["value"],
            default_left=arrays["default_left"],
            base=float(arrays["base"][0]),
            n_features=int(meta[0]),
            logistic=bool(meta[1]),
        )
