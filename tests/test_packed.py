"""A compact title or count store packed for a model file (Elias-Fano coded keys) comes back
the same."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from qseg.resources.counts import NgramCounts
from qseg.resources.packed import elias_fano, elias_fano_values, pack, records, unpack
from qseg.resources.store import StoreError, build_from_entries
from qseg.resources.titles import TitleSet


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 40).flatmap(lambda u: st.tuples(st.just(u), st.lists(st.integers(0, 2**u - 1))))
)
def test_elias_fano_gives_back_every_sorted_list(case):
    universe_bits, values = case
    values = np.array(sorted(values), dtype=np.uint64)
    high, low, low_bits = elias_fano(values, universe_bits)
    assert np.array_equal(elias_fano_values(high, low, len(values), low_bits), values)


def test_elias_fano_takes_about_two_bits_more_than_the_low_bits():
    values = np.sort(np.random.default_rng(0).integers(0, 2**30, 100_000, dtype=np.uint64))
    high, low, low_bits = elias_fano(values, 30)
    assert low_bits == 30 - 17  # floor(log2(2^30 / 100,000))
    bits = 8 * (len(high) + len(low)) / len(values)
    assert low_bits + 2 <= bits <= low_bits + 2.6


def _titles(n: int = 20_000) -> set[str]:
    words = [f"w{i}" for i in range(2000)]
    rng = random.Random(0)
    return {" ".join(rng.sample(words, rng.randint(2, 5))) for _ in range(n)}


@pytest.mark.parametrize("fingerprint_bits", [8, 12, 16])
def test_a_packed_store_is_the_same_store(fingerprint_bits):
    titles = _titles()
    store = build_from_entries(
        dict.fromkeys(titles, 1),
        kind="titles",
        mode="compact",
        fingerprint_bits=fingerprint_bits,
        source={"package": "toy"},
    )
    data = pack(store)
    again = unpack(data, None)
    assert again.fingerprint == store.fingerprint
    assert again.header["source"] == {"package": "toy"}
    assert again.info.max_words == store.info.max_words == 5
    for a, b in zip(records(store), records(again), strict=True):
        assert np.array_equal(a, b)
    before, after = TitleSet(store=store), TitleSet(store=again)
    probes = [*list(titles)[:3000], *(f"w{i} w{i + 1}" for i in range(3000))]
    assert [p in before for p in probes] == [p in after for p in probes]
    # about f - 1.5 bits a key for the keys, plus the deflated flags
    assert len(data) * 8 / store.info.keys < fingerprint_bits + 1


def test_a_packed_store_unpacks_into_a_file(tmp_path):
    store = build_from_entries(dict.fromkeys(_titles(500), 1), kind="titles", mode="compact")
    again = unpack(pack(store), tmp_path / "t.qseg")
    assert again.path == tmp_path / "t.qseg" and again.fingerprint == store.fingerprint


@pytest.mark.parametrize("kind", ["titles", "counts"])
def test_an_empty_store_packs_and_unpacks(kind, tmp_path):
    store = build_from_entries({}, kind=kind, mode="compact", source={"package": "none"})
    again = unpack(pack(store), tmp_path / "t.qseg")
    assert again.info.keys == store.info.keys == 0 and again.fingerprint == store.fingerprint
    opened = TitleSet(store=again) if kind == "titles" else NgramCounts(store=again)
    assert "new york" not in opened


def test_a_packed_count_store_is_the_same_store_with_the_same_counts():
    rng = random.Random(1)
    entries = {title: rng.choice([1, 2, 3, 17, 950, 10**6, 7 * 10**9]) for title in _titles()}
    store = build_from_entries(entries, kind="counts", mode="compact")
    data = pack(store)
    again = unpack(data, None)
    assert again.fingerprint == store.fingerprint and again.header["kind"] == "counts"
    for a, b in zip(records(store), records(again), strict=True):
        assert np.array_equal(a, b)
    keys = [*entries, *(f"w{i} w{i + 1}" for i in range(3000))]
    before, after = NgramCounts(store=store), NgramCounts(store=again)
    assert np.array_equal(before.count_many(keys), after.count_many(keys))
    assert after.count_many(["w1"]).tolist() == before.count_many(["w1"]).tolist()


def test_only_compact_stores_are_packed():
    exact = build_from_entries({"new york": 1}, kind="titles")
    with pytest.raises(StoreError, match="only a compact title store or count store"):
        pack(exact)


def _damaged(data: bytes, name: str, change) -> bytes:
    with np.load(io.BytesIO(data)) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays[name] = change(arrays[name])
    out = io.BytesIO()
    np.savez_compressed(out, **arrays)
    return out.getvalue()


@pytest.mark.parametrize(
    "name, change, message",
    [
        ("high", lambda a: a[: len(a) // 2], "not an Elias-Fano code"),
        ("low", lambda a: a[:10], "not an Elias-Fano code"),
        ("header", lambda a: np.frombuffer(b"{}", dtype=np.uint8), "bad header"),
        ("header", lambda a: np.frombuffer(b"\xff", dtype=np.uint8), "bad header"),
        ("values", lambda a: a.astype(np.int32), "values is not a byte vector"),
    ],
)
def test_a_damaged_packed_store_is_a_value_error(name, change, message):
    store = build_from_entries(dict.fromkeys(_titles(500), 1), kind="titles", mode="compact")
    with pytest.raises(ValueError, match=message):
        unpack(_damaged(pack(store), name, change), None)
    with pytest.raises(ValueError, match="not a packed store"):
        unpack(b"not a zip", None)
