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
    """Vectors of a vocabulary; unknown words get the zero vector. Quantized vectors
    (:meth:`quantized`) are int8 with a scale per word: a quarter of float32's bytes."""

    vocabulary: tuple[str, ...]
    vectors: np.ndarray
    scales: np.ndarray | None = None
    """Per word, what its int8 vector is multiplied by (``None`` for float vectors)."""

    def quantized(self) -> WordVectors:
        """These vectors as int8, each word's scaled to its largest magnitude (an error of at
        most half a step, 1/254 of it, per component)."""
        values = np.asarray(self.vectors, dtype=np.float32)
        if self.scales is not None:
            return self
        scales = np.abs(values).max(axis=1) / 127.0
        scales[scales == 0] = 1.0
        codes = np.clip(np.rint(values / scales[:, None]), -127, 127).astype(np.int8)
        return WordVectors(self.vocabulary, codes, scales.astype(np.float32))

    def restricted(self, words: set[str]) -> WordVectors:
        """Only the vectors of ``words`` (a smaller table; other words get the zero vector)."""
        kept = [i for i, word in enumerate(self.vocabulary) if word in words]
        scales = self.scales[kept] if self.scales is not None else None
        return WordVectors(tuple(self.vocabulary[i] for i in kept), self.vectors[kept], scales)

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])

    @property
    def fingerprint(self) -> str:
        """A digest of the vocabulary and the vectors' bytes (what a model records)."""
        digest = hashlib.sha256("\n".join(self.vocabulary).encode("utf-8"))
        digest.update(str(self.vectors.dtype).encode() + np.ascontiguousarray(self.vectors).data)
        if self.scales is not None:
            digest.update(np.ascontiguousarray(self.scales).data)
        return digest.hexdigest()[:16]

    def lookup(self, words: Sequence[str]) -> np.ndarray:
        """One row per word (zeros for words without a vector)."""
        index, table = self._index, self._table
        unknown = len(table) - 1
        return table[np.array([index.get(w, unknown) for w in words], dtype=np.intp)]

    def to_bytes(self) -> bytes:
        """One ``.npz`` file: the vectors and the vocabulary (UTF-8, a word a line)."""
        buffer = io.BytesIO()
        vocabulary = np.frombuffer("\n".join(self.vocabulary).encode("utf-8"), dtype=np.uint8)
        arrays: dict[str, Any] = {"vectors": self.vectors, "vocabulary": vocabulary}
        if self.scales is not None:
            arrays["scales"] = self.scales
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> WordVectors:
        """Vectors written by :meth:`to_bytes` (``ValueError`` if they are not)."""
        arrays = read_npz(data, ("vectors", "vocabulary"), "a word-vector file", ("scales",))
        vectors, raw, scales = arrays["vectors"], arrays["vocabulary"], arrays.get("scales")
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError(f"the vocabulary is {raw.dtype} of {raw.ndim} dimensions, not bytes")
        kinds = (np.int8,) if scales is not None else (np.float16, np.float32)
        if vectors.ndim != 2 or vectors.dtype not in kinds:
            raise ValueError(
                f"word vectors must be a float16 or float32 matrix (int8 with scales), not "
                f"{vectors.dtype} of shape {vectors.shape}"
            )
        if scales is not None and (
            scales.dtype != np.float32
            or scales.shape != (len(vectors),)
            or not np.all(np.isfinite(scales))
        ):
            raise ValueError("the scales of int8 word vectors must be finite, one a word")
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
        return cls(vocabulary, vectors, scales)

    @property
    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {w: i for i, w in enumerate(self.vocabulary)}
            object.__setattr__(self, "_index_cache", cached)
        return cached

    @property
    def _table(self) -> np.ndarray:
        """The vectors as float32 (an int8 one times its scale), then a zero row for unknown
        words: a lookup is one gather, which segmenting a single query waits on."""
        cached = self.__dict__.get("_table_cache")
        if cached is None:
            # written in place (a new array per step cost a start twice the time)
            cached = np.empty((len(self.vectors) + 1, self.dimensions), dtype=np.float32)
            cached[-1] = 0.0
            cached[:-1] = self.vectors
            if self.scales is not None:
                cached[:-1] *= self.scales[:, None]
            object.__setattr__(self, "_table_cache", cached)
        return cached

    def __deepcopy__(self, memo: dict[int, Any]) -> WordVectors:
        return self  # immutable: shared, like a memory-mapped store
