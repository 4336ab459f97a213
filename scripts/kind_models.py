"""One model per kind of query: each style's figures, the router's accuracy, a candidate's size.

Measures routed recipes of ``_recipes`` (Webis 5-fold cross-validation, fold split 0, majority
protocol; QueryNER dev) in each style from the same models, by name:

- ``routing``: the router's accuracy by cross-validation (:func:`_recipes.routing_accuracy`);
- ``plain``: one model per kind with v3's inputs (:data:`_recipes.V4_PLAIN`);
- ``contextual``: v4's recipe with the contextual probe (:data:`_recipes.V4_CONTEXTUAL`);
- ``names-mM-fF-cC-wW``: one model per kind with name statistics of minimum count M, F
  fingerprint bits and C count bits and the vectors of the W most frequent words (0: all),
  as a model carries them (:func:`_recipes.with_names`);
- ``size:RECIPE``: that recipe trained on all queries and saved as one file carrying what it
  runs on, with the size of each member (the file is written to ``--out``).

    python scripts/kind_models.py routing plain names-m2-f12-c8-w100000
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # a spinning second BLAS thread slows training 5x

import argparse  # noqa: E402
import zipfile  # noqa: E402
from pathlib import Path  # noqa: E402

from lab import recipes as R  # noqa: E402

from qseg import models  # noqa: E402


def recipe(name: str) -> R.RoutedRecipe:
    """The routed recipe a name stands for (see the module docstring)."""
    if name == "plain":
        return R.V4_PLAIN
    if name == "contextual":
        return R.V4_CONTEXTUAL
    parts = name.split("-")
    if len(parts) != 5 or parts[0] != "names":
        raise SystemExit(f"unknown recipe {name!r}: plain, or names-mM-fF-cC-wW")
    m, f, c, w = (int(part[1:]) for part in parts[1:])
    return R.with_names(name, m, f, c, w or None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="+", help="routing, plain, names-..., size:RECIPE")
    parser.add_argument("--shared", type=Path, default=R.SHARED)
    parser.add_argument("--out", type=Path, default=Path("."), help="where size: writes")
    args = parser.parse_args()
    corpora = R.Corpora.read(args.shared)
    for name in args.names:
        if name == "routing":
            found = R.routing_accuracy(corpora)
            print("routing", " ".join(f"{k} {v:.3f}" for k, v in found.items()), flush=True)
        elif name.startswith("size:"):
            model = recipe(name[5:]).fit(corpora.webis_votes, corpora)
            path = args.out / f"{name[5:]}.qseg"
            models.save(model, path, carry_titles=True, carry_names=True)
            print(f"{path}: {path.stat().st_size:,} bytes", flush=True)
            with zipfile.ZipFile(path) as zf:
                for info in zf.infolist():
                    print(f"  {info.filename}: {info.compress_size:,} bytes", flush=True)
        else:
            for style, scores in R.measure_styles(recipe(name), corpora).items():
                print(
                    f"{name} style={style}: web {scores.webis_query:.4f} "
                    f"({scores.webis_break:.4f}), product {scores.queryner_query:.4f} "
                    f"({scores.queryner_break:.4f}), {scores.seconds:.0f} s",
                    flush=True,
                )


if __name__ == "__main__":
    main()
