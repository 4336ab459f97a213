"""Saved models: the file is a spec, it knows its resources, and every part of it is checked."""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import toy
from helpers import assert_one_line_error, out, qseg

from qseg import models
from qseg.errors import PathError, QsegError
from qseg.models import ModelError, open_segmenter
from qseg.models.format import MANIFEST, ResourceMismatch, manifest
from qseg.resources.counts import NgramCounts
from qseg.resources.store import build_from_entries
from qseg.resources.titles import TitleSet
from qseg.segmenters.learned.break_model import BreakModel
from qseg.segmenters.registry import SpecError, create

JOINT = toy.TRAINED_SPECS["joint"]
QUERIES = ["cheap new york yankees tickets", "stainless steel chest freezer", "café münchen"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    """A small joint model trained on the toy world, saved."""
    path = tmp_path_factory.mktemp("models") / "toy.qseg"
    models.save(toy.train(JOINT), path)
    return path


def rewrite(path: Path, target: Path, change, record: bool = True) -> Path:
    """Copy a model file, letting ``change(meta, members)`` alter its metadata and members;
    ``record``: the manifest recorded anew for the changed members (a crafted file consistent
    with itself, so that what refuses it is the check of the change), else left as it was."""
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members.pop("meta.json"))
    change(meta, members)
    if record:
        meta[MANIFEST] = manifest(members)
    with zipfile.ZipFile(target, "w") as zf:
        zf.writestr("meta.json", json.dumps(meta))
        for name, data in members.items():
            zf.writestr(name, data)
    return target


def test_a_saved_model_is_a_segmenter_with_its_path_as_spec(saved, tmp_path):
    model = toy.train(JOINT)
    loaded = open_segmenter(str(saved), toy.resources())
    assert isinstance(loaded, BreakModel) and loaded.spec == str(saved)
    assert [loaded.segment(q) for q in QUERIES] == [model.segment(q) for q in QUERIES]
    assert [loaded.rank(q, 3) for q in QUERIES] == [model.rank(q, 3) for q in QUERIES]
    again = tmp_path / "again.qseg"
    models.save(loaded, again)
    assert again.read_bytes() == saved.read_bytes()  # the same model gives the same bytes
    meta = json.loads(zipfile.ZipFile(saved).read("meta.json"))
    assert meta["method"] == JOINT.replace(" ", "").replace(",", ", ")
    assert set(meta["resources"]) == {"ngrams", "words", "titles"}
    assert "n_jobs" not in meta["params"]  # how to run, not what the model is
    assert open_segmenter(saved, toy.resources()).spec == str(saved)  # a Path works too


def test_the_model_refuses_resources_other_than_it_was_trained_with(saved):
    res = toy.resources()
    with pytest.raises(
        ResourceMismatch, match=r"trained with the n-gram counts of memory .*`ngrams=FILE`"
    ):
        models.load(saved)  # none given: the built-in counts are not what it was trained with
    other = replace(res, ngrams=NgramCounts({"new york": 5, "new": 9, "york": 9}))
    with pytest.raises(ResourceMismatch, match="trained with other n-gram counts") as error:
        models.load(saved, other)
    assert error.value.args[0].count("fingerprint") == 2 and "\n" not in str(error.value)
    with pytest.raises(ResourceMismatch, match="trained with other Wikipedia titles"):
        models.load(saved, replace(res, titles=TitleSet({"new york"})))
    with pytest.raises(ResourceMismatch, match="trained with the Wikipedia titles of memory"):
        models.load(saved, replace(res, titles=None))
    forced = models.load(saved, other, allow_other_resources=True)
    assert forced.source.counts is other.ngrams
    assert forced.segment(QUERIES[0]).words == tuple(QUERIES[0].split())


def test_fingerprints_follow_content_not_where_it_lies(tmp_path):
    """The same counts read from a text file, built in memory and built into a store file
    have one fingerprint; other counts another."""
    entries = {"new york": 100, "new": 1000, "york": 500}
    text = tmp_path / "counts.txt"
    text.write_text("".join(f"{k}\t{v}\n" for k, v in entries.items()))
    stored = build_from_entries(entries, kind="counts", path=tmp_path / "counts.qseg")
    prints = {
        NgramCounts.from_file(text).fingerprint,
        NgramCounts(entries).fingerprint,
        NgramCounts(store=stored).fingerprint,
        NgramCounts.from_file(tmp_path / "counts.qseg").fingerprint,
    }
    assert len(prints) == 1
    assert NgramCounts(entries | {"york": 501}).fingerprint not in prints


def test_a_model_trained_on_a_text_file_runs_on_the_store_built_from_it(tmp_path):
    text = tmp_path / "counts.txt"
    counts = toy.resources().ngrams
    text.write_text("".join(f"{k}\t{v}\n" for k, v in counts.items()))
    built = qseg("build", "ngrams", "--from", "counts", "-o", tmp_path / "c.qseg", text, "--quiet")
    assert built.returncode == 0, built.stderr.decode()
    titles = tmp_path / "titles.txt"
    titles.write_text("\n".join(toy.PHRASES) + "\n")
    model = toy.train(JOINT, replace(toy.resources(), ngrams=NgramCounts.from_file(text)))
    models.save(model, tmp_path / "m.qseg")
    flags = ["--titles", titles, "--method", tmp_path / "m.qseg"]
    from_text = out(qseg("segment", "--ngrams", text, *flags, *QUERIES))
    assert out(qseg("segment", "--ngrams", tmp_path / "c.qseg", *flags, *QUERIES)) == from_text
    assert from_text.splitlines() == [model.segment(q).to_pipe() for q in QUERIES]
    other = tmp_path / "other.txt"
    other.write_text(text.read_text() + "new yankees\t1\n")  # one n-gram more
    refused = qseg("segment", "--ngrams", other, *flags, "a b")
    assert_one_line_error(refused, "m.qseg", "other n-gram counts", "--allow-other-resources")
    forced = qseg("segment", "--ngrams", other, *flags, "--allow-other-resources", "a b")
    assert out(forced).count("\n") == 1


def _set(path: str, value):
    def change(meta, members):
        *keys, last = path.split(".")
        target = meta
        for key in keys:
            target = target[key]
        target[last] = value

    return change


def _member(name: str, data: bytes | None):
    def change(meta, members):
        if data is None:
            del members[name]
        else:
            members[name] = data

    return change


def _linear_model_with(saved_logreg: Path, **arrays) -> bytes:
    with zipfile.ZipFile(saved_logreg) as zf, np.load(io.BytesIO(zf.read("gap_model.npz"))) as z:
        current = {k: z[k] for k in z.files}
    for name, value in arrays.items():  # an array, or a function of the current one
        current[name] = value(current[name]) if callable(value) else value
    buffer = io.BytesIO()
    np.savez(buffer, **current)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def saved_logreg(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "logreg.qseg"
    models.save(toy.train("features(classifier=logreg)"), path)
    return path


@pytest.mark.parametrize(
    "change, message",
    [
        (_set("version", 99), "model format version 99; this qseg reads version 9"),
        (_set("format", "other"), "not a qseg model file"),
        (_set("params.colour", "red"), "unknown parameter 'colour'"),
        (_set("params.inner_folds", "2"), "parameter inner_folds must be int"),
        (_set("params.decoding", {"joint": True, "speed": 2}), "unknown parameter decoding.speed"),
        (_set("params.boosting", {"max_depth": 2.5}), "boosting.max_depth must be int"),
        (_set("fitted.n_features_in", 3), "the inputs give"),
        (_set("fitted.tagged", "no"), "fitted tagged must be bool"),
        (_set("resources.names", None), "resources do not match the inputs ('names')"),
        (_set("resources.ngrams", {"fingerprint": 1}), "resource 'ngrams' needs a fingerprint"),
        (_member("ranker.npz", None), "member 'ranker.npz' is missing"),
        (_member("extra.bin", b"x"), "unexpected member 'extra.bin'"),
        (_member("joint.npz", b"\x00" * 64), "(joint.npz): not a tree ensemble"),
        (_member("lexicon.json", b"[1, 2]"), "(lexicon.json): a lexicon is an object"),
        (_member("phrases.json", b'{"new york": "x"}'), "(phrases.json): phrase rates must"),
        (_member("phrases.json", b'{"new york": NaN}'), "map n-grams to finite numbers"),
        (
            _member("lexicon.json", b'{"prior": 0.5, "tables": [{"a": [1.0, -2]}, {}, {}]}'),
            "lexicon entry 'a' is not [break sum, count] with 0 <= break sum <= count",
        ),
        (_set("params.decoding", {"max_candidates": 0}), "max_candidates must be at least 1"),
        (_set("params.classifier", "forest"), "classifier must be one of xgboost, logreg"),
        (_set("params.inner_folds", 1), "inner_folds must be at least 2, got 1"),
        (_set("fitted.joint", False), "unexpected member 'joint.npz'"),
        (_set("features", ["log_count"]), "its features are not the ones this qseg computes"),
        (_set("candidate_features", []), "its features are not the ones this qseg computes"),
        (_set("method", 7), "method must be a spec or null"),
    ],
)
def test_every_part_of_a_model_file_is_checked(saved, tmp_path, change, message):
    bad = rewrite(saved, tmp_path / "bad.qseg", change)
    with pytest.raises(ModelError, match=re.escape(message)) as e:
        models.load(bad, toy.resources())
    assert str(e.value).startswith(str(bad)) and "\n" not in str(e.value)


def _recorded(member: str, entry):
    """The manifest's entry of ``member`` replaced (``None``: removed)."""

    def change(meta, members):
        if entry is None:
            del meta[MANIFEST][member]
        else:
            meta[MANIFEST][member] = entry

    return change


def _flipped(member: str):
    """One bit of a member changed, its size kept."""

    def change(meta, members):
        data = bytearray(members[member])
        data[len(data) // 2] ^= 1
        members[member] = bytes(data)

    return change


SHA = "0" * 64


@pytest.mark.parametrize(
    "change, message",
    [
        (_flipped("joint.npz"), "(joint.npz): its SHA-256 is not the one meta.json records"),
        (_flipped("lexicon.json"), "(lexicon.json): its SHA-256 is not the one meta.json"),
        (_member("phrases.json", b"{}"), "(phrases.json): declares 2 bytes, meta.json records"),
        (_set(MANIFEST, []), "meta.json: members must map each member to its bytes and sha256"),
        (_recorded("joint.npz", {"bytes": 1}), "members must map each member to its bytes"),
        (_recorded("joint.npz", {"bytes": True, "sha256": SHA}), "members must map each"),
        (_recorded("joint.npz", {"bytes": 1, "sha256": "A" * 64}), "members must map each"),
        (_recorded("joint.npz", None), "members does not list the members present ('joint.npz')"),
        (_recorded("extra.bin", {"bytes": 1, "sha256": SHA}), "present ('extra.bin')"),
    ],
)
def test_every_member_is_verified_against_the_manifest(saved, tmp_path, change, message):
    bad = rewrite(saved, tmp_path / "bad.qseg", change, record=False)
    with pytest.raises(ModelError, match=re.escape(message)) as e:
        models.load(bad, toy.resources())
    assert str(e.value).startswith(str(bad)) and "\n" not in str(e.value)
    assert_one_line_error(qseg("segment", "--method", bad, "a b"), str(bad), message, status=1)


def test_the_manifest_lists_every_member_by_size_and_sha256(saved):
    with zipfile.ZipFile(saved) as zf:
        recorded = json.loads(zf.read("meta.json"))[MANIFEST]
        members = {n: zf.read(n) for n in zf.namelist() if n != "meta.json"}
    assert recorded == manifest(members) and set(recorded) == set(members)


def _unrecorded(meta, members):
    del meta[MANIFEST]


def _damaged_payload(path: Path, target: Path, member: str) -> Path:
    """A copy of a model file with a bit of ``member`` flipped as it lies compressed, its CRC
    left as it was."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 :][:4])
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 1
    target.write_bytes(bytes(data))
    return target


def test_a_file_without_a_manifest_loads_with_every_member_crc_checked(tmp_path, monkeypatch):
    """A file written before manifests is read as before, but every member in full, so that
    its zip CRC-32 catches a damaged carried member whatever the cache holds."""
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "cache"))
    model = toy.train(JOINT)
    carrying = tmp_path / "carrying.qseg"
    models.save(model, carrying, carry_titles=True)
    counts_only = replace(toy.resources(), titles=None)
    expected = [model.segment(q) for q in QUERIES]
    assert [models.load(carrying, counts_only).segment(q) for q in QUERIES] == expected
    old = rewrite(carrying, tmp_path / "old.qseg", _unrecorded, record=False)
    assert [models.load(old, counts_only).segment(q) for q in QUERIES] == expected
    damaged = _damaged_payload(old, tmp_path / "damaged.qseg", "titles.txt")
    with pytest.raises(ModelError, match=r"\(titles\.txt\): damaged member") as e:
        models.load(damaged, counts_only)  # the cache holds its intact titles
    assert str(e.value).startswith(str(damaged)) and "\n" not in str(e.value)


def test_a_joint_model_without_its_scorers_is_refused(saved, tmp_path):
    def drop(meta, members):
        for name in ("joint.npz", "phrases.json", "ranker.npz"):
            del members[name]

    bad = rewrite(saved, tmp_path / "gutted.qseg", drop)
    with pytest.raises(ModelError, match=r"member 'joint\.npz' is missing"):
        models.load(bad, toy.resources())


def test_a_scorer_in_the_place_of_another_is_refused(saved, tmp_path):
    with zipfile.ZipFile(saved) as zf:
        gap = zf.read("gap_model.npz")
    bad = rewrite(saved, tmp_path / "swapped.qseg", _member("joint.npz", gap))
    with pytest.raises(ModelError, match=r"\(joint\.npz\): the scorer takes \d+ features, not 29"):
        models.load(bad, toy.resources())


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({"coef": np.zeros(3)}, "coef has 3 values, expected"),
        ({"mean": np.zeros(5, dtype=np.float32)}, "mean is float32"),
        ({"fill": np.zeros((2, 2))}, "fill is float64 of shape (2, 2), expected a float64 vector"),
        ({"coef": lambda a: a[:, None]}, "expected a float64 vector"),  # (n, 1): said so
        ({"coef": lambda a: np.full_like(a, np.nan)}, "coef holds NaN or infinite values"),
        ({"scale": np.zeros_like}, "a scale of 0"),
    ],
)
def test_arrays_of_the_wrong_shape_or_type_are_refused(saved_logreg, tmp_path, arrays, message):
    data = _linear_model_with(saved_logreg, **arrays)
    bad = rewrite(saved_logreg, tmp_path / "bad.qseg", _member("gap_model.npz", data))
    with pytest.raises(ModelError, match=r"\(gap_model\.npz\): (a )?linear gap model: ") as e:
        models.load(bad, toy.resources())
    assert message in str(e.value)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"PK\x03\x04" + b"\x00" * 40, "not a linear gap model"),
        (b"not a zip at all", "not a linear gap model"),
    ],
)
def test_damaged_array_members_are_refused(saved_logreg, tmp_path, data, message):
    bad = rewrite(saved_logreg, tmp_path / "bad.qseg", _member("gap_model.npz", data))
    with pytest.raises(ModelError, match=message):
        models.load(bad, toy.resources())


def test_a_damaged_deflate_stream_is_one_line(saved, tmp_path):
    """Bytes flipped inside the compressed meta.json or a compressed member."""
    data = bytearray(saved.read_bytes())
    with zipfile.ZipFile(saved) as zf:
        infos = {info.filename: info for info in zf.infolist()}
    for name in ("meta.json", "lexicon.json"):
        info = infos[name]
        damaged = bytearray(data)
        start = info.header_offset + 30 + len(info.filename)
        for i in range(start + 2, start + min(info.compress_size, 40)):
            damaged[i] ^= 0x5A
        path = tmp_path / f"{name}.qseg"
        path.write_bytes(bytes(damaged))
        with pytest.raises(ModelError, match=r"not a readable model file|damaged member") as e:
            models.load(path, toy.resources())
        assert "\n" not in str(e.value)


def test_damaged_files_give_one_line_errors(saved, tmp_path, write):
    junk = write("junk.qseg", b"\x00garbage")
    truncated = write("cut.qseg", saved.read_bytes()[:-200])
    folder = tmp_path / "folder.qseg"
    folder.mkdir()
    for path, error, message in (
        (junk, ModelError, "not a readable model file"),
        (truncated, ModelError, "not a readable model file"),
        (folder, PathError, "is a directory"),
    ):
        with pytest.raises(error, match=message):
            models.load(path, toy.resources())
    bad = rewrite(saved, tmp_path / "shape.qseg", _set("params.inner_folds", [2]))
    assert_one_line_error(
        qseg("segment", "--method", bad, "a b"), "inner_folds must be int", status=1
    )


def test_shipped_models_are_addressed_by_name(saved, tmp_path):
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    (shipped / "toy-v1.qseg").write_bytes(saved.read_bytes())
    (shipped / "aliases.json").write_text('{"default": "toy-v1"}')
    assert models.shipped_names(shipped) == ["toy-v1", "default"]
    res = toy.resources()
    for name in ("default", "toy-v1"):
        loaded = open_segmenter(name, res, shipped=shipped)
        assert loaded.spec == name
        assert loaded.segment(QUERIES[0]) == models.load(saved, res).segment(QUERIES[0])
    with pytest.raises(SpecError, match=r"unknown method 'toy'; .*shipped model \(toy-v1, default"):
        open_segmenter("toy", res, shipped=shipped)


def test_untrained_and_unsaved_segmenters_say_so(tmp_path):
    with pytest.raises(SpecError, match=r"joint is trained first: `qseg train --method joint"):
        open_segmenter(JOINT, toy.resources())
    untrained = create(JOINT, toy.resources())
    with pytest.raises(QsegError, match="not trained yet"):
        untrained.segment("a b")
    with pytest.raises(QsegError, match="nothing to save"):
        models.save(untrained, tmp_path / "x.qseg")
    assert not (tmp_path / "x.qseg").exists()


def test_a_model_file_is_a_method_everywhere_a_spec_is(saved, tmp_path, write):
    """qseg segment (with --k, --cache, JSON), qseg evaluate --system, qseg ir-eval --system."""
    counts = write("counts.txt", "".join(f"{k}\t{v}\n" for k, v in toy.resources().ngrams.items()))
    titles = write("titles.txt", "\n".join(toy.PHRASES) + "\n")
    res = ["--ngrams", counts, "--titles", titles]
    model = models.load(saved, toy.resources())
    query = QUERIES[0]
    best = model.segment(query).to_pipe()
    assert out(qseg("segment", *res, "--method", saved, query)) == f"{best}\n"
    ranked = out(qseg("segment", *res, "--method", saved, "--k", "3", query)).splitlines()
    assert [line.split("\t")[:2] for line in ranked] == [
        [str(r), seg.to_pipe()] for r, (seg, _) in enumerate(model.rank(query, 3), start=1)
    ]
    stdin = f"a\t{query}\nb\t{QUERIES[1]}\na\t{query}\n"
    plain = out(qseg("segment", *res, "--method", saved, stdin=stdin))
    assert out(qseg("segment", *res, "--method", saved, "--cache", "1", stdin=stdin)) == plain
    record = json.loads(out(qseg("segment", *res, "--method", saved, "--format", "json", query)))
    assert record["segmentation"] == best and record["score"] == model.rank(query, 1)[0][1]

    gold = write("gold.txt", "".join(f"q{i}\t{s.to_pipe()}\n" for i, s in enumerate(toy.gold())))
    table = json.loads(
        out(
            qseg(
                "evaluate",
                "--gold",
                gold,
                *res,
                "--format",
                "json",
                "--system",
                f"toy={saved}",
                "--system",
                "naive=naive",
            )
        )
    )
    untrained = qseg("evaluate", "--gold", gold, *res, "--system", "f=features")
    assert_one_line_error(untrained, "features is trained first")
    scores = {row["system"]: row for row in table}
    assert scores["toy"]["queries"] == 150
    assert scores["toy"]["query_accuracy"] > scores["naive"]["query_accuracy"]

    docs = write("docs.tsv", "d1\tcheap new york yankees tickets\nd2\tnew tickets york\n")
    topics = write("topics.tsv", f"t1\t{query}\n")
    qrels = write("qrels", "t1 0 d1 2\nt1 0 d2 0\n")
    report = json.loads(
        out(
            qseg(
                "ir-eval",
                "--docs",
                docs,
                "--queries",
                topics,
                "--qrels",
                qrels,
                *res,
                "--system",
                f"toy={saved}",
                "--format",
                "json",
                "--quiet",
                "--cache-dir",
                tmp_path / "ir",
            )
        )
    )
    assert "toy QVRS" in report["columns"] and report["queries"] == 1


def test_training_through_the_library():
    queries = toy.gold(60)
    words, targets = [q.words for q in queries], list(queries)
    model = models.estimator(toy.TRAINED_SPECS["features"], toy.resources(), random_state=3, jobs=2)
    assert (model.random_state, model.n_jobs) == (3, 2) and not hasattr(model, "gap_model_")
    stages: list[str] = []
    model.fit(words, targets, progress=stages.append)
    assert stages == model.training_stages() == ["features", "gap model"]
    assert model.spec == toy.TRAINED_SPECS["features"].replace(")", ", random_state=3)")
    with pytest.raises(QsegError, match="two seeds: random_state=2"):
        models.estimator("features(random_state=2)", random_state=3)
    with pytest.raises(QsegError, match="method 'wiki' is not trained"):
        models.estimator("wiki")


def test_a_model_can_carry_its_title_set(tmp_path, monkeypatch):
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "cache"))
    model = toy.train(JOINT)
    path = tmp_path / "carrying.qseg"
    models.save(model, path, carry_titles=True)
    assert zipfile.ZipFile(path).read("titles.txt").decode().splitlines() == sorted(toy.PHRASES)
    counts_only = replace(toy.resources(), titles=None)
    loaded = models.load(path, counts_only)  # no titles given: the ones it carries
    assert [loaded.segment(q) for q in QUERIES] == [model.segment(q) for q in QUERIES]
    (store,) = (tmp_path / "cache").glob("carried-titles-*.qseg")  # built once, then mapped
    assert models.load(path, counts_only).source.titles.store.path == store
    with pytest.raises(ResourceMismatch, match="trained with other Wikipedia titles"):
        models.load(path, replace(counts_only, titles=TitleSet({"new york"})))
    assert models.load(path, toy.resources()).segment(QUERIES[0]) == model.segment(QUERIES[0])
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "empty-cache"))  # built from the member
    bad = rewrite(path, tmp_path / "bad.qseg", _member("titles.txt", b"\xff\xfe"))
    with pytest.raises(ModelError, match=r"\(titles\.txt\): titles: invalid UTF-8"):
        models.load(bad, counts_only)
    other = rewrite(path, tmp_path / "other.qseg", _member("titles.txt", b"new york\n"))
    with pytest.raises(ModelError, match=r"\(titles\.txt\): titles of fingerprint \w+, not"):
        models.load(other, counts_only)
    assert not list((tmp_path / "empty-cache").glob("*.qseg"))  # nothing wrong is cached
    # the member (verified whatever the cache holds) is decoded only where the cache lacks the
    # store its fingerprint names
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "cache"))
    assert models.load(other, counts_only).source.titles.store.path == store
    with pytest.raises(QsegError, match="trained without titles: it has none to carry"):
        models.save(toy.train(JOINT.replace(")", ", titles=false)")), path, carry_titles=True)


def test_a_model_can_carry_a_compact_title_set_packed(tmp_path, monkeypatch):
    """A compact title set travels packed (titles.npz, Elias-Fano coded) and comes back as the
    same store: the model segments as it did, on no title resource given."""
    from qseg.resources.store import build_from_entries

    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "cache"))
    compact = build_from_entries(
        dict.fromkeys(toy.PHRASES, 1), kind="titles", mode="compact", fingerprint_bits=12
    )
    resources = replace(toy.resources(), titles=TitleSet(store=compact))
    model = toy.train(JOINT, resources)
    path = tmp_path / "packed.qseg"
    models.save(model, path, carry_titles=True)
    names = zipfile.ZipFile(path).namelist()
    assert "titles.npz" in names and "titles.txt" not in names
    counts_only = replace(toy.resources(), titles=None)
    loaded = models.load(path, counts_only)
    assert loaded.source.titles.fingerprint == compact.fingerprint
    assert [loaded.segment(q) for q in QUERIES] == [model.segment(q) for q in QUERIES]
    assert len(list((tmp_path / "cache").glob("carried-titles-*.qseg"))) == 1
    monkeypatch.setenv("QSEG_CACHE", str(tmp_path / "empty-cache"))
    bad = rewrite(path, tmp_path / "bad.qseg", _member("titles.npz", b"not a zip"))
    with pytest.raises(ModelError, match=r"\(titles\.npz\): not a packed store"):
        models.load(bad, counts_only)

    def form(meta, members):
        meta["resources"]["titles"]["form"] = ["packed"]

    with pytest.raises(ModelError, match="resource 'titles' needs a fingerprint"):
        models.load(rewrite(path, tmp_path / "form.qseg", form), counts_only)
