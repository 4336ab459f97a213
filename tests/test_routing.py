"""A routed model: one model per kind of query, each query sent to its kind's model by the
query-kind classifier (style auto), or every query to one kind's model (style web/product);
one file holding both models, the router and, once, what the models carry."""

from __future__ import annotations

import random
import zipfile
from collections import Counter
from dataclasses import replace
from functools import cache

import pytest
import toy

import qseg as api
from qseg import models
from qseg.errors import QsegError
from qseg.models import ModelError
from qseg.resources.counts import NgramCounts
from qseg.resources.default import NAME_END, NAME_START
from qseg.resources.store import build_from_entries
from qseg.segmentation import Segmentation
from qseg.segmenters.learned.domain import DomainModel
from qseg.segmenters.learned.routing import RoutedModel
from qseg.segmenters.registry import create


def product_gold(n: int = 150, seed: int = 3) -> list[Segmentation]:
    """Queries of the toy words alone, kept whole but before *near* and *2024*: another kind,
    another convention."""
    rng = random.Random(seed)
    queries = []
    for _ in range(n):
        text = " ".join(rng.sample(toy.WORDS, rng.randint(2, 4)))
        queries.append(
            Segmentation.from_pipe(text.replace(" near", "|near").replace(" 2024", "|2024"))
        )
    return queries


@cache
def routed() -> RoutedModel:
    web_gold, products = list(toy.gold()), product_gold()
    trained = {}
    for kind, gold in (("web", web_gold), ("product", products)):
        model = create(toy.TRAINED_SPECS["joint"], toy.resources())
        trained[kind] = model.fit([q.words for q in gold], gold).model_
    router = DomainModel.fit(
        [q.words for q in web_gold + products],
        ["web"] * len(web_gold) + ["product"] * len(products),
        seed=0,
    )
    return RoutedModel(router, trained)


QUERIES = ["cheap used tickets", "new york yankees tickets", "best online reviews"]


def test_each_query_goes_to_the_model_of_its_kind():
    model = routed()
    assert model.kinds(QUERIES) == ["product", "web", "product"]
    answers = model.predict(QUERIES)
    for query, kind, answer in zip(QUERIES, model.kinds(QUERIES), answers, strict=True):
        assert answer == model.models[kind].segment(query)
    assert answers[0].to_pipe() == "cheap used tickets"  # whole, as the product model learnt
    assert model.models["web"].segment(QUERIES[0]).to_pipe() != answers[0].to_pipe()
    assert list(model.segment_many(["", *QUERIES], errors="skip")) == answers
    assert model.rank(QUERIES[1], 3) == model.models["web"].rank(QUERIES[1], 3)
    probabilities = model.break_probabilities(QUERIES)
    assert (
        probabilities[0].tolist()
        == model.models["product"].break_probabilities(QUERIES[:1])[0].tolist()
    )


def test_a_style_sends_every_query_to_one_model():
    web = routed().with_style("web")
    assert web.predict(QUERIES) == routed().models["web"].predict(QUERIES)
    with pytest.raises(api.QsegError, match="style must be one of auto, product, web"):
        routed().with_style("movie")


def test_one_file_holds_both_models_the_router_and_the_titles_once(tmp_path):
    path = tmp_path / "routed.qseg"
    models.save(routed(), path, carry_titles=True)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == [
            "meta.json",
            "product.qseg",
            "router.npz",
            "titles.txt",
            "web.qseg",
        ]
        with zipfile.ZipFile(zf.open("web.qseg")) as inner:
            assert "titles.txt" not in inner.namelist() and "gap_model.npz" in inner.namelist()
    loaded = api.segmenter(str(path), toy.resources())
    assert isinstance(loaded, RoutedModel) and loaded.spec == str(path)
    assert loaded.predict(QUERIES) == routed().predict(QUERIES)
    styled = api.segmenter(f"{path}(style=product)", toy.resources())
    assert styled.style == "product" and styled.spec == f"{path}(style=product)"
    assert styled.predict(QUERIES) == routed().models["product"].predict(QUERIES)
    again = tmp_path / "again.qseg"
    models.save(loaded, again, carry_titles=True)
    assert again.read_bytes() == path.read_bytes()  # the same model, the same bytes


def test_a_damaged_shared_member_is_refused_in_one_line(tmp_path):
    path = tmp_path / "routed.qseg"
    models.save(routed(), path, carry_titles=True)
    damaged = tmp_path / "damaged.qseg"
    with zipfile.ZipFile(path) as zf, zipfile.ZipFile(damaged, "w") as out:
        for info in zf.infolist():
            data = zf.read(info)
            if info.filename == "titles.txt":
                data = data.replace(b"new york", b"new yolk")
            out.writestr(info, data)
    with pytest.raises(ModelError, match=r"\(titles.txt\): its SHA-256 is not the one"):
        api.segmenter(str(damaged), toy.resources())


def test_shared_members_kept_beside_the_file_are_verified_like_the_rest(tmp_path):
    """``beside``: a carried store in a file of its own next to the model file (a shipped
    file stays under 10 MB), covered by the file's manifest: missing, of another size or
    damaged, it is refused in one line naming it."""
    path = tmp_path / "routed.qseg"
    models.save(routed(), path, carry_titles=True, beside=["titles.txt"])
    titles = tmp_path / "routed.titles.txt"
    assert b"new york yankees\n" in titles.read_bytes()
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["meta.json", "product.qseg", "router.npz", "web.qseg"]
    loaded = api.segmenter(str(path), toy.resources())
    assert loaded.predict(QUERIES) == routed().predict(QUERIES)
    again = tmp_path / "again.qseg"
    models.save(loaded, again, carry_titles=True, beside=["titles.txt"])
    assert again.read_bytes() == path.read_bytes()
    assert (tmp_path / "again.titles.txt").read_bytes() == titles.read_bytes()
    intact = titles.read_bytes()
    for content, message in (
        (None, rf"member 'titles.txt' is missing \(it is kept beside the file, in {titles}\)"),
        (intact + b"x\n", r"\(titles.txt\): declares .* bytes, meta.json records"),
        (intact.replace(b"new york", b"new yolk"), r"\(titles.txt\): its SHA-256 is not the one"),
    ):
        if content is None:
            titles.unlink()
        else:
            titles.write_bytes(content)
        with pytest.raises(ModelError, match=message) as error:
            api.segmenter(str(path), toy.resources())
        assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)
    with pytest.raises(QsegError, match="not a member the models share"):
        models.save(routed(), path, carry_titles=True, beside=["gap_model.npz"])


def toy_names() -> NgramCounts:
    """Name statistics of the toy phrases as a compact store (what a model carries packed):
    every 1- to 5-gram of each phrase between the name marks."""
    counts: Counter[str] = Counter()
    for phrase in toy.PHRASES:
        words = [NAME_START, *phrase.split(), NAME_END]
        for n in range(1, 6):
            counts.update(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
    return NgramCounts(store=build_from_entries(dict(counts), kind="counts", mode="compact"))


def test_name_statistics_and_vectors_travel_in_the_file_once(tmp_path):
    spec = toy.TRAINED_SPECS["joint"].replace(
        "name_statistics=false, word_vectors=false", "name_statistics=true, word_vectors=true"
    )
    resources = replace(toy.resources(), names=toy_names())
    web_gold, products = list(toy.gold()), product_gold()
    trained = {
        kind: create(spec, resources).fit([q.words for q in gold], gold).model_
        for kind, gold in (("web", web_gold), ("product", products))
    }
    model = RoutedModel(routed().router, trained)
    path = tmp_path / "routed.qseg"
    models.save(model, path, carry_titles=True, carry_names=True)
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        assert {"names.npz", "titles.txt", "vectors.npz"} <= names
        with zipfile.ZipFile(zf.open("product.qseg")) as inner:
            assert not {"names.npz", "vectors.npz"} & set(inner.namelist())
    loaded = api.segmenter(str(path), toy.resources())  # no name statistics given
    assert loaded.predict(QUERIES) == model.predict(QUERIES)
    assert loaded.models["web"].source.names.fingerprint == resources.names.fingerprint


def test_a_balanced_router_weighs_both_kinds_alike():
    """Three times as many product queries as web ones: unweighted, the router sends more of
    the ambiguous queries (toy words alone, in both kinds) to the product model."""
    web = [q.words for q in toy.gold()]
    products = [q.words for q in product_gold(450)]
    labels = ["web"] * len(web) + ["product"] * len(products)
    plain = DomainModel.fit(web + products, labels, seed=0)
    balanced = DomainModel.fit(web + products, labels, seed=0, balanced=True)
    web_side = plain.labels.index("web")

    def web_share(model: DomainModel) -> float:
        second = model.predict(web) >= 0.5
        return float((second == (web_side == 1)).mean())

    assert web_share(balanced) > web_share(plain)


def test_the_opt_in_models_are_saved_beside_and_loaded_only_when_asked(tmp_path):
    """A second model per kind (the shipped default's: with the contextual probe) is held in
    the same file, sharing its members; ``contextual=true`` segments with them."""
    plain = routed()
    other = {"web": plain.models["product"], "product": plain.models["web"]}  # any models will do
    path = tmp_path / "routed.qseg"
    models.save(replace(plain, contextual=other), path, carry_titles=True)
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        assert {"web.contextual.qseg", "product.contextual.qseg", "web.qseg"} <= names
        assert sum(name == "titles.txt" for name in zf.namelist()) == 1
    loaded = api.segmenter(str(path), toy.resources())
    assert loaded.predict(QUERIES) == plain.predict(QUERIES) and not loaded.contextual
    opted = api.segmenter(f"{path}(style=web, contextual=true)", toy.resources())
    assert opted.spec == f"{path}(style=web, contextual=true)"
    assert opted.predict(QUERIES) == plain.models["product"].predict(QUERIES)
    bare = tmp_path / "bare.qseg"
    models.save(plain, bare, carry_titles=True)
    with pytest.raises(api.QsegError, match="holds no models with the contextual probe"):
        api.segmenter(f"{bare}(contextual=true)", toy.resources())
    with pytest.raises(api.QsegError, match="a contextual model for each kind, or none"):
        replace(plain, contextual={"web": plain.models["web"]})


def test_a_fixed_style_reads_only_its_model(tmp_path):
    path = tmp_path / "routed.qseg"
    models.save(routed(), path, carry_titles=True)
    web = models.load(path, toy.resources(), style="web")
    assert set(web.models) == {"web"} and web.predict(QUERIES) == routed().models["web"].predict(
        QUERIES
    )
    with pytest.raises(api.QsegError, match="load it with style=auto to save it"):
        models.save(web, tmp_path / "again.qseg")
    assert set(models.load(path, toy.resources()).models) == {"web", "product"}  # saved: auto
