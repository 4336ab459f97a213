"""Types of the compiled store core (``_store.pyx``), for type checkers; held to the
compiled module by ``python -m mypy.stubtest qseg.resources._store qseg.segmenters._kernel
--allowlist tests/stubtest-allowlist.txt`` (about three minutes, so not in the test run)."""

import mmap
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

Buffer = bytes | bytearray | memoryview | mmap.mmap
"""What a view reads: a store file mapped, or its bytes."""

def hash_keys(keys: Sequence[str], seed: int) -> npt.NDArray[np.uint64]: ...
def hash_utf8_column(
    data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64], seed: int
) -> npt.NDArray[np.uint64]: ...
def pack_compact(
    records: npt.NDArray[np.uint8],
    sizes: npt.NDArray[np.uint8],
    hashes: npt.NDArray[np.uint64],
    codes: npt.NDArray[np.uint64],
    ext: npt.NDArray[np.uint8],
    first_record: int,
    bucket_shift: int,
    fp_shift: int,
    fp_mask: int,
    value_bits: int,
    record_bits: int,
) -> int: ...
def count_buckets(
    sizes: npt.NDArray[np.uint8], hashes: npt.NDArray[np.uint64], bucket_shift: int
) -> int: ...
def _reopen_view(path: str, fingerprint: str) -> StoreView: ...

class StoreView:
    """Read-only lookups in the arrays of one store (see ``_store.pyx``)."""

    @property
    def buffer(self) -> Buffer: ...
    @property
    def layout(self) -> dict[str, Any]: ...
    origin: tuple[str, str] | None
    @property
    def exact(self) -> bool: ...
    @property
    def seed(self) -> int: ...
    @property
    def n_keys(self) -> int: ...
    def __init__(
        self, buffer: Buffer, layout: dict[str, Any], decode: npt.NDArray[np.uint64]
    ) -> None: ...
    def lookup(self, key: str) -> tuple[bool, int, bool]: ...
    def phrase_gaps(self, words: tuple[str, ...], longest: int) -> tuple[int, ...]: ...
    def lookup_many(
        self, keys: Sequence[str]
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_], npt.NDArray[np.bool_]]: ...
    def key_at(self, r: int) -> str: ...
    def entry_at(self, r: int) -> tuple[int, bool]: ...
