"""Word vectors: a vocabulary and a matrix, the resource of paper 002's embedding features.

Vectors are kept as a plain matrix so that a model file holds them without gensim; they are
trained by :mod:`qseg.resources.word2vec`. Like the stores, a :class:`WordVectors` is immutable
and shared, never copied (``copy.deepcopy`` and ``sklearn.base.clone`` return the same object).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from qseg.fileio import read_npz


@dataclass(frozen=True)
class WordVectors:
    """Vectors of a vocabulary; unknown words get the zero vector."""

    vocabulary: tuple[str, ...]
    vectors: np.ndarray

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def fingerprint(self) -> str:
        """A digest of the vocabulary and the vectors' bytes (what a model records)."""
        digest = hashlib.sha256("\n".join(self.vocabulary).encode("utf-8"))
        digest.update(str(self.vectors.dtype).encode() + np.ascontiguousarray(self.vectors).data)
        return digest.hexdigest()[:16]

    def lookup(self, words: Sequence[str]) -> np.ndarray:
        """One row per word (zeros for words without a vector)."""
        index = self._index
        rows = np.array([index.get(w, -1) for w in words], dtype=np.int64)
        out = np.zeros((len(words), self.dimensions), dtype=np.float32)
        known = rows >= 0
        out[known] = self.vectors[rows[known]]
        return out

    def to_bytes(self) -> bytes:
        """One ``.npz`` file: the vectors and the vocabulary (UTF-8, a word a line)."""
        buffer = io.BytesIO()
        vocabulary = np.frombuffer("\n".join(self.vocabulary).encode("utf-8"), dtype=np.uint8)
        np.savez(buffer, vectors=self.vectors, vocabulary=vocabulary)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> WordVectors:
        """Vectors written by :meth:`to_bytes` (``ValueError`` if they are not)."""
        arrays = read_npz(data, ("vectors", "vocabulary"), "a word-vector file")
        vectors, raw = arrays["vectors"], arrays["vocabulary"]
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError(f"the vocabulary is {raw.dtype} of {raw.ndim} dimensions, not bytes")
        if vectors.ndim != 2 or vectors.dtype not in (np.float16, np.float32):
            raise ValueError(
                f"word vectors must be a float16 or float32 matrix, not {vectors.dtype} "
                f"of shape {vectors.shape}"
            )
        try:
            text = raw.tobytes().decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("the vocabulary is not UTF-8") from None
        vocabulary = tuple(text.split("\n")) if text else ()
        if len(vocabulary) != len(vectors):
            raise ValueError(
                f"the vocabulary ({len(vocabulary)} words) and the word vectors "
                f"({len(vectors)}) do not match"
            )
        return cls(vocabulary, vectors)

    @property
    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {w: i for i, w in enumerate(self.vocabulary)}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    def __deepcopy__(self, memo: dict[int, Any]) -> WordVectors:
        return self  # immutable: shared, like a memory-mapped store
