"""What kind of query this is: a soft input that lets one model segment two kinds of query.

Web queries (Webis-QSeC-10) and product queries (QueryNER) are segmented by different
conventions: phrases in one, entity spans in the other. A model trained on both learns better
when it knows which kind a query is, but at run time nobody says. :class:`DomainModel` guesses:
a logistic regression on hashed word 1-2-grams and character 3-grams of the query, giving the
probability of the second kind. The break classifier takes that probability as one more input
of every gap and every candidate (learned out of fold, like the lexicon), so its trees learn
how far to follow each convention instead of obeying a hard switch.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from qseg.fileio import read_npz
from qseg.resources._store import hash_keys

BITS = 16
"""Hashed features: 2^16 weights (256 KB in float32)."""
_SEED = 0x51E6


def _keys(words: Sequence[str]) -> list[str]:
    """The query's features: words, word pairs and the character 3-grams of each word."""
    keys = [f"w {w}" for w in words]
    keys += [f"b {a} {b}" for a, b in pairwise(words)]
    for w in words:
        padded = f"<{w}>"
        keys += [f"c {padded[i : i + 3]}" for i in range(len(padded) - 2)]
    return keys


def featurize(queries: Sequence[Sequence[str]], bits: int = BITS) -> tuple[np.ndarray, ...]:
    """Hashed features as CSR parts (row offsets, columns, values): each query's feature
    counts, scaled to unit length; all queries' keys are hashed in one call."""
    keys: list[str] = []
    sizes = []
    for words in queries:
        own = _keys(words)
        keys += own
        sizes.append(len(own))
    hashed = hash_keys(keys, _SEED) & np.uint64((1 << bits) - 1)
    rows = np.repeat(np.arange(len(queries), dtype=np.int64), sizes)
    pairs, counts = np.unique((rows << bits) | hashed.astype(np.int64), return_counts=True)
    row_of = pairs >> bits
    norms = np.sqrt(np.bincount(row_of, weights=np.square(counts), minlength=len(queries)))
    offsets = np.r_[0, np.cumsum(np.bincount(row_of, minlength=len(queries)))]
    values = (counts / norms[row_of]).astype(np.float32)
    return offsets.astype(np.int64), pairs & ((1 << bits) - 1), values


@dataclass(frozen=True)
class DomainModel:
    """The probability that a query is of kind ``labels[1]`` rather than ``labels[0]``."""

    labels: tuple[str, str]
    weights: np.ndarray
    bias: float

    @classmethod
    def fit(
        cls,
        queries: Sequence[Sequence[str]],
        labels: Sequence[str],
        seed: int,
        *,
        balanced: bool = False,
    ) -> DomainModel:
        """``balanced``: both kinds weigh alike in the loss, however many queries each has (a
        router between two models; the domain input of one model is trained unweighted)."""
        from scipy.sparse import csr_matrix
        from sklearn.linear_model import LogisticRegression

        kinds = tuple(sorted(set(labels)))
        if len(kinds) != 2:
            raise ValueError(f"a domain model tells two kinds of query apart, not {len(kinds)}")
        offsets, columns, values = featurize(queries)
        x = csr_matrix((values, columns, offsets), shape=(len(queries), 1 << BITS))
        y = np.array([kinds.index(label) for label in labels])
        model = LogisticRegression(
            C=4.0, max_iter=1000, random_state=seed, class_weight="balanced" if balanced else None
        ).fit(x, y)
        weights = model.coef_[0].astype(np.float32)
        return cls((kinds[0], kinds[1]), weights, float(model.intercept_[0]))

    def predict(self, queries: Sequence[Sequence[str]]) -> np.ndarray:
        """Per query, the probability of ``labels[1]`` (float32)."""
        if not len(queries):
            return np.zeros(0, dtype=np.float32)
        offsets, columns, values = featurize(queries)  # every query has a feature: its words
        margins = np.add.reduceat(self.weights[columns] * values, offsets[:-1]) + self.bias
        return (1.0 / (1.0 + np.exp(-margins.astype(np.float64)))).astype(np.float32)

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        labels = np.frombuffer("\n".join(self.labels).encode("utf-8"), dtype=np.uint8)
        np.savez(buffer, weights=self.weights, bias=np.array([self.bias]), labels=labels)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> DomainModel:
        """A model written by :meth:`to_bytes` (``ValueError`` if it is not one)."""
        arrays = read_npz(data, ("weights", "bias", "labels"), "a domain model")
        weights, bias = arrays["weights"], arrays["bias"]
        if weights.dtype != np.float32 or weights.shape != (1 << BITS,) or bias.shape != (1,):
            raise ValueError(f"domain model: weights of {weights.dtype} {weights.shape}")
        try:
            labels = tuple(arrays["labels"].tobytes().decode("utf-8").split("\n"))
        except UnicodeDecodeError:
            raise ValueError("domain model: labels are not UTF-8") from None
        if len(labels) != 2:
            raise ValueError("domain model: it needs two labels")
        return cls((labels[0], labels[1]), weights, float(bias[0]))
