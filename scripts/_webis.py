"""The Webis-QSeC-10 training set as the supervised scripts read it (``python scripts/NAME.py``
puts this folder on the import path)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from qseg.corpora.webis import Reference, aligned_tags, read_tags, read_votes
from qseg.resources.bundle import Resources

PREFIX = "webis-qsec-10-training-set-"


@dataclass(frozen=True)
class WebisTraining:
    """The votes, each query's words and aligned POS tags, and the corpus's own resources."""

    folder: Path
    votes: dict[str, list[Reference]]
    words: dict[str, tuple[str, ...]]
    tags: dict[str, Sequence[str] | None]
    ngram_file: Path
    resources: Resources


def load_webis_training(shared: Path) -> WebisTraining:
    """Read the training set under ``shared/data`` (tags aligned to the words; 127 queries,
    tokenized differently, get none)."""
    folder = shared / "data" / "webis-qsec-10-training"
    data = folder / "data"
    votes = read_votes(folder / f"{PREFIX}segmentations-crowdsourced.txt")
    words = {k: v[0].segmentation.words for k, v in votes.items()}
    tag_map = read_tags(data / f"{PREFIX}queries-pos-tagged.txt")
    tags = {k: aligned_tags(words[k], tag_map.get(k)) for k in votes}
    ngram_file = data / f"{PREFIX}n-gram-web-frequencies-google.txt"
    resources = Resources.load(
        ngrams=ngram_file, titles=data / f"{PREFIX}n-gram-wikipedia-titles.txt"
    )
    return WebisTraining(folder, votes, words, tags, ngram_file, resources)
