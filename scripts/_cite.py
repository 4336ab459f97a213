"""The papers as the report pages cite them: the scripts say "paper 003" (the numbering of
``../shared/papers`` and DESIGN.md); a page a newcomer reads names the paper and links its
section of docs/papers.md: "[Hagen et al. 2011](papers.md#paper-003-...)"."""

from __future__ import annotations

import re
from collections.abc import Callable

PAPERS = {
    "000": ("Saha Roy et al. 2012", "saha-roy-et-al-an-ir-based-evaluation-framework-sigir-2012"),
    "001": (
        "Ramanath et al. 2013",
        "ramanath-et-al-agreement-of-flat-and-nested-segmentations-acl-2013",
    ),
    "002": ("Kale et al. 2017", "kale-et-al-word-embeddings-for-query-segmentation-neu-ir-2017"),
    "003": ("Hagen et al. 2011", "hagen-et-al-query-segmentation-revisited-www-2011"),
    "004": (
        "Bergsma and Wang 2007",
        "bergsma-and-wang-noun-phrase-query-segmentation-a-thesis-chapter",
    ),
}
"""Each paper's short citation and the anchor of its section of docs/papers.md (after
``paper-NNN-``)."""

_PAIR = re.compile(r"\b[Pp]apers (00\d) and (00\d)\b")
_ONE = re.compile(r"\b[Pp]aper (00\d)\b")


def cite(page: str, papers_page: str = "papers.md") -> str:
    """``page`` (markdown) with each "paper NNN" as its citation, linked but in headings,
    left as it is in code blocks (what a command prints), the provenance line and the
    papers' own headings."""

    def named(number: str, link: bool) -> str:
        name, anchor = PAPERS[number]
        return f"[{name}]({papers_page}#paper-{number}-{anchor})" if link else name

    lines, fenced = [], False
    for line in page.splitlines(keepends=True):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not (fenced or line.startswith(("## Paper 00", "Provenance:"))):
            line = _cited(line, named, link=not line.startswith("#"))  # headings: unlinked
        lines.append(line)
    return "".join(lines)


def _cited(line: str, named: Callable[[str, bool], str], *, link: bool) -> str:
    line = _PAIR.sub(lambda m: f"{named(m[1], link)} and {named(m[2], link)}", line)
    return _ONE.sub(lambda m: named(m[1], link), line)
