"""The value types of qseg: flat and nested segmentations of a query, and their text forms.

A flat :class:`Segmentation` is the words of a query plus one break bit per gap (bit ``i`` is 1
iff a segment ends after word ``i``), as in paper 001, section 4.1. It converts losslessly to and
from pipe text (``new york|yankees tickets``), quoted text (``"new york" "yankees tickets"``; a
one-word segment is never quoted), segment lists and break vectors.

A :class:`NestedSegmentation` is a binary tree over the words, written in bracket text
(``((new york) yankees)``) and described by the boundary heights of paper 001: 0 between the two
words of an atomic pair, otherwise 1 + the larger height of the two subtrees that meet there
(a single word counts as height -1).

Words are always in the normal form of :func:`qseg.query.normalize`; the parsers normalize
what they read, so ``Segmentation.from_pipe(s.to_pipe()) == s`` for every segmentation ``s``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

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
        spans = []
        start = 0
        for i, bit in enumerate(self.breaks):
            if bit:
                spans.append((start, i + 1))
                start = i + 1
        spans.append((start, len(self.words)))
        return tuple(spans)

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
        return " ".join(f'"{text}"' if " " in text else text for text in self.segment_texts)

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


class NestedSegmentation(_Frozen):
    """A binary tree over the words of a query, described by its boundary heights."""

    __slots__ = ("_left", "_right", "heights", "words")
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
        left, right = _cartesian_tree(hs)
        if _node_heights(left, right, len(hs)) != list(hs):
            raise SegmentationError(f"heights {list(hs)} do not describe a binary tree")
        object.__setattr__(self, "words", words)
        object.__setattr__(self, "heights", hs)
        object.__setattr__(self, "_left", left)
        object.__setattr__(self, "_right", right)

    @classmethod
    def from_brackets(cls, text: str) -> NestedSegmentation:
        """Parse bracket text in which every bracket pair joins exactly two parts."""
        words: list[str] = []
        heights: list[int] = []
        # stack items: None for "(", or (last word index, height) of a finished part
        stack: list[tuple[int, int] | None] = []
        for token in _BRACKET_TOKEN.findall(text):
            if token == "(":
                stack.append(None)
            elif token == ")":
                parts = []
                while stack and stack[-1] is not None:
                    parts.append(stack.pop())
                if not stack:
                    raise SegmentationError(f"unbalanced ')' in {text!r}")
                stack.pop()
                if len(parts) != 2:
                    raise SegmentationError(
                        f"a bracket pair must join exactly two parts, not {len(parts)}: {text!r}"
                    )
                (right_last, right_h), (left_last, left_h) = parts
                height = 1 + max(left_h, right_h)
                heights[left_last] = height
                stack.append((right_last, height))
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
        """Build from nested pairs of words, e.g. ``(("new", "york"), "yankees")``."""

        def render(node: str | Sequence[Any]) -> str:
            if isinstance(node, str):
                return node
            if len(node) != 2:
                raise SegmentationError(f"a tree node must have two children: {node!r}")
            return f"({render(node[0])} {render(node[1])})"

        return cls.from_brackets(render(tree))

    def _render(self, leaf: Any, join: Any) -> Any:
        """Fold the tree bottom-up without recursion (queries may be long)."""
        n = len(self.words)
        if n == 1:
            return leaf(self.words[0])
        root = next(i for i, h in enumerate(self.heights) if h == max(self.heights))
        done: dict[int, Any] = {}
        stack = [root]
        while stack:
            node = stack[-1]
            kids = (self._left[node], self._right[node])
            pending = [k for k in kids if k >= 0 and k not in done]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            left = done.pop(kids[0]) if kids[0] >= 0 else leaf(self.words[node])
            right = done.pop(kids[1]) if kids[1] >= 0 else leaf(self.words[node + 1])
            done[node] = join(left, right)
        return done[root]

    def to_brackets(self) -> str:
        """Bracket text: ``((new york) yankees)``."""
        return self._render(lambda w: w, lambda a, b: f"({a} {b})")

    @property
    def tree(self) -> str | tuple[Any, Any]:
        """The tree as nested pairs of words."""
        return self._render(lambda w: w, lambda a, b: (a, b))

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


def _cartesian_tree(heights: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """Children of each boundary in the max-rooted Cartesian tree (-1 = a word leaf)."""
    left = [-1] * len(heights)
    right = [-1] * len(heights)
    stack: list[int] = []
    for i, h in enumerate(heights):
        last = -1
        while stack and heights[stack[-1]] < h:
            last = stack.pop()
        left[i] = last
        if stack:
            right[stack[-1]] = i
        stack.append(i)
    return left, right


def _node_heights(left: list[int], right: list[int], m: int) -> list[int]:
    """Recompute every boundary's height from the tree shape (children before parents)."""
    computed = [-2] * m
    for start in range(m):
        stack = [start]
        while stack:
            node = stack[-1]
            if computed[node] != -2:
                stack.pop()
                continue
            kids = [k for k in (left[node], right[node]) if k >= 0 and computed[k] == -2]
            if kids:
                stack.extend(kids)
                continue
            stack.pop()
            child = [computed[k] for k in (left[node], right[node]) if k >= 0]
            computed[node] = 1 + max(child, default=-1)
    return computed
