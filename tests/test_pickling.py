"""Values and segmenters cross process boundaries: pickle, copy, a spawn-based pool, joblib."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import pytest

from qseg.resources.counts import NgramCounts
from qseg.resources.store import StoreError, build_from_entries
from qseg.segmentation import NestedSegmentation, Segmentation
from qseg.segmenters.rules.naive import NaiveSegmenter

QUERIES = ["new york yankees tickets", "cheap new york hotels", "yankees tickets", "new york"]
COUNTS = {"new york": 100, "york yankees": 10, "new york yankees": 5, "yankees tickets": 2}


@pytest.mark.parametrize(
    "value",
    [Segmentation.from_pipe("new york|yankees"), NestedSegmentation.from_brackets("((a b) c)")],
)
def test_values_pickle_and_copy_to_themselves(value):
    assert pickle.loads(pickle.dumps(value)) == value
    assert copy.deepcopy(value) is value and copy.copy(value) is value


def _segment(segmenter, query):
    return segmenter.segment(query)


@pytest.fixture
def stored(tmp_path) -> NaiveSegmenter:
    build_from_entries(COUNTS, kind="counts", path=tmp_path / "c.qseg")
    return NaiveSegmenter(NgramCounts.from_file(tmp_path / "c.qseg"))


def test_a_spawn_pool_segments_as_this_process_does(stored):
    expected = [stored.segment(q) for q in QUERIES]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.starmap(_segment, [(stored, q) for q in QUERIES]) == expected


def test_joblib_segments_as_this_process_does(stored):
    joblib = pytest.importorskip("joblib", reason="joblib comes with qseg[train]")
    expected = [stored.segment(q) for q in QUERIES]
    found = joblib.Parallel(n_jobs=2, backend="loky")(
        joblib.delayed(_segment)(stored, q) for q in QUERIES
    )
    assert found == expected


def test_a_store_file_travels_by_path_and_must_not_change(stored, tmp_path):
    data = pickle.dumps(stored)
    assert len(data) < 2000  # the path and fingerprint, not the store
    build_from_entries({"new york": 1}, kind="counts", path=tmp_path / "c.qseg")  # replaced
    with pytest.raises(StoreError, match="not the store that was pickled"):
        pickle.loads(data)


def test_a_store_in_memory_travels_as_its_bytes():
    segmenter = NaiveSegmenter(NgramCounts(COUNTS))
    again = pickle.loads(pickle.dumps(segmenter))
    assert [again.segment(q) for q in QUERIES] == [segmenter.segment(q) for q in QUERIES]
