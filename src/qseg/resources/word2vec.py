"""Word vectors for the embedding features of paper 002, trained by qseg with gensim.

The corpus is a text file the user gives: one query or sentence a line, or ``ngram<TAB>count``
lines (a Web1T-style count file, such as a query log's n-gram counts), where an n-gram stands
for ``1 + round(log2(count))`` sentences so that frequent n-grams weigh more without drowning
the rest. The built-in vectors of the DBpedia names
(:func:`qseg.resources.default.default_name_vectors`) are trained by :func:`train_word_vectors`
too and kept in half precision: half the size in the model files that carry them, for the same
cross-validated accuracy (0.8447 against 0.8449).

Training runs in a child process, ``python -m qseg.resources.word2vec CORPUS OUT``, which
reads the settings (JSON) on stdin and writes the vectors to OUT; bad corpus content exits
with :data:`INPUT_ERROR` and the error as JSON on stdout, so the parent raises the same error.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from qseg.errors import InputError, QsegError
from qseg.fileio import StrPath, atomic_write_bytes, read_lines
from qseg.query import words_of
from qseg.resources.vectors import WordVectors

INPUT_ERROR = 3
"""Exit status of the child process for bad corpus content."""

BLAS_CORE = "Prescott"
"""The OpenBLAS kernels word2vec is trained with: the baseline x86-64 ones, which every such CPU
runs. gensim's word2vec adds up with BLAS, and OpenBLAS otherwise picks the kernels of the CPU
it finds (AVX-512, AVX2, ...), whose sums round differently: the same corpus and seed gave other
vectors, and other cross-validated figures, on another machine."""


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
            [sys.executable, "-m", __name__, str(corpus), str(out)],
            input=json.dumps(settings),
            capture_output=True,
            text=True,
            env={**os.environ, "OPENBLAS_CORETYPE": BLAS_CORE},
            check=False,
        )
        if done.returncode == INPUT_ERROR:
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


def _child(argv: list[str]) -> int:
    corpus, out = argv
    try:
        vectors = train_here(corpus, json.loads(sys.stdin.read()))
    except InputError as exc:
        print(json.dumps({"source": exc.source, "line": exc.line, "message": exc.reason}))
        return INPUT_ERROR
    atomic_write_bytes(out, vectors.to_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
