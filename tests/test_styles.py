"""A model trained on two kinds of query segments in the style the user sets: one kind's
conventions for every query, or each query's kind inferred (auto, the default)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import toy
from helpers import out, qseg

import qseg as api
from qseg import models


def test_the_style_fixes_the_kind_the_model_is_given():
    auto, web, product = (api.segmenter(f"default(style={s})") for s in ("auto", "web", "product"))
    assert auto.spec == "default" and web.spec == "default(style=web)"
    words = [("containers", "for", "food"), ("movies", "directed", "by", "woody", "allen")]
    assert np.array_equal(auto._kinds(words), auto.domain.predict(words))
    kinds = dict(zip(web.domain.labels, (0.0, 1.0), strict=True))
    assert web._kinds(words).tolist() == [kinds["web"]] * 2
    assert product._kinds(words).tolist() == [kinds["product"]] * 2
    # the conventions differ: QueryNER keeps "for" inside a span, Webis annotators do not
    assert web.segment("containers for food").to_pipe() == "containers|for|food"
    assert product.segment("containers for food").to_pipe() == "containers|for food"
    assert api.segmenter("default").segment("containers for food") == auto.segment(
        "containers for food"
    )


def test_a_styled_model_keeps_its_style():
    web = api.segmenter("qseg-default-v2(style=web)")
    again = pickle.loads(pickle.dumps(web))
    assert again.style == "web" and again.spec == "qseg-default-v2(style=web)"
    assert models.open_segmenter(web.spec).segment("containers for food") == web.segment(
        "containers for food"
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("default(style=movie)", "style must be one of auto, product, web, not 'movie'"),
        ("default(colour=red)", "default: unknown parameter 'colour=red'; known: style"),
        ("default(style=web, style=web)", "default: style is given twice"),
    ],
)
def test_bad_styles_are_clear_errors(spec, message):
    with pytest.raises(api.QsegError, match=message.replace("(", r"\(").replace(")", r"\)")):
        api.segmenter(spec)


def test_a_model_of_one_kind_has_no_styles(tmp_path):
    path = tmp_path / "one.qseg"
    models.save(toy.train(toy.TRAINED_SPECS["features"]), path)
    assert api.segmenter(f"{path}(style=auto)", toy.resources()).segment("new york")
    with pytest.raises(api.QsegError, match="has no styles to choose from"):
        api.segmenter(f"{path}(style=web)", toy.resources())


def test_the_command_line_takes_a_style():
    text = out(qseg("segment", "--method", "default(style=product)", "containers for food"))
    assert text == "containers|for food\n"
