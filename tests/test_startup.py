"""Start-up stays light: the rule-based path never loads the heavy libraries.

(How long start-up takes is measured by ``benchmarks/startup.py``, not asserted here.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import toy

from qseg import models

HEAVY = (
    "sklearn",
    "xgboost",
    "torch",
    "transformers",
    "gensim",
    "duckdb",
    "pyspark",
    "tantivy",
    "ir_measures",
    "matplotlib",
    "scipy",
    "pandas",
    "pyarrow",
)

PROGRAM = """
import json, sys
import qseg
from qseg.cli import main

ngrams, titles, model = sys.argv[1:]
for method in ("naive", "wiki", "wiki(unseen_titles=true)"):
    seg = qseg.segmenter(method, ngrams=ngrams, titles=titles)
    seg.segment("new york yankees tickets")
    seg.rank("new york yankees tickets", 3)
for method in ("naive", "wiki", model):
    main(["segment", "--method", method, "--ngrams", ngrams, "--titles", titles, "a b c"])
print(json.dumps(sorted(sys.modules)))
"""


def test_segmenting_loads_no_heavy_library(write, tmp_path):
    """Rule-based methods and a saved model (its trees are arrays) from Python and the CLI."""
    counts = toy.resources().ngrams
    ngrams = write("counts.txt", "".join(f"{k}\t{v}\n" for k, v in counts.items()))
    titles = write("titles.txt", "\n".join(toy.PHRASES) + "\n")
    model = tmp_path / "m.qseg"
    models.save(toy.train(toy.TRAINED_SPECS["joint"]), model)
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(ngrams), str(titles), str(model)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert {
        "qseg.segmenters.rules.wiki",
        "qseg.cli.segment",
        "qseg.segmenters.learned.break_model",
    } <= loaded
    assert {m.split(".")[0] for m in loaded} & set(HEAVY) == set()
    # and the command line configured only the command it ran
    assert not {"qseg.cli.ir_eval", "qseg.cli.agree", "qseg.cli.train"} & loaded
