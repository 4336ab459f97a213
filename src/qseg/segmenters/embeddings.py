"""Word vectors for the embedding features of paper 002, trained by qseg with gensim.

The corpus is a text file the user gives: one query or sentence a line, or ``ngram<TAB>count``
lines (a Web1T-style count file, such as a query log's n-gram counts), where an n-gram stands
for ``1 + round(log2(count))`` sentences so that frequent n-grams weigh more without drowning
the rest. Vectors are kept as a plain matrix so that a model file holds them without gensim.
The built-in vectors of the DBpedia names (:func:`qseg.resources.default.default_name_vectors`)
are trained by :func:`train_word_vectors` too and kept in half precision: half the size in the
model files that carry them, for the same cross-validated accuracy (0.8447 against 0.8449).
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, read_lines
from qseg.query import words_of
from qseg.segmenters import _word2vec


@dataclass(frozen=True)
class WordVectors:
    """Vectors of a vocabulary; unknown words get the zero vector."""

    vocabulary: tuple[str, ...]
    vectors: np.ndarray

    @property
    def dimensions(self) -> int:
        return int(self.vectors.shape[1])

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
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                vectors, raw = npz["vectors"], npz["vocabulary"].tobytes()
        except (OSError, KeyError, EOFError, ValueError) as exc:
            raise ValueError(f"not a word-vector file ({exc})") from None
        vocabulary = tuple(raw.decode("utf-8").split("\n")) if raw else ()
        if vectors.ndim != 2 or len(vocabulary) != len(vectors):
            raise ValueError("word vectors and vocabulary do not match")
        return cls(vocabulary, vectors)

    @property
    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {w: i for i, w in enumerate(self.vocabulary)}
            object.__setattr__(self, "_index_cache", cached)
        return cached


class _Sentences:
    """A re-iterable corpus for gensim (it reads the file once per epoch)."""

    def __init__(self, path: StrPath) -> None:
        self.path = path

    def __iter__(self) -> Iterator[list[str]]:
        source = str(self.path)
        for lineno, line in read_lines(self.path):
            text, tab, count = line.partition("\t")
            words = list(words_of(text.lower()))
            if not words:
                continue
            repeat = 1
            if tab:
                try:
                    value = int(count)
                except ValueError:
                    raise InputError(source, lineno, f"count {count!r} is not an integer") from None
                repeat = 1 + round(math.log2(value)) if value > 1 else 1
            for _ in range(repeat):
                yield words


BLAS_CORE = "Prescott"
"""The OpenBLAS kernels word2vec is trained with: the baseline x86-64 ones, which every such CPU
runs. gensim's word2vec adds up with BLAS, and OpenBLAS otherwise picks the kernels of the CPU
it finds (AVX-512, AVX2, ...), whose sums round differently: the same corpus and seed gave other
vectors, and other cross-validated figures, on another machine."""


def train_word_vectors(
    corpus: StrPath,
    *,
    dimensions: int = 50,
    window: int = 2,
    epochs: int = 5,
    min_count: int = 1,
    seed: int = 0,
) -> WordVectors:
    """Skip-gram word2vec on ``corpus`` (paper 002 trains word2vec with a window of 2-3).

    Trained in a child process on one worker thread with the :data:`BLAS_CORE` kernels, so the
    vectors are the same on every run with the same seed, on any x86-64 machine (OpenBLAS reads
    its kernel choice only when it loads, hence the child).
    """
    sentences = _Sentences(corpus)
    if next(iter(sentences), None) is None:
        raise InputError(str(corpus), None, "the embedding corpus has no words")
    settings = {
        "dimensions": dimensions,
        "window": window,
        "epochs": epochs,
        "min_count": min_count,
        "seed": seed,
    }
    with tempfile.TemporaryDirectory(prefix="qseg-word2vec-") as folder:
        out = Path(folder) / "vectors.npz"
        done = subprocess.run(
            [sys.executable, "-m", "qseg.segmenters._word2vec", str(corpus), str(out)],
            input=json.dumps(settings),
            capture_output=True,
            text=True,
            env={**os.environ, "OPENBLAS_CORETYPE": BLAS_CORE},
            check=False,
        )
        if done.returncode == _word2vec.INPUT_ERROR:
            raise InputError(**json.loads(done.stdout))
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise QsegError(f"training word vectors on {corpus} failed: {last}")
        return WordVectors.from_bytes(out.read_bytes())


def train_here(corpus: StrPath, settings: dict[str, int]) -> WordVectors:
    """What :func:`train_word_vectors` runs in its child process."""
    from gensim.models import Word2Vec

    model = Word2Vec(
        _Sentences(corpus),
        vector_size=settings["dimensions"],
        window=settings["window"],
        min_count=settings["min_count"],
        sg=1,
        workers=1,
        epochs=settings["epochs"],
        seed=settings["seed"],
    )
    vocabulary = tuple(model.wv.index_to_key)
    return WordVectors(vocabulary, np.asarray(model.wv.vectors, dtype=np.float32))
