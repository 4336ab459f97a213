"""Types of the compiled span scorers and decoder (``_kernel.pyx``), for type checkers; held to the
compiled module by ``python -m mypy.stubtest qseg.resources._store qseg.segmenters._kernel
--allowlist tests/stubtest-allowlist.txt`` (about three minutes, so not in the test run)."""

from collections.abc import Sequence

from qseg.resources._store import StoreView

def best_breaks(
    weights: Sequence[Sequence[tuple[int, int]]], n: int
) -> tuple[int, tuple[int, ...]]: ...

class SpanScorer:
    """Base of the compiled scorers: ``table`` for ranking and scoring, ``best`` for decoding."""

    def table(self, words: tuple[str, ...]) -> list[list[tuple[int, int]]]: ...
    def best(self, words: tuple[str, ...]) -> tuple[int, tuple[int, ...]]: ...

class NaiveScorer(SpanScorer):
    def __init__(self, counts: StoreView, max_order: int) -> None: ...

class WikiScorer(SpanScorer):
    def __init__(
        self, counts: StoreView, titles: StoreView, unseen_titles: bool, median: int
    ) -> None: ...
