"""Agreement of a project's annotators while they work: the figures ``qseg agree`` gives on
the project's export (Ramanath et al. 2013's alpha with d1/d2 and S, bootstrap intervals), the bias
statistics overall and per annotator, and the queries they agree on least.

Everything is computed by :mod:`qseg.evaluation.agreement`, :mod:`.agreement_report` and
:mod:`.bias` on the annotations exactly as the export holds them (same items, same order),
so the page and ``qseg agree`` on the export give the same numbers.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter
from typing import Any

from qseg.annotation.project import Project, parse_answer
from qseg.corpora.annotations import Annotation, Annotations
from qseg.errors import AgreementError
from qseg.evaluation import random_model
from qseg.evaluation.agreement import distance
from qseg.evaluation.agreement_report import default_powers, measure
from qseg.evaluation.bias import bias_statistics, bias_tables, random_spread
from qseg.segmentation import Segmentation

LOWEST = 10
"""How many of the least agreed queries the summary lists."""


def project_annotations(project: Project, mode: str) -> Annotations:
    """Each annotator's latest answers, by query, in the order of the export."""
    annotations: Annotations = {}
    for qid, annotator, value in project.answers(mode):
        annotations.setdefault(qid, []).append(Annotation(annotator, parse_answer(mode, value)))
    return annotations


def summarize(
    project: Project,
    mode: str,
    replicates: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, Any]:
    """The agreement page's content, JSON-ready."""
    annotations = project_annotations(project, mode)
    shared = {k: v for k, v in annotations.items() if len(v) >= 2}
    summary: dict[str, Any] = {
        "mode": mode,
        "queries": project.query_count(),
        "answered": len(annotations),
        "shared": len(shared),
        "answers": sum(len(v) for v in annotations.values()),
        "replicates": replicates,
        "confidence": confidence,
        "seed": seed,
        "agreement": [],
        "error": None,
    }
    if annotations:
        try:
            scoped = measure(
                annotations, default_powers(annotations), False, replicates, confidence, seed
            )
            summary["agreement"] = [_finite(r.summary()) for _, r in scoped if r is not None]
        except AgreementError as exc:
            summary["error"] = str(exc)
    else:
        summary["error"] = "no answers yet"
    by_annotator: dict[str, list[Annotation]] = {}
    for annots in annotations.values():
        for annotation in annots:
            by_annotator.setdefault(annotation.annotator, []).append(annotation)
    summary["annotators"] = [_annotator(name, by_annotator[name]) for name in sorted(by_annotator)]
    summary["bias"] = [
        {"title": title, "header": header, "rows": rows}
        for title, header, rows in bias_tables(bias_statistics(annotations))
    ]
    summary["lowest"] = _lowest(project, shared)
    return summary


def _annotator(name: str, annots: list[Annotation]) -> dict[str, Any]:
    """One annotator's answers and biases: the share of gaps broken and the segments per
    query against the random model (flat), root heights against random binary trees
    (nested)."""
    row: dict[str, Any] = {"annotator": name, "answers": len(annots)}
    structures = [a.segmentation for a in annots]
    flat = [s for s in structures if isinstance(s, Segmentation)]
    if flat:
        gaps = sum(len(s.breaks) for s in flat)
        row["break_share"] = sum(sum(s.breaks) for s in flat) / gaps if gaps else None
        row["mean_segments"] = statistics.fmean(len(s.spans) for s in flat)
        row["random_segments"] = statistics.fmean((len(s.words) + 1) / 2 for s in flat)
        stats = bias_statistics({name: annots})
        spreads = [pair for pairs in stats.spreads.values() for pair in pairs]
        if spreads:
            row["mean_sd"] = statistics.fmean(sd for _, sd in spreads)
            row["random_sd"] = statistics.fmean(
                random_spread(n, k) for k, pairs in stats.spreads.items() for n, _ in pairs
            )
        positions: Counter[str] = Counter()
        for counts in stats.prepositions.values():
            positions.update(counts)
        inside = sum(positions[p] for p in ("both", "none", "left", "right"))
        if inside:
            row["preposition_both"] = positions["both"] / inside
            row["preposition_none"] = positions["none"] / inside
    trees = [s for s in structures if not isinstance(s, Segmentation) and len(s.words) >= 2]
    if trees:
        row["mean_height"] = statistics.fmean(t.height for t in trees)
        expected = [
            float(random_model.expected_height(len(t.words)))
            for t in trees
            if len(t.words) <= random_model.MAX_NESTED_WORDS
        ]
        row["random_height"] = statistics.fmean(expected) if expected else None
    return row


def _lowest(project: Project, shared: Annotations) -> list[dict[str, Any]]:
    """The queries whose annotators agree least: ``1 -`` the mean d1 over pairs of answers."""
    queries = project.queries()
    texts = dict(queries)
    position = {qid: index for index, (qid, _) in enumerate(queries)}
    scored = []
    for qid, annots in shared.items():
        if len(annots[0].segmentation.words) < 2:
            continue
        pairs = itertools.combinations([a.segmentation for a in annots], 2)
        agreement = 1 - statistics.fmean(distance(a, b) for a, b in pairs)
        scored.append((agreement, qid, annots))
    scored.sort(key=lambda entry: entry[0])
    return [
        {
            "qid": qid,
            "index": position[qid],
            "text": texts[qid],
            "agreement": agreement,
            "answers": [{"annotator": a.annotator, "value": str(a.segmentation)} for a in annots],
        }
        for agreement, qid, annots in scored[:LOWEST]
    ]


def _finite(record: dict[str, Any]) -> dict[str, Any]:
    """NaN (an undefined bootstrap bound) as ``None``: JSON has no NaN."""
    return {
        k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in record.items()
    }
