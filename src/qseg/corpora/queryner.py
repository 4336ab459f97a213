"""Reader for QueryNER (Palen-Michel et al., LREC-COLING 2024): e-commerce queries whose tokens
carry BIO tags of typed spans. Spans are segments; an ``O`` token or a stray ``I-`` tag starts a
segment of its own, so every query has a complete flat segmentation. Tokens are normalized as
queries are: a token that leaves no word (the ``|`` in one training example) is dropped, a
token that leaves several words keeps them in its segment."""

from __future__ import annotations

import json
from dataclasses import dataclass

from qseg.errors import InputError
from qseg.fileio import StrPath, read_lines
from qseg.query import words_of
from qseg.segmentation import Segmentation


@dataclass(frozen=True)
class TypedQuery:
    """One QueryNER example: its segmentation and the type of each segment."""

    ident: str
    segmentation: Segmentation
    types: tuple[str, ...]


def spans_of(labels: list[str]) -> list[tuple[int, int, str]]:
    """``(start, end, type)`` of every segment of a BIO label sequence."""
    spans: list[tuple[int, int, str]] = []
    for i, label in enumerate(labels):
        kind = label[2:] if label[:2] in ("B-", "I-") else "O"
        continues = label.startswith("I-") and spans and spans[-1][2] == kind and spans[-1][1] == i
        if continues:
            start, _, _ = spans[-1]
            spans[-1] = (start, i + 1, kind)
        else:
            spans.append((i, i + 1, kind))
    return spans


def read_queryner(path: StrPath) -> dict[str, TypedQuery]:
    """Example id -> typed segmentation, in file order, from a QueryNER ``.jsonl`` file."""
    source = str(path)
    result: dict[str, TypedQuery] = {}
    for lineno, line in read_lines(path):
        try:
            record = json.loads(line)
            ident = str(record["example_id"])
            tokens, labels = record["tokens"], record["labels"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise InputError(
                source, lineno, "expected a JSON object with example_id, tokens, labels"
            ) from None
        if (
            not isinstance(tokens, list)
            or not isinstance(labels, list)
            or len(tokens) != len(labels)
        ):
            raise InputError(source, lineno, "tokens and labels must be lists of equal length")
        words: list[str] = []
        word_labels: list[str] = []
        for token, label in zip(tokens, labels, strict=True):
            parts = words_of(str(token))
            if not parts:
                continue
            words += parts
            label = str(label)
            word_labels += [label] + ["I-" + label[2:] if label != "O" else "O"] * (len(parts) - 1)
        if not words:
            raise InputError(source, lineno, "the query has no words")
        if ident in result:
            raise InputError(source, lineno, f"duplicate example id {ident!r}")
        spans = spans_of(word_labels)
        segments = [words[a:b] for a, b, _ in spans]
        result[ident] = TypedQuery(
            ident, Segmentation.from_segments(segments), tuple(t for _, _, t in spans)
        )
    if not result:
        raise InputError(source, None, "no records in file (it is empty)")
    return result
