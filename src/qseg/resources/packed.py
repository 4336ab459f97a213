"""A compact title store packed to travel inside a model file, and unpacked where it lands.

A compact store (``store.py``) keeps of each key only the top ``b + f`` bits of its hash (``b``
bucket bits, ``f`` fingerprint bits), its value code and its extendable bit. Sorted, those
numbers are Elias-Fano coded (Elias 1974; Fano 1971): the low ``L = floor(log2(U / n))`` bits
of each as they are, the rest as unary gaps in a bit array of about ``n + U / 2^L`` bits, where
``U = 2^(b + f)``. With a bucket holding about 11 keys that is about ``f - 1.5`` bits a key,
against ``f + 2.7`` in the store (records, bucket sizes); the flags follow, deflated. So the
4.8 million DBpedia names (5.7 million keys with their prefixes) fit a model file at 12
fingerprint bits. Unpacking writes the same records into a store of the same layout, which
therefore has the same fingerprint as the store packed: a model records its titles by it.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from qseg.fileio import read_npz
from qseg.resources.store import Store, StoreError, StoreWriter

FORMAT = 1
"""The version of the packed form."""

_ARRAYS = ("header", "high", "low", "values", "extendable")


def elias_fano(values: np.ndarray, universe_bits: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Sorted ``values`` below ``2^universe_bits`` as Elias-Fano: the packed high bit array
    (a one for each value, at its high part plus its index), the packed low bits (``L`` a
    value, most significant first) and ``L``."""
    n = len(values)
    low_bits = max(0, universe_bits - (n - 1).bit_length()) if n else 0  # floor(log2(U / n))
    values = values.astype(np.uint64)
    high = np.zeros(int(values[-1] >> np.uint64(low_bits)) + n + 1 if n else 0, dtype=np.uint8)
    high[(values >> np.uint64(low_bits)).astype(np.int64) + np.arange(n)] = 1
    low = np.empty((n, low_bits), dtype=np.uint8)
    for column in range(low_bits):  # most significant first, a column at a time
        shift = np.uint64(low_bits - 1 - column)
        low[:, column] = (values >> shift) & np.uint64(1)
    return np.packbits(high), np.packbits(low.ravel()), low_bits


def elias_fano_values(high: np.ndarray, low: np.ndarray, count: int, low_bits: int) -> np.ndarray:
    """The values :func:`elias_fano` coded (``ValueError`` if the arrays cannot hold them)."""
    ones = np.flatnonzero(np.unpackbits(high))
    unpacked = np.unpackbits(low)
    if len(ones) != count or len(unpacked) < count * low_bits:
        raise ValueError(f"not an Elias-Fano code of {count:,} values")
    values = (ones - np.arange(count)).astype(np.uint64)
    bits = unpacked[: count * low_bits].reshape(count, low_bits)
    for column in range(low_bits):
        values = (values << np.uint64(1)) | bits[:, column].astype(np.uint64)
    return values


def records(store: Store) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The keys of a compact store as it holds them, in its order: the top ``b + f`` bits of
    each hash, its value code and its extendable bit."""
    layout = store.header["layout"]
    if store.info.mode != "compact":
        raise StoreError("only a compact store keeps records to pack")
    data = np.frombuffer(store.view.buffer, dtype=np.uint8)
    fp_bits, value_bits = layout["fingerprint_bits"], layout["value_bits"]
    width = fp_bits + value_bits + 1
    n = layout["n_keys"]
    start = layout["records"]
    section = np.concatenate([data[start : start + (n * width + 7) // 8], np.zeros(8, np.uint8)])
    position = np.arange(n, dtype=np.uint64) * np.uint64(width)
    first = (position >> np.uint64(3)).astype(np.int64)
    words = np.zeros(n, dtype=np.uint64)
    for byte in range(8):
        words |= section[first + byte].astype(np.uint64) << np.uint64(8 * byte)
    rec = (words >> (position & np.uint64(7))) & np.uint64((1 << width) - 1)
    sizes = data[layout["sizes"] : layout["sizes"] + (1 << layout["bucket_bits"])]
    buckets = np.repeat(np.arange(len(sizes), dtype=np.uint64), sizes)
    top = (buckets << np.uint64(fp_bits)) | (rec >> np.uint64(value_bits + 1))
    codes = (rec >> np.uint64(1)) & np.uint64((1 << value_bits) - 1)
    return top, codes, (rec & np.uint64(1)).astype(np.uint8)


def pack(store: Store) -> bytes:
    """A compact title or count store as the bytes of an ``.npz`` (see the module docstring;
    a count store's value codes follow as 16-bit numbers, deflated)."""
    header, layout = store.header, store.header["layout"]
    if store.info.mode != "compact" or (
        (header["kind"], layout.get("value_bits")) != ("titles", 1)
        and not (header["kind"] == "counts" and layout["value_bits"] <= 16)
    ):
        raise StoreError("only a compact title store or count store is packed")
    top, codes, ext = records(store)
    high, low, low_bits = elias_fano(top, layout["bucket_bits"] + layout["fingerprint_bits"])
    kept = {
        "format": FORMAT,
        "count": len(top),
        "low_bits": low_bits,
        "seed": layout["seed"],
        "fingerprint_bits": layout["fingerprint_bits"],
    } | {key: header[key] for key in ("max_words", "unigram_total", "source") if key in header}
    if header["kind"] == "counts":
        kept |= {"kind": "counts", "value_bits": layout["value_bits"]}
        kept["count_step"] = header["count_step"]
        values = codes.astype("<u2").view(np.uint8)
    else:
        values = np.packbits(codes.astype(np.uint8))
    out = io.BytesIO()
    np.savez_compressed(
        out,
        header=np.frombuffer(json.dumps(kept).encode("utf-8"), dtype=np.uint8),
        high=high,
        low=low,
        values=values,
        extendable=np.packbits(ext),
    )
    return out.getvalue()


def unpack(data: bytes, path: Path | None) -> Store:
    """The store :func:`pack` packed, written to ``path`` (``None``: in memory); ``ValueError``
    naming what is wrong if the bytes are not a packed store."""
    arrays = read_npz(data, _ARRAYS, "a packed store")
    try:
        kept: dict[str, Any] = json.loads(arrays["header"].tobytes().decode("utf-8"))
        count, low_bits = int(kept["count"]), int(kept["low_bits"])
        if kept["format"] != FORMAT or not 0 <= count < 2**32 or not 0 <= low_bits < 64:
            raise ValueError(f"format {kept['format']}, {count} keys, {low_bits} low bits")
        fingerprint_bits, seed = int(kept["fingerprint_bits"]), int(kept["seed"])
        kind = kept.get("kind", "titles")
        value_bits = int(kept.get("value_bits", 1))
        step = float(kept["count_step"]) if kind == "counts" else None
        if kind not in ("titles", "counts") or not 1 <= value_bits <= 16:
            raise ValueError(f"a {kind} store of {value_bits}-bit values")
        if step is not None and not 0 < step < 64:
            raise ValueError(f"a count step of {step}")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(f"a packed store with a bad header ({exc})") from None
    for name in _ARRAYS:
        if arrays[name].dtype != np.uint8 or arrays[name].ndim != 1:
            raise ValueError(f"a packed store: {name} is not a byte vector")
    top = elias_fano_values(arrays["high"], arrays["low"], count, low_bits)
    raw = arrays["values"]
    if kind == "counts":
        values = raw[: 2 * count].view("<u2").astype(np.uint64) if len(raw) >= 2 * count else raw
        if len(values) == count and np.any(values >> np.uint64(value_bits)):
            raise ValueError(f"a packed count store with codes over {value_bits} bits")
    else:
        values = np.unpackbits(raw)[:count].astype(np.uint64)
    ext = np.unpackbits(arrays["extendable"])[:count]
    if len(values) != count or len(ext) != count or np.any(top[1:] < top[:-1]):
        raise ValueError("a packed store whose keys are not sorted or not all there")
    header = {key: kept[key] for key in ("max_words", "unigram_total", "source") if key in kept}
    layout = Layout(kind, fingerprint_bits, value_bits, seed, step)
    try:
        return _write(top, values, ext, path, layout, header)
    except StoreError as exc:  # a layout the keys do not fit: damage, as the rest
        raise ValueError(f"a packed store that is no store ({exc})") from None


@dataclass(frozen=True)
class Layout:
    """What a packed store keeps of its store's layout."""

    kind: str
    fingerprint_bits: int
    value_bits: int
    seed: int
    count_step: float | None


def _write(
    top: np.ndarray,
    values: np.ndarray,
    ext: np.ndarray,
    path: Path | None,
    layout: Layout,
    header: dict[str, Any],
) -> Store:
    """The compact store of these records (sorted top hash bits, value codes, flags)."""
    count = len(top)
    writer = StoreWriter(
        path,
        kind=layout.kind,
        mode="compact",
        n_keys=count,
        fingerprint_bits=layout.fingerprint_bits,
        value_bits=layout.value_bits,
        seed=layout.seed,
        header=header,
        count_step=layout.count_step,
    )
    shift = 64 - writer.layout["bucket_bits"] - layout.fingerprint_bits
    if shift < 0 or (count and int(top[-1]) >> (64 - shift)):
        writer.abort()
        raise StoreError("its keys do not fit its layout")
    with writer:
        writer.add(top << np.uint64(shift), values, ext, coded=True)
        return writer.finish()
