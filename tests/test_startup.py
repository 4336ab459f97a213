"""Start-up stays light: the rule-based path never loads the heavy libraries.

(How long start-up takes is measured by ``benchmarks/startup.py``, not asserted here.)
"""

from __future__ import annotations

import json
import subprocess
import sys

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

ngrams, titles = sys.argv[1:]
for method in ("naive", "wiki", "wiki(unseen_titles=true)"):
    seg = qseg.segmenter(method, ngrams=ngrams, titles=titles)
    seg.segment("new york yankees tickets")
    seg.rank("new york yankees tickets", 3)
for method in ("naive", "wiki"):
    main(["segment", "--method", method, "--ngrams", ngrams, "--titles", titles, "a b c"])
print(json.dumps(sorted(sys.modules)))
"""


def test_rule_based_segmenting_loads_no_heavy_library(write):
    ngrams = write("counts.txt", "new york\t100\nnew york yankees\t10\nyankees tickets\t2\n")
    titles = write("titles.txt", "new york yankees\n")
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(ngrams), str(titles)],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert "qseg.segmenters.wiki" in loaded and "qseg.cli.segment" in loaded
    assert {m.split(".")[0] for m in loaded} & set(HEAVY) == set()
    # and the command line configured only the command it ran
    assert not {"qseg.cli.ir_eval", "qseg.cli.agree", "qseg.cli.train"} & loaded
