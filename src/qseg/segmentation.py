"""The value types of qseg: flat and nested segmentations of a query, and their text forms.

A flat :class:`Segmentation` is the words of a query plus one break bit per gap (bit ``i`` is 1
iff a segment ends after word ``i``), as in paper 001, section 4.1. It converts losslessly to and
from pipe text (``new york|yankees tickets``), quoted text (``"new york" "yankees tickets"``; a
one-word segment is never quoted), segment lists and break vectors.

A :class:`NestedSegmentation` is a tree over the words, written in bracket text
(``((new york) yankees)``) and described by the boundary heights of paper 001: 0 between the
words of an atomic node, otherwise 1 + the largest height of the subtrees that meet there
(a single word counts as height -1). Paper 001's trees are binary; trees with wider nodes, as
some published resources have, follow the same rule.

Words are always in the normal form of :func:`qseg.query.normalize`; the parsers normalize
what they read, so ``Segmentation.from_pipe(s.to_pipe()) == s`` for every segmentation ``s``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, Self, TypeVar

from qseg.errors import QsegError
from qseg.query import QueryError, normalize


class SegmentationError(QsegError):
    """Text or values that do not describe a valid segmentation."""


def _check_words(words: tuple[str, ...]) -> None:
    if not words:
        raise SegmentationError("a segmentation needs at least one word")
    for word in words:
        if not isinstance(word, str) or normalize(word) != (word,):
            raise SegmentationError(
                f'{word!r} is not a normalized word (lower case, no whitespace, none of |"())'
            )


def break_spans(breaks: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """The segments of ``len(breaks) + 1`` words as half-open ranges ``(start, end)``."""
    spans = []
    start = 0
    for i, bit in enumerate(breaks):
        if bit:
            spans.append((start, i + 1))
            start = i + 1
    spans.append((start, len(breaks) + 1))
    return tuple(spans)


def quoted_text(segment_texts: Iterable[str]) -> str:
    """Segments' texts as quoted text: ``"new york" yankees``."""
    return " ".join(f'"{text}"' if " " in text else text for text in segment_texts)


class _Frozen:
    """Base of the immutable value types: set once in the constructor, compared by value."""

    __slots__ = ()

    def _value(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._value() == other._value()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._value())

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the constructor's arguments (``copy`` and ``pickle`` would set slots)."""
        return type(self), self._value()

    def __copy__(self) -> Self:
        return self  # immutable: a copy is the value itself

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self


class Segmentation(_Frozen):
    """A flat segmentation: words plus break bits, immutable and hashable."""

    __slots__ = ("breaks", "words")
    words: tuple[str, ...]
    breaks: tuple[int, ...]

    def __init__(self, words: Sequence[str], breaks: Sequence[int]) -> None:
        words = tuple(words)
        _check_words(words)
        bits = tuple(breaks)
        if len(bits) != len(words) - 1:
            raise SegmentationError(
                f"{len(words)} words need {len(words) - 1} break bits, got {len(bits)}"
            )
        if any(b not in (0, 1) or isinstance(b, bool) for b in bits):
            raise SegmentationError(f"break bits must be 0 or 1, got {list(bits)}")
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "breaks", bits)

    @classmethod
    def _trusted(cls, words: tuple[str, ...], breaks: tuple[int, ...]) -> Segmentation:
        """Build without validation; for decoders whose words come from :func:`normalize`."""
        seg = object.__new__(cls)
        _set_words(seg, words)
        _set_breaks(seg, breaks)
        return seg

    # -- constructors from the other forms -------------------------------------------------

    @classmethod
    def from_segments(cls, segments: Iterable[str | Sequence[str]]) -> Segmentation:
        """Build from segments given as text (``"new york"``) or as word sequences."""
        words: list[str] = []
        breaks: list[int] = []
        for segment in segments:
            try:
                seg_words = normalize(segment) if isinstance(segment, str) else tuple(segment)
            except QueryError:
                seg_words = ()
            if not seg_words:
                raise SegmentationError("a segment must contain at least one word")
            if words:
                breaks.append(1)
            breaks.extend([0] * (len(seg_words) - 1))
            words.extend(seg_words)
        return cls(words, breaks)

    @classmethod
    def from_pipe(cls, text: str) -> Segmentation:
        """Parse pipe text: segments separated by ``|``, words by whitespace."""
        parts = text.split("|")
        if any(not part.strip() for part in parts):
            raise SegmentationError(f"empty segment in pipe text {text!r}")
        return cls.from_segments(parts)

    @classmethod
    def from_quoted(cls, text: str) -> Segmentation:
        """Parse quoted text: each quoted phrase is a segment, each unquoted word its own."""
        pieces = text.split('"')
        if len(pieces) % 2 == 0:
            raise SegmentationError(f"unbalanced quotes in {text!r}")
        segments: list[str] = []
        for i, piece in enumerate(pieces):
            if i % 2:
                if not piece.strip():
                    raise SegmentationError(f"empty quoted phrase in {text!r}")
                segments.append(piece)
            else:
                segments.extend(piece.split())
        if not segments:
            raise SegmentationError(f"no words in {text!r}")
        return cls.from_segments(segments)

    # -- views -----------------------------------------------------------------------------

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Segments as half-open word index ranges ``(start, end)``."""
        return break_spans(self.breaks)

    @property
    def segments(self) -> tuple[tuple[str, ...], ...]:
        """Segments as word tuples."""
        return tuple(self.words[a:b] for a, b in self.spans)

    @property
    def segment_texts(self) -> tuple[str, ...]:
        """Segments as space-joined text."""
        return tuple(" ".join(self.words[a:b]) for a, b in self.spans)

    @property
    def query(self) -> str:
        """The unsegmented query text."""
        return " ".join(self.words)

    def to_pipe(self) -> str:
        """Pipe text, the Webis corpus form: ``new york|yankees tickets``."""
        return "|".join(self.segment_texts)

    def to_quoted(self) -> str:
        """Quoted text as typed into a search engine; one-word segments stay unquoted."""
        return quoted_text(self.segment_texts)

    def _value(self) -> tuple[Any, ...]:
        return self.words, self.breaks

    def __str__(self) -> str:
        return self.to_pipe()

    def __repr__(self) -> str:
        return f"Segmentation.from_pipe({self.to_pipe()!r})"


# The slot setters, which bypass the immutability guard (for Segmentation._trusted, a hot path).
_set_words = Segmentation.__dict__["words"].__set__
_set_breaks = Segmentation.__dict__["breaks"].__set__

_BRACKET_TOKEN = re.compile(r"\(|\)|[^\s()]+")
T = TypeVar("T")


class NestedSegmentation(_Frozen):
    """A tree over the words of a query, described by its boundary heights.

    Paper 001 asks annotators for binary trees; trees from other sources may have nodes with
    more than two children (``(new york yankees)``). The heights describe both: the boundaries
    between the children of one node all get that node's height.
    """

    __slots__ = ("heights", "words")
    words: tuple[str, ...]
    heights: tuple[int, ...]

    def __init__(self, words: Sequence[str], heights: Sequence[int]) -> None:
        words = tuple(words)
        _check_words(words)
        hs = tuple(heights)
        if len(hs) != len(words) - 1:
            raise SegmentationError(
                f"{len(words)} words need {len(words) - 1} boundary heights, got {len(hs)}"
            )
        if any(not isinstance(h, int) or isinstance(h, bool) or h < 0 for h in hs):
            raise SegmentationError(f"boundary heights must be non-negative integers: {hs}")
        _fold(hs, lambda i: None, lambda kids: None)  # raises if no tree has these heights
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "heights", hs)

    @classmethod
    def from_brackets(cls, text: str) -> NestedSegmentation:
        """Parse bracket text; a bracket pair joins two or more parts, or wraps just one.

        A pair around a single part (``((new) york)``) changes nothing and is dropped, so
        ``(new)`` is the same as ``new``.
        """
        words: list[str] = []
        heights: list[int] = []
        # stack items: None for "(", or (last word index, height) of a finished part
        stack: list[tuple[int, int] | None] = []
        for token in _BRACKET_TOKEN.findall(text):
            if token == "(":
                stack.append(None)
            elif token == ")":
                parts: list[tuple[int, int]] = []
                while stack and (part := stack[-1]) is not None:
                    stack.pop()
                    parts.append(part)
                if not stack:
                    raise SegmentationError(f"unbalanced ')' in {text!r}")
                stack.pop()
                if not parts:
                    raise SegmentationError(f"empty brackets in {text!r}")
                parts.reverse()
                height = 1 + max(h for _, h in parts) if len(parts) > 1 else parts[0][1]
                for last, _ in parts[:-1]:
                    heights[last] = height
                stack.append((parts[-1][0], height))
            else:
                try:
                    (word,) = normalize(token)
                except (QueryError, ValueError):
                    raise SegmentationError(f"{token!r} is not a word in {text!r}") from None
                if words:
                    heights.append(-1)
                words.append(word)
                stack.append((len(words) - 1, -1))
        if None in stack:
            raise SegmentationError(f"unbalanced '(' in {text!r}")
        if len(stack) != 1:
            raise SegmentationError(
                f"bracket text must be one tree over all words, found {len(stack)} parts: {text!r}"
            )
        return cls(words, heights)

    @classmethod
    def from_tree(cls, tree: str | Sequence[Any]) -> NestedSegmentation:
        """Build from nested sequences of words, e.g. ``(("new", "york"), "yankees")``."""

        def render(node: str | Sequence[Any]) -> str:
            if isinstance(node, str):
                return node
            return "(" + " ".join(render(child) for child in node) + ")"

        return cls.from_brackets(render(tree))

    def to_brackets(self) -> str:
        """Bracket text: ``((new york) yankees)``."""
        return _fold(self.heights, self.words.__getitem__, _bracketed)

    @property
    def tree(self) -> str | tuple[Any, ...]:
        """The tree as nested tuples of words."""
        words = self.words

        def leaf(index: int) -> str | tuple[Any, ...]:
            return words[index]

        def node(kids: list[str | tuple[Any, ...]]) -> str | tuple[Any, ...]:
            return tuple(kids)

        return _fold(self.heights, leaf, node)

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """The word ranges ``(start, end)`` of its nodes (each word, each group, the whole
        query), in order of start, then of end."""
        found: set[tuple[int, int]] = set()

        def node(span: tuple[int, int]) -> tuple[int, int]:
            found.add(span)
            return span

        _fold(
            self.heights, lambda i: node((i, i + 1)), lambda kids: node((kids[0][0], kids[-1][1]))
        )
        return tuple(sorted(found))

    @property
    def is_binary(self) -> bool:
        """True iff every node joins exactly two parts (the trees of paper 001)."""
        return _fold(self.heights, lambda i: True, lambda kids: len(kids) == 2 and all(kids))

    @property
    def height(self) -> int:
        """Height of the root node (0 for a pair of words, -1 for a single word)."""
        return max(self.heights, default=-1)

    def _value(self) -> tuple[Any, ...]:
        return self.words, self.heights

    def __str__(self) -> str:
        return self.to_brackets()

    def __repr__(self) -> str:
        return f"NestedSegmentation.from_brackets({self.to_brackets()!r})"


def _bracketed(kids: list[str]) -> str:
    return f"({' '.join(kids)})"


def _fold(heights: tuple[int, ...], leaf: Callable[[int], T], join: Callable[[list[T]], T]) -> T:
    """Fold the tree that ``heights`` describe bottom-up, in one pass and without recursion.

    Boundaries are read left to right; a stack keeps the open nodes, whose heights fall from
    bottom to top. Raises :class:`SegmentationError` when no tree has these heights.
    """
    current, current_height = leaf(0), -1
    # open nodes: [height, children so far, tallest child so far]
    stack: list[list[Any]] = []

    def close() -> None:
        nonlocal current, current_height
        height, kids, tallest = stack.pop()
        tallest = max(tallest, current_height)
        if height != tallest + 1:
            raise SegmentationError(f"heights {list(heights)} do not describe a tree")
        kids.append(current)
        current, current_height = join(kids), height

    for i, height in enumerate(heights):
        while stack and stack[-1][0] < height:
            close()
        if stack and stack[-1][0] == height:
            stack[-1][1].append(current)
            stack[-1][2] = max(stack[-1][2], current_height)
        else:
            stack.append([height, [current], current_height])
        current, current_height = leaf(i + 1), -1
    while stack:
        close()
    return current


@dataclass(frozen=True)
class Reference:
    """One distinct reference segmentation of a query and how many annotators gave it."""

    segmentation: Segmentation
    votes: int


Target = Segmentation | Sequence[Reference]
"""A training label: one segmentation, or annotators' segmentations with their votes."""


def target_words(target: Target) -> tuple[str, ...]:
    """The words of the query a training label segments."""
    return target.words if isinstance(target, Segmentation) else target[0].segmentation.words


def majority(target: Target) -> Segmentation:
    """A label's most voted segmentation (the first listed of those that tie)."""
    if isinstance(target, Segmentation):
        return target
    return max(target, key=lambda r: r.votes).segmentation


def as_target(value: object, index: int) -> Target:
    """Training label ``index`` as a :data:`Target`: a :class:`Segmentation`, pipe text
    (``new york|tickets``) or a non-empty list of :class:`Reference`; anything else is a
    :class:`SegmentationError` naming it."""
    if isinstance(value, Segmentation):
        return value
    if isinstance(value, str):
        try:
            return Segmentation.from_pipe(value)
        except QsegError as exc:
            raise SegmentationError(f"target {index}: {exc}") from None
    if (
        isinstance(value, Sequence)
        and value
        and all(isinstance(ref, Reference) for ref in value)
        and len({ref.segmentation.words for ref in value}) == 1
    ):
        return value
    raise SegmentationError(
        f"target {index}: a target is a Segmentation, pipe text ('new york|tickets') or a "
        f"list of Reference of one query, not {type(value).__name__}: {value!r:.60}"
    )
