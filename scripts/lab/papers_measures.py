"""The figures of docs/papers.md that qseg computes here: the rule-based methods on
Webis-QSeC-10 with the corpus's resources and the built-in ones, the tuned thresholds, the
query-log methods on a small log and the SVM's cross-validation (about a minute; the other
figures are read from the pages the other reports write)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from _logs import write_demo_log
from _qseg import evaluate, qseg

from qseg.corpora.webis import TRAINING_PREFIX as PREFIX
from qseg.corpora.webis import read_training_set
from qseg.evaluation.cross_validation import cross_validate
from qseg.evaluation.matching import evaluate as evaluate_outputs
from qseg.resources.bundle import Resources
from qseg.segmenters.registry import create

PAPER_000_TAUS = {"PMI-W": 8.141, "PMI-Q": 0.156}


def tuned(*arguments: str) -> dict[str, str]:
    line = qseg("tune", *arguments).strip()
    fields = line.split("\t")
    found = dict(f.split("=", 1) for f in fields if "=" in f and not f.startswith("phrases"))
    if fields[0].startswith("phrases"):
        found["spec"] = fields[0]
    return found


def svm_figures(shared: Path) -> dict[str, dict]:
    """5-fold cross-validation (fold split 0, majority) of paper 004's SVM on Webis."""
    webis = read_training_set(shared / "data" / "webis-qsec-10-training")
    resources = Resources.load(ngrams=webis.ngram_file, titles=webis.titles_file)
    figures = {}
    for spec in ("features(classifier=svm)", "features(classifier=svm, pair_counts=true)"):
        outputs = cross_validate(
            lambda spec=spec: create(spec, resources).set_params(n_jobs=2),
            webis.votes,
            webis.tags,
            k=5,
            seed=0,
        )
        s = evaluate_outputs({spec: outputs}, webis.votes)[0]
        figures[spec] = {"query_accuracy": s.query_accuracy, "break_accuracy": s.break_accuracy}
        print(spec, f"{s.query_accuracy:.3f} / {s.break_accuracy:.3f}", flush=True)
    return figures


def measure(shared: Path) -> dict[str, Any]:
    """Every figure the page computes (JSON-able: ``qseg evaluate``'s records by name)."""
    corpus = shared / "data" / "webis-qsec-10-training"
    if not corpus.exists():
        raise SystemExit(f"Webis-QSeC-10 not found at {corpus}; pass --shared")
    gold = corpus / f"{PREFIX}segmentations-crowdsourced.txt"
    data = corpus / "data"
    paper_resources = [
        "--ngrams", str(data / f"{PREFIX}n-gram-web-frequencies-google.txt"),
        "--titles", str(data / f"{PREFIX}n-gram-wikipedia-titles.txt"),
        "--unigrams", str(data / f"{PREFIX}1-gram-web-frequencies-msn.txt"),
        "--bigrams", str(data / f"{PREFIX}2-gram-web-frequencies-msn.txt"),
    ]  # fmt: skip
    rules = {
        "naive": "naive",
        "wiki": "wiki",
        "pmi": "pmi",
        "always-split": "always-split",
        "never-split": "never-split",
    }
    corpus_runs = {
        protocol: evaluate(gold, rules, *paper_resources, protocol=protocol)
        for protocol in ("majority", "best-of")
    }
    print("rule-based methods on the corpus's resources", flush=True)
    pmi_w = tuned("pmi", "--gold", str(gold))
    phrases_default = tuned("phrases", "--gold", str(gold), "--scoring", "default")
    phrases_npmi = tuned("phrases", "--gold", str(gold), "--scoring", "npmi", "--connectors")
    builtin = evaluate(
        gold,
        {
            "PMI-W, paper tau": f"pmi(tau={PAPER_000_TAUS['PMI-W']})",
            "PMI-W, tuned": f"pmi(tau={pmi_w['tau']})",
            "phrases, default scorer, tuned": phrases_default["spec"],
            "phrases, npmi, tuned": phrases_npmi["spec"],
            "wiki-unseen": "wiki(unseen_titles=true)",
        },
    )
    print("baselines on the built-in resources", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.txt"
        lines = write_demo_log(log, shared)
        counts = Path(tmp) / "log.qseg"
        qseg("build", "ngrams", "--from", "text", "--max-order", "2", "--quiet", "-o", str(counts),
             str(log))  # fmt: skip
        pmi_q = tuned("pmi", "--gold", str(gold), "--ngrams", str(counts))
        logged = evaluate(
            gold,
            {
                "Mishra et al.": "querylog(wiki=false)",
                "Mishra et al. + Wiki": "querylog",
                "PMI-Q, paper tau": f"pmi(tau={PAPER_000_TAUS['PMI-Q']})",
                "PMI-Q, tuned": f"pmi(tau={pmi_q['tau']})",
            },
            "--query-log", str(log), "--ngrams", str(counts),
        )  # fmt: skip
    print("query-log methods", flush=True)
    return {
        "corpus_runs": corpus_runs,
        "builtin": builtin,
        "logged": logged,
        "log_lines": lines,
        "taus": {"PMI-W": pmi_w["tau"], "PMI-Q": pmi_q["tau"]},
        "svm": svm_figures(shared),
    }
