"""Adapting a trained model to a domain's annotations (``qseg train --from``, ``qseg.adapt``):
what the adapted model learns, its file, its base, the choice of how to adapt, the curves."""

from __future__ import annotations

import json
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import toy
from helpers import assert_one_line_error, out, qseg
from qseg.segmenters.learned._decoding import averaged_choice

import qseg as qs
from qseg import models
from qseg.evaluation.adaptation import Measured, choose, figures, learning_curve
from qseg.models.adapting import fit_adapted
from qseg.segmentation import Segmentation
from qseg.segmenters.learned.adaptation import Adaptation, merged_phrases
from qseg.segmenters.learned.lexicon import Lexicon
from qseg.segmenters.learned.trees import TreeEnsemble

JOINT = toy.TRAINED_SPECS["joint"]


def domain(n: int, seed: int) -> list[Segmentation]:
    """Toy queries segmented by another convention than the toy world's: a single word is
    joined to the unit after it ('cheap new york|hotel deals'), where the base model, trained
    on the toy world, breaks after it."""
    out = []
    for seg in toy.gold(n, seed):
        units = [" ".join(s) for s in seg.segments]
        joined: list[str] = []
        for unit in units:
            if joined and " " not in joined[-1] and joined[-1] in toy.WORDS:
                joined[-1] = f"{joined[-1]} {unit}"
            else:
                joined.append(unit)
        out.append(Segmentation.from_segments(joined))
    return out


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A small joint model of the toy world, saved (adapted models name their base's file)."""
    path = tmp_path_factory.mktemp("base") / "base.qseg"
    models.save(toy.train(JOINT), path)
    return path


@pytest.fixture(scope="module")
def adapted(base, tmp_path_factory):
    """The base adapted to 120 queries of the other convention, saved beside it."""
    model = qs.adapt(base, domain(120, 5), resources=toy.resources())
    path = base.with_name("adapted.qseg")
    models.save(model, path)
    return model, path


def accuracy(model, gold: list[Segmentation]) -> float:
    return figures(model.predict([g.words for g in gold]), gold).query


def test_the_adapted_model_learns_the_domains_convention(base, adapted):
    """Adapting must change the answers: on held-out queries of the domain it beats the base
    by far (a model equal to its base fails)."""
    model, _ = adapted
    held = domain(150, 9)
    changed = [h for h, g in zip(held, toy.gold(150, 9), strict=True) if h != g]
    before = models.load(base, toy.resources())
    assert len(changed) > 40 and accuracy(before, changed) < 0.1
    assert accuracy(model, changed) > 0.8 and accuracy(model, held) > accuracy(before, held) + 0.3
    assert model.adapted.selection["chosen"] in ("continue", "both", "fresh")
    figures_of = model.adapted.selection["figures"]
    assert figures_of["base"]["query_accuracy"] < figures_of["continue"]["query_accuracy"]
    assert figures_of.keys() == {"base", "continue", "both", "fresh"}


def test_its_file_names_the_base_and_holds_only_what_adapting_added(base, adapted):
    model, path = adapted
    with zipfile.ZipFile(path) as zf:
        meta = json.loads(zf.read("meta.json"))
        names = set(zf.namelist())
    assert meta["format"] == "qseg-adapted-model" and meta["queries"] == 120
    assert meta["base"]["path"] == str(base.resolve()) and meta["base"]["kind"] is None
    assert meta["base"]["fingerprint"] == models.load(base, toy.resources()).origin["fingerprint"]
    assert {"meta.json", "gap_trees.npz", "phrases.json"} <= names
    assert "vectors.npz" not in names and "titles.txt" not in names  # (the base's)
    loaded = models.load(path, toy.resources())
    queries = [g.words for g in domain(80, 11)]
    assert loaded.predict(queries) == model.predict(queries)
    assert loaded.spec == str(path) and loaded.origin["path"] == str(path.resolve())


def test_the_compiled_path_gives_the_python_paths_answers(adapted):
    _, path = adapted
    loaded = models.load(path, toy.resources())
    queries = [g.words for g in domain(200, 13)] + [toy.gold(40, 3)[i].words for i in range(40)]
    assert loaded._kernel is not None
    assert loaded.predict(queries) == loaded.uncompiled().predict(queries)
    for query in queries[:20]:
        assert loaded.rank(query, 3) == loaded.uncompiled().rank(query, 3)


@pytest.fixture(scope="module")
def both(base):
    """The base adapted from both starts, decoded together, saved beside it."""
    gold = domain(120, 5)
    model = fit_adapted(models.load(base, toy.resources()), [g.words for g in gold], gold, "both")
    path = base.with_name("both.qseg")
    models.save(model, path)
    return path


def test_both_starts_decode_together_alike_on_both_paths(both):
    """``both``: the continued model and the fresh one in one file, each query's answer the
    candidate whose probabilities (each model's softmax of its joint scores over the
    candidates it chooses among) add up highest, computed here with numpy."""
    with zipfile.ZipFile(both) as zf:
        meta, names = json.loads(zf.read("meta.json")), set(zf.namelist())
    assert meta["adaptation"]["start"] == "continue"
    assert meta["partner"]["adaptation"]["start"] == "fresh"
    assert {"partner/gap_trees.npz", "partner/phrases.json"} <= names
    loaded = models.load(both, toy.resources())
    assert loaded.partner is not None and loaded.partner.adapted.adaptation.start == "fresh"
    longer = [sum((g.words for g in toy.gold(9, i)), ()) for i in range(10)]
    queries = [g.words for g in domain(300, 17)] + longer
    answers = loaded.predict(queries)
    assert answers == loaded.uncompiled().predict(queries)
    assert answers == [loaded.segment(q) for q in queries]
    # a partner the kernel does not cover takes the pair to the Python path, not one model
    half = replace(loaded, partner=loaded.partner.uncompiled())
    assert half.predict(queries) == answers and half.segment(queries[0]) == answers[0]
    # a partner reading stores of its own (breaks_with opens the query for each) gives the same
    own = models.load(both, toy.resources.__wrapped__()).partner
    assert own is not None and own.source is not loaded.source and own._kernel is not None
    assert replace(loaded, partner=own).predict(queries) == answers
    alone = [replace(loaded, partner=None).predict(queries), loaded.partner.predict(queries)]
    assert all(sum(a != b for a, b in zip(answers, one, strict=True)) > 3 for one in alone)
    for query, answer in zip(queries[:100], answers[:100], strict=True):
        if len(query) < 2:
            continue
        total: dict[tuple[int, ...], float] = {}
        for one in (loaded, loaded.partner):
            bits, scores = one._kernel.candidates(query, one.decoding.max_candidates)
            p = np.exp(scores.astype(float) - scores.max())
            for row, share in zip(bits, p / p.sum(), strict=True):
                total[tuple(row.tolist())] = total.get(tuple(row.tolist()), 0.0) + share
        assert answer.breaks == max(total, key=total.get)
        for k in (1, 2, 6):
            ranked = loaded.rank(query, k)
            assert ranked == loaded.uncompiled().rank(query, k) and ranked[0][0] == answer
            assert ranked[0][1] == pytest.approx(total[answer.breaks] / 2)
            assert all(0 <= score <= 1 for _, score in ranked)
            assert len(ranked) == min(k, 2 ** (len(query) - 1))
    assert models.load(both, toy.resources()).predict(queries) == answers


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda meta: meta.update(partner=None), "partner must give adaptation"),
        (
            lambda meta: meta["partner"]["adaptation"].update(start="continue"),
            "its partner starts fresh, not continue and continue",
        ),
        (lambda meta: meta["partner"].update(parts=["x"]), "partner: parts must list"),
    ],
)
def test_a_damaged_pair_is_one_line(both, tmp_path, change, message):
    with zipfile.ZipFile(both) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["meta.json"])
    change(meta)
    damaged = tmp_path / "damaged.qseg"
    with zipfile.ZipFile(damaged, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, json.dumps(meta) if name == "meta.json" else data)
    assert_one_line_error(qseg("segment", "--method", damaged, "a b"), message, status=1)


def test_a_pair_is_not_adapted_again(both):
    with pytest.raises(qs.QsegError, match="decodes two adapted models together"):
        qs.adapt(both, domain(40, 3), resources=toy.resources())


def test_averaged_choice_adds_each_models_probabilities():
    a = np.array([[1, 0], [0, 1]], dtype=np.int8)
    b = np.array([[0, 1], [1, 1]], dtype=np.int8)
    # a: (1,0) 0.52, (0,1) 0.48; b: (0,1) 0.73, (1,1) 0.27: (0,1) has 1.21
    assert averaged_choice(a, np.float32([0.1, 0.02]), b, np.float32([1.0, 0.0])) == (0, 1)
    # b alone is sure of (1,1): 0.99 against a's 0.5 each
    assert averaged_choice(a, np.float32([0, 0]), b, np.float32([-5, 0])) == (1, 1)
    assert averaged_choice(a, np.float32([0, 0]), a, np.float32([0, 0])) == (1, 0)  # a tie
    with pytest.raises(ValueError, match="two models' candidates"):
        averaged_choice(a, np.float32([0, 0]), b[:, :1].copy(), np.float32([0, 0]))


def test_a_missing_or_changed_base_is_refused_in_one_line(base, tmp_path):
    own = tmp_path / "b" / "base.qseg"
    own.parent.mkdir()
    shutil.copy(base, own)
    adapted = tmp_path / "b" / "adapted.qseg"
    models.save(qs.adapt(own, domain(40, 3), resources=toy.resources()), adapted)
    res = toy_files(tmp_path)
    assert qseg("segment", *res, "--method", adapted, "a b").returncode == 0
    other = tmp_path / "c" / "base.qseg"
    other.parent.mkdir()
    models.save(toy.train(JOINT.replace("n_estimators=10", "n_estimators=11")), other)
    shutil.copy(adapted, other.with_name("adapted.qseg"))
    own.unlink()
    done = qseg("segment", *res, "--method", adapted, "a b")
    assert_one_line_error(done, f"its base model {own.resolve()} is missing", status=1)
    # moved with it, beside it: found there, but another model than it was adapted from
    done = qseg("segment", *res, "--method", other.with_name("adapted.qseg"), "a b")
    assert_one_line_error(done, "has changed since it was adapted", status=1)
    shutil.copy(base, other)  # the very base beside it: loads
    assert qseg("segment", *res, "--method", other.with_name("adapted.qseg"), "a b").returncode == 0


def test_a_tampered_adapted_file_is_one_line(adapted, tmp_path):
    _, path = adapted
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    meta = json.loads(members["meta.json"])
    meta["adaptation"]["weight"] = -1
    damaged = tmp_path / "damaged.qseg"
    with zipfile.ZipFile(damaged, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, json.dumps(meta) if name == "meta.json" else data)
    done = qseg("segment", "--method", damaged, "a b")
    assert_one_line_error(done, "adaptation must give", status=1)


def test_continued_trees_are_one_ensemble_equal_to_boosting_on(tmp_path):
    """The base's trees followed by trees boosted from its margins give, to the bit, what
    XGBoost gives from the base margin."""
    import xgboost as xgb

    rng = np.random.default_rng(0)
    x = rng.random((400, 5)).astype(np.float32)
    y = (x[:, 0] + 0.3 * x[:, 1] > 0.6).astype(float)
    first = xgb.train({"objective": "binary:logistic", "max_depth": 3}, xgb.DMatrix(x, y), 8)
    base = TreeEnsemble.from_booster(first, logistic=True)
    start = base.margins(x)
    more = xgb.train(
        {"objective": "binary:logistic", "max_depth": 2},
        xgb.DMatrix(x, 1 - y, base_margin=start),
        6,
    )
    joined = base.extended(TreeEnsemble.from_booster(more, logistic=True))
    expected = more.predict(xgb.DMatrix(x, base_margin=start))
    assert np.array_equal(joined.predict(x), expected)
    assert np.array_equal(base.extended(base.emptied()).predict(x), base.predict(x))
    with pytest.raises(ValueError, match="cannot extend"):
        base.extended(replace(base.emptied(), n_features=4))


def test_lexicon_and_phrases_merge_the_domains_counts():
    keys = [("a", "b", "a b"), ("a", "c", "a c")]
    own = Lexicon.learn(keys, np.array([1.0, 1.0]))
    theirs = Lexicon.learn([("a", "b", "a b")] * 2, np.array([0.0, 0.0]))
    merged = own.merged(theirs, 5.0)
    assert merged.tables[2]["a b"] == (1.0, 11.0) and merged.tables[2]["a c"] == (1.0, 1.0)
    assert merged.prior == pytest.approx(2 / 12)
    rates = merged_phrases({"a b": 0.9}, {"a b": (0.0, 2), "c d": (1.0, 1)}, Adaptation())
    assert rates["a b"] == pytest.approx(0.9 / 11) and rates["c d"] == pytest.approx(5.05 / 5.1)
    fresh = merged_phrases({"a b": 0.9}, {"c d": (1.0, 1)}, Adaptation(start="fresh"))
    assert set(fresh) == {"c d"}


def test_the_choice_takes_both_starts_together_unless_another_is_clearly_better():
    def measured(**right: list[int]) -> Measured:
        return Measured({}, {k: np.array(v, dtype=bool) for k, v in right.items()})

    few = measured(
        base=[1, 0, 1, 0, 1],
        both=[1, 1, 1, 0, 1],
        **{"continue": [1, 1, 1, 0, 1], "fresh": [1, 1, 1, 1, 1]},
    )
    assert choose(few) == "both"  # one query of five: luck as likely as not
    many = [1] * 60 + [0] * 40
    behind = measured(
        base=many, both=[0] * 100, **{"continue": many[:30] + [0] * 70, "fresh": [0] * 100}
    )
    assert choose(behind) == "base"
    ahead = measured(base=[0] * 100, both=many, **{"continue": many, "fresh": [1] * 95 + [0] * 5})
    assert choose(ahead) == "fresh"
    leaning = measured(base=[0] * 100, both=[0] * 100, **{"continue": many, "fresh": many})
    assert choose(leaning) == "continue"  # (a tie with fresh: the base's side first)


def test_the_command_line_adapts_and_draws_the_learning_curve(base, tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text("".join(f"q{i}\t{s.to_pipe()}\n" for i, s in enumerate(domain(60, 21))))
    res = toy_files(tmp_path)
    target = tmp_path / "out.qseg"
    done = qseg("train", "--from", base, "--gold", gold, *res, "--out", target, "--quiet")
    assert done.returncode == 0, done.stderr
    assert b"adapted" in done.stderr and b"cross-validation" in done.stderr
    query = "cheap new york hotel deals"
    model = models.load(target, toy.resources())
    assert out(qseg("segment", *res, "--method", target, query)) == (
        model.segment(query).to_pipe() + "\n"
    )
    plot = tmp_path / "curve.png"
    shown = qseg(
        "train", "--from", base, "--gold", gold, *res, "--curve", "--folds", "3",
        "--plot", plot, "--quiet",
    )  # fmt: skip
    table = out(shown).splitlines()
    assert table[2].split() == ["queries", "adapted", "base", "alone"]
    assert [row.split()[0] for row in table[3:]] == ["25", "40"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def toy_files(tmp_path: Path) -> list:
    counts = tmp_path / "counts.txt"
    counts.write_text("".join(f"{k}\t{v}\n" for k, v in toy.resources().ngrams.items()))
    titles = tmp_path / "titles.txt"
    titles.write_text("\n".join(toy.PHRASES) + "\n")
    return ["--ngrams", counts, "--titles", titles]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "joint"], "--method is for training from scratch"),
        (["--plot", "x.png", "--out", "m.qseg"], "--plot draws the learning curve"),
        ([], "give --out MODEL"),
        (["--folds", "1", "--out", "m.qseg"], "--folds must be between 2 and 20"),
    ],
)
def test_adapting_flags_that_do_not_go_together(base, tmp_path, args, message):
    done = qseg("train", "--from", base, "--gold", tmp_path / "none.tsv", *args)
    assert_one_line_error(done, message)


def test_a_routed_model_adapts_one_style_and_plain_training_refuses_curves(tmp_path):
    gold = tmp_path / "g.tsv"
    gold.write_text("q1\tnew york|hotels\n")
    done = qseg("train", "--from", "default(style=auto)", "--gold", gold, "--out", tmp_path / "m")
    assert_one_line_error(done, "adapt one of them", "default(style=auto)(style=web)")
    assert_one_line_error(qseg("train", "--gold", gold, "--curve"), "give --from SPEC")


def test_the_learning_curve_measures_each_model_on_held_out_folds(base):
    gold = domain(60, 31)
    model = models.load(base, toy.resources())
    points = learning_curve(model, [g.words for g in gold], gold, folds=3, sizes=[20, 40])
    assert [(p.size, p.model) for p in points] == [
        (size, name) for size in (20, 40) for name in ("adapted", "base", "alone")
    ]
    assert all(len(p.folds) == 3 for p in points)
    base_rows = [p for p in points if p.model == "base"]
    assert base_rows[0].folds == base_rows[1].folds  # the base learns nothing from the sizes
    grown = {p.model: p.mean().query for p in points if p.size == 40}
    assert grown["adapted"] > grown["base"]


def test_the_python_api_takes_segmentations_or_a_file(base, tmp_path):
    gold = domain(40, 41)
    from_list = qs.adapt(base, [g.to_pipe() for g in gold], resources=toy.resources())
    path = tmp_path / "g.tsv"
    path.write_text("".join(f"x{i}\t{g.to_pipe()}\n" for i, g in enumerate(gold)))
    from_file = qs.adapt(base, path, resources=toy.resources())
    queries = [g.words for g in domain(30, 43)]
    assert from_list.predict(queries) == from_file.predict(queries)
    with pytest.raises(qs.QsegError, match="at least 10 annotated queries"):
        qs.adapt(base, [g.to_pipe() for g in gold[:5]], resources=toy.resources())


def test_an_annotation_project_is_gold_each_annotator_a_vote(base, tmp_path):
    from qseg.annotation.gold import read_annotated
    from qseg.annotation.project import Project

    gold = list({g.query: g for g in domain(80, 51)}.values())[:40]  # (a project's are distinct)
    with Project.create(tmp_path / "p.db") as project:
        lines = [f"q{i}\t{g.query}\n".encode() for i, g in enumerate(gold)]
        project.add_queries(lines, "queries.txt")
        for name in ("ann", "bob"):
            project.add_annotator(name)
        for i, g in enumerate(gold):
            project.save("ann", f"q{i}", "flat", g.to_pipe())
            other = g if i % 4 else Segmentation(g.words, (1,) * len(g.breaks))
            project.save("bob", f"q{i}", "flat", other.to_pipe())
    data = read_annotated(tmp_path / "p.db")
    assert data.ids == [f"q{i}" for i in range(40)]
    assert [sum(r.votes for r in t) for t in data.targets] == [2] * 40
    assert data.targets[1][0].segmentation == gold[1] and len(data.targets[1]) == 1
    target = tmp_path / "from-project.qseg"
    done = qseg("train", "--from", base, "--gold", tmp_path / "p.db", *toy_files(tmp_path),
                "--out", target, "--quiet")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(zipfile.ZipFile(target).read("meta.json"))["queries"] == 40
    with Project.create(tmp_path / "empty.db"):
        pass
    empty = qseg("train", "--gold", tmp_path / "empty.db", "--out", tmp_path / "x.qseg")
    assert_one_line_error(empty, "no flat answers yet", status=1)


@pytest.mark.parametrize(
    ("gold", "queries", "message"),
    [
        ("q1\tnew york|hotels\nq1\tnew york hotels\n", None, "gold.tsv:2: duplicate query id"),
        ("q1\tnew york|hotels\n\nq2\tcheap|flights\n", None, "gold.tsv:2: expected 2"),
        ("q1\tnew york|hotels\n", "q1\tnew york motels\n", "queries.tsv:1: query q1 is"),
        ("q1\tnew york|hotels\n", "q1\tnew york hotels\nq2\tabc\n", "queries.tsv:2: 1 of its"),
    ],
)
def test_gold_lines_that_cannot_be_trained_on_are_named(tmp_path, gold, queries, message):
    (tmp_path / "gold.tsv").write_text(gold)
    extra = []
    if queries is not None:
        (tmp_path / "queries.tsv").write_text(queries)
        extra = ["--queries", tmp_path / "queries.tsv"]
    done = qseg("train", "--gold", tmp_path / "gold.tsv", *extra, "--out", tmp_path / "m.qseg")
    assert_one_line_error(done, message, status=1)
