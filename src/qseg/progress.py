"""Progress bars on stderr for long work (indexing, evaluating, building), off when quiet."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def progress_bar(
    quiet: bool, unit: str, desc: str, total: int | None = None, scale: bool = True
) -> Iterator[Any]:
    """A tqdm bar whose ``update(n)`` advances it; it disappears when done. ``scale`` writes
    large counts as 1.2k, 3.4M (off for a handful of steps)."""
    from tqdm import tqdm

    with tqdm(
        total=total,
        unit=unit,
        unit_scale=scale,
        desc=desc,
        disable=quiet,
        file=sys.stderr,
        leave=False,
    ) as bar:
        yield bar
