"""Supervised break classifiers: features, training data, persistence, folds, determinism."""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED, webis_file
from helpers import PHRASES, WORDS, assert_one_line_error, out, qseg, small, toy_source, words_of

from qseg import models
from qseg.corpora.queryner import read_queryner, spans_of
from qseg.corpora.webis import (
    Reference,
    aligned_tags,
    read_tags,
    read_training_set,
)
from qseg.errors import InputError, QsegError
from qseg.evaluation.cross_validation import cross_validate, query_folds
from qseg.resources.counts import NgramCounts
from qseg.resources.word2vec import train_word_vectors
from qseg.segmentation import Segmentation
from qseg.segmenters.learned.gap_features import (
    FEATURE_NAMES,
    FeatureSource,
    gap_features,
    query_tables,
)
from qseg.segmenters.learned.joint import (
    AGREEMENT_SHARPNESS,
    CANDIDATE_FEATURES,
    MAX_JOINT_WORDS,
    candidate_bits,
    candidate_features,
    joint_target,
    vote_grades,
)
from qseg.segmenters.learned.supervised import BreakClassifier, vote_distribution
from qseg.segmenters.learned.trainable import Boosting, Decoding, Inputs


def feature(row, name):
    return row[FEATURE_NAMES.index(name)]


def test_gap_features_by_hand():
    x = gap_features(
        [("new", "york", "yankees", "tickets")], toy_source(), [("JJ", "NP", "NNS", "NN")]
    )
    assert x.shape == (3, len(FEATURE_NAMES))
    gap = x[1]  # new york | yankees tickets
    assert feature(gap, "words") == 4 and feature(gap, "position") == 1
    assert feature(gap, "from_end") == 1
    assert feature(gap, "L0_chars") == 4 and feature(gap, "R0_chars") == 7
    assert feature(gap, "L0_log_count") == pytest.approx(math.log(501))
    assert feature(gap, "log_count[0,2)") == pytest.approx(math.log(51))  # york yankees
    assert feature(gap, "log_count[-1,2)") == pytest.approx(math.log(41))  # new york yankees
    assert feature(gap, "log_count[0,3)") == 0  # york yankees tickets: not counted
    assert math.isnan(feature(gap, "log_count[-2,1)"))  # starts before the query
    total = sum(WORDS.values())
    mi = math.log(51) + math.log(total) - math.log(501) - math.log(81)
    assert feature(gap, "mi") == pytest.approx(mi, rel=1e-6)
    assert feature(gap, "max_log_count_3") == pytest.approx(math.log(41))
    assert feature(gap, "title_across") == 3
    assert feature(x[2], "title_ending_left") == 3  # the title ends at yankees
    assert feature(x[0], "title_starting_right") == 0
    assert feature(gap, "L0_pos_proper") == 1 and feature(gap, "R0_pos_noun") == 1
    assert feature(gap, "L1_pos_adjective") == 1
    assert feature(x[0], "L0_is_the") == 0
    the = gap_features([("the", "free", "4x4")], toy_source())
    assert feature(the[0], "L0_is_the") == 1 and feature(the[0], "R0_is_free") == 1
    assert feature(the[1], "R0_digit") == 1 and feature(the[0], "L0_function") == 1
    assert math.isnan(feature(the[0], "L0_pos_noun"))  # no tags given


def test_span_tables_equal_one_lookup_per_span():
    """The compiled scan (hash extended word by word, stopping early) = a lookup per span,
    also past the 64 words the kernel keeps on the stack."""
    source = toy_source(titles=("new york yankees", "york yankees tickets", "tickets new"))
    long = ("new", "york", "yankees", "tickets") * 20
    queries = [("new", "york", "yankees", "tickets"), ("tickets",), ("old", "york"), long]
    for words, table in zip(queries, query_tables(queries, source), strict=True):
        n = len(words)
        assert table.log_counts.shape == table.titles.shape == (n, n + 1)
        for a in range(n):
            for b in range(n + 1):
                key = " ".join(words[a:b])
                if b == a + 1:
                    expected = math.log1p(source.words.count(key))
                elif a + 1 < b <= a + 5:
                    expected = math.log1p(source.counts.count(key))
                else:
                    expected = math.nan
                assert table.log_counts[a, b] == pytest.approx(expected, nan_ok=True)
                assert table.titles[a, b] == (b - a > 1 and key in source.titles)
    rows = gap_features(queries, source)
    assert rows.shape == (3 + 0 + 1 + len(long) - 1, len(FEATURE_NAMES))
    assert feature(rows[4 + 2], "title_across") == 3  # yankees | tickets in the long query
    assert feature(rows[4 + 3], "title_across") == 2  # tickets | new


def test_a_title_counts_only_where_its_prefix_is_found():
    """Every stored title brings its prefixes; a key found without its prefix one word shorter
    (as a compact store's false positive would be) is no title in the span tables."""
    from qseg.resources._store import hash_keys
    from qseg.resources.store import StoreWriter
    from qseg.resources.titles import TitleSet

    def titles_of(keys: list[str]) -> TitleSet:
        hashes = hash_keys(keys, 0)
        order = np.argsort(hashes)
        writer = StoreWriter(None, kind="titles", mode="exact", n_keys=len(keys))
        writer.header["max_words"] = 4
        writer.add(hashes[order], np.ones(len(keys)), np.zeros(len(keys)), [keys[i] for i in order])
        return TitleSet(store=writer.finish())

    words = ("x", "y", "z", "w")
    alone = FeatureSource(NgramCounts(PHRASES), NgramCounts(WORDS), titles_of(["x y z w"]))
    (table,) = query_tables([words], alone)
    assert not table.titles.any()  # "x y z" is not there, so neither is "x y z w"
    chained = FeatureSource(
        NgramCounts(PHRASES), NgramCounts(WORDS), titles_of(["x y", "x y z", "x y z w"])
    )
    (table,) = query_tables([words], chained)
    assert [tuple(cell) for cell in np.argwhere(table.titles)] == [(0, 2), (0, 3), (0, 4)]


def test_candidates_cover_every_segmentation():
    bits = candidate_bits(4)
    assert len({tuple(b) for b in bits}) == 8
    source = toy_source()

    tables = query_tables([("new", "york", "yankees", "tickets")], source)
    (feats,) = candidate_features(
        [("new", "york", "yankees", "tickets")], [np.array([0.1, 0.2, 0.9])], tables, [{}]
    )
    assert feats.shape == (8, len(CANDIDATE_FEATURES))
    assert np.isnan(feats[:, CANDIDATE_FEATURES.index("noun_phrase_segments")]).all()  # no tags
    best = int(np.argmax(feats[:, 0]))  # the most probable break vector under the gap model
    assert tuple(bits[best]) == (0, 0, 1)
    assert feats[best, 0] == pytest.approx(math.log(0.9 * 0.8 * 0.9))


def test_joint_target_mixes_votes_and_agreement():
    votes = {(1, 0): 0.7, (1, 1): 0.3}  # 3 words: 7 annotators broke after word 1, 3 at both
    rows = {tuple(b): i for i, b in enumerate(candidate_bits(3))}
    shares = joint_target(3, votes, 0.0)
    assert shares[rows[1, 0]] == pytest.approx(0.7)
    assert shares[rows[1, 1]] == pytest.approx(0.3)
    assert shares.sum() == pytest.approx(1.0)
    # expected break agreement with the annotators, gap by gap, of each candidate
    agreement = {(0, 0): 0.5 * 0.7, (1, 0): 0.7 + 0.5 * 0.3, (0, 1): 0.5 * 0.3, (1, 1): 0.65}
    credit = {b: math.exp(AGREEMENT_SHARPNESS * a) for b, a in agreement.items()}
    total = sum(credit.values())
    mixed = joint_target(3, votes, 0.5)
    for b, row in rows.items():
        expected = 0.5 * votes.get(b, 0.0) + 0.5 * credit[b] / total
        assert mixed[row] == pytest.approx(expected)
    assert mixed[rows[0, 0]] > 0 == shares[rows[0, 0]]  # nobody chose it; one gap off
    with pytest.raises(QsegError, match="agreement_weight must be in"):
        BreakClassifier(decoding=Decoding(agreement_weight=1.5)).fit(
            [("a", "b")], [Segmentation.from_pipe("a b")]
        )


def test_vote_grades_count_votes_in_tenths():
    rows = {tuple(b): i for i, b in enumerate(candidate_bits(3))}
    grades = vote_grades(3, {(1, 0): 0.7, (1, 1): 0.3})
    assert grades[rows[1, 0]] == 7 and grades[rows[1, 1]] == 3
    assert grades.sum() == 10  # the other two candidates got no votes
    one = vote_grades(4, vote_distribution(Segmentation.from_pipe("a b|c d")))
    assert one[0b010] == 10 and one.sum() == 10  # a plain segmentation has all the votes


def test_candidate_unsupervised_scores_by_hand():
    """Paper 003's naive score and the segments' n-gram PMI (counts plus one, as in the
    span tables), per candidate of 'new york yankees tickets'."""
    words = ("new", "york", "yankees", "tickets")
    (feats,) = candidate_features(
        [words], [np.full(3, 0.5)], query_tables([words], toy_source()), [{}]
    )
    names = ("naive_log_score", "naive_log_score_gap_to_best", "cohesion_sum", "cohesion_min")

    def row(*breaks: int) -> list[float]:
        code = sum(b << g for g, b in enumerate(breaks))
        return [float(feats[code, CANDIDATE_FEATURES.index(name)]) for name in names]

    log_n = math.log(sum(WORDS.values()))
    new_york = math.log(101) - math.log(1001) - math.log(501) + log_n
    yankees_tickets = math.log(10) - math.log(81) - math.log(91) + log_n
    new_york_yankees = math.log(41) - math.log(1001) - math.log(501) - math.log(81) + 2 * log_n
    best = math.log(40 * 3**3)  # new york yankees | tickets
    assert row(0, 1, 0) == pytest.approx(
        [
            math.log(100 * 4 + 9 * 4),
            math.log(100 * 4 + 9 * 4) - best,
            new_york + yankees_tickets,
            min(new_york, yankees_tickets),
        ],
        rel=1e-5,
    )
    assert row(0, 0, 1) == pytest.approx([best, 0, new_york_yankees, new_york_yankees], rel=1e-5)
    assert row(0, 0, 0) == pytest.approx([0, -best, 0, 0])  # the 4-gram has no count: adds 0
    single = row(1, 1, 1)
    assert single[:3] == pytest.approx([0, -best, 0]) and math.isnan(single[3])


def test_candidate_part_of_speech_features():
    """Noun-phrase segments and breaks between nouns or after an adjective, by hand."""
    words = ("cheap", "nike", "shoes", "for", "kids")
    tags = ("JJ", "NNP", "NNS", "IN", "NNS")
    p = np.full(4, 0.5)
    (feats,) = candidate_features([words], [p], query_tables([words], toy_source()), [{}], [tags])
    names = (
        "noun_phrase_segments",
        "other_multiword_segments",
        "noun_phrase_words",
        "noun_noun_breaks",
        "adjective_breaks",
    )

    def row(*breaks: int) -> list[float]:
        code = sum(b << g for g, b in enumerate(breaks))
        return [float(feats[code, CANDIDATE_FEATURES.index(name)]) for name in names]

    assert row(1, 0, 1, 1) == [1, 0, 2, 0, 1]  # cheap | nike shoes | for | kids
    assert row(0, 0, 0, 1) == [0, 1, 0, 0, 0]  # cheap nike shoes for | kids
    assert row(0, 1, 0, 0) == [1, 1, 2, 1, 0]  # cheap nike | shoes for kids
    assert row(1, 1, 1, 1) == [0, 0, 0, 1, 1]


def test_candidate_features_do_not_depend_on_the_batch(monkeypatch):
    """Queries are grouped by length and cut into pieces; each block is what the query alone
    gets."""
    import qseg.segmenters.learned.joint as joint

    source = toy_source()
    rng = np.random.default_rng(1)
    queries = [tuple(rng.choice(list(WORDS), size=n)) for n in (2, 5, 3, 5, 5, 4, 5, 2)]
    probabilities = [rng.random(len(q) - 1) for q in queries]
    tables = query_tables(queries, source)
    phrases = [{"new york": 0.9}] * len(queries)
    tags = [
        tuple(rng.choice(["NN", "JJ", "IN"], size=len(q))) if i % 2 else None
        for i, q in enumerate(queries)
    ]
    alone = [
        candidate_features([q], [p], [tables[i]], [phrases[i]], [tags[i]])[0]
        for i, (q, p) in enumerate(zip(queries, probabilities, strict=True))
    ]
    monkeypatch.setattr(joint, "_CHUNK_CELLS", 16 * 15 * 2)  # two 5-word queries a piece
    together = candidate_features(queries, probabilities, tables, phrases, tags)
    for a, b in zip(alone, together, strict=True):
        np.testing.assert_array_equal(a, b)
    assert [len(b) for b in together] == [2 ** (len(q) - 1) for q in queries]


def test_vote_distribution_and_tags(write):
    a, b = Segmentation.from_pipe("new york|tickets"), Segmentation.from_pipe("new|york|tickets")
    assert vote_distribution([Reference(a, 8), Reference(b, 2)]) == {(0, 1): 0.8, (1, 1): 0.2}
    assert vote_distribution(a) == {(0, 1): 1.0}
    tags = read_tags(write("t.txt", "1\t['NN', 'NNS']\n2\t['NN', '.', 'NN']\n"))
    assert aligned_tags(("a", "b"), tags["1"]) == ("NN", "NNS")
    assert aligned_tags(("u.s.", "x"), tags["2"]) is None
    with pytest.raises(InputError, match=r"t2\.txt:1"):
        read_tags(write("t2.txt", "1\tNN NNS\n"))


def test_webis_training_set():
    """The released training folder read at once: votes, words, tags aligned to the words."""
    training = read_training_set(webis_file("webis-qsec-10-training-set-queries.txt").parent)
    assert len(training.votes) == len(training.words) == len(training.tags) == 3848
    assert training.words["1004593125"] == ("stainless", "steel", "chest", "freezers")
    assert training.tags["1004593125"] == ("JJ", "NN", "NN", "NNS")
    assert sum(t is None for t in training.tags.values()) == 127
    assert sum(r.votes for r in training.votes["1004593125"]) == 10
    assert training.ngram_file.is_file() and training.titles_file.is_file()


def test_queryner_reader(write):
    assert spans_of(["B-a", "I-a", "B-b", "O", "I-c", "I-c"]) == [
        (0, 2, "a"),
        (2, 3, "b"),
        (3, 4, "O"),
        (4, 6, "c"),
    ]
    line = {
        "example_id": 7,
        "tokens": ["Tire", "inflator", "|", "air"],
        "labels": ["B-x", "I-x", "O", "B-y"],
    }
    data = read_queryner(write("q.jsonl", json.dumps(line) + "\n"))
    assert data["7"].segmentation.to_pipe() == "tire inflator|air"
    assert data["7"].types == ("x", "y")
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        read_queryner(write("bad.jsonl", '{"tokens": []}\n'))


def test_queryner_files():
    path = SHARED / "data" / "queryner" / "train.jsonl"
    if not path.exists():
        pytest.skip(f"QueryNER not found at {path} (../shared is absent)")
    train = read_queryner(path)
    assert len(train) == 7841
    assert train["1978756"].segmentation.to_pipe() == "teeth whitening|sensitive teeth"
    assert train["2167353"].types[:2] == ("color", "core_product_type")


def query_source(resources) -> FeatureSource:
    return FeatureSource(resources.ngrams, resources.require_words(), resources.titles)


def test_fit_save_load_round_trip(voted, tmp_path):
    gold, source = voted
    ids = list(gold)
    stages = []
    model = small(source).fit(
        words_of(gold[i] for i in ids[:300]), [gold[i] for i in ids[:300]], progress=stages.append
    )
    assert model.get_params()["decoding"] is None and model.joint_ is not None
    assert stages == model.training_stages()
    assert stages[:3] == ["features", "gap model", "inner fold 1/3"]
    assert stages[-4:] == ["inner fold 3/3", "candidates", "joint scorer", "vote ranker"]
    test = words_of(gold[i] for i in ids[300:])
    path = tmp_path / "m.qseg"
    models.save(model, path)
    loaded = models.load(path, source)
    assert loaded.predict(test) == model.predict(test)
    assert loaded.spec == str(path) and model.spec == (
        "joint(name_statistics=false, word_vectors=false, contextual=false, inner_folds=3, "
        "n_estimators=20, max_depth=3)"
    )
    for a, b in zip(loaded.break_probabilities(test), model.break_probabilities(test), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    # the model beats always-break and never-break on unseen queries
    predicted = model.predict(test)
    majority = [max(gold[i], key=lambda r: r.votes).segmentation for i in ids[300:]]
    right = sum(p.breaks == m.breaks for p, m in zip(predicted, majority, strict=True))
    trivial = max(sum(all(m.breaks) for m in majority), sum(not any(m.breaks) for m in majority))
    assert right > trivial + 10


def test_logreg_and_independent(voted):
    gold, source = voted
    ids = list(gold)
    model = small(
        source,
        classifier="logreg",
        inputs=Inputs(lexicon=False),
        decoding=Decoding(joint=False),
    )
    stages = []
    model.fit(
        words_of(gold[i] for i in ids[:300]), [gold[i] for i in ids[:300]], progress=stages.append
    )
    assert stages == model.training_stages() == ["features", "gap model"]
    p = model.break_probabilities(words_of(gold[i] for i in ids[300:]))
    seg = model.predict(words_of(gold[i] for i in ids[300:]))
    assert all(s.breaks == tuple(int(v > 0.5) for v in q) for s, q in zip(seg, p, strict=True))


def test_joint_decoding_scores_the_most_probable_candidates(voted):
    """With one candidate the joint decoder keeps the gap classifier's most probable break
    vector (every gap decided alone); with more it may choose another, never a worse-ranked
    one than the max_candidates-th."""
    gold, source = voted
    ids = list(gold)
    train, test = ids[:300], words_of(gold[i] for i in ids[300:])
    fitted = small(source).fit(words_of(gold[i] for i in train), [gold[i] for i in train]).model_

    def with_candidates(n):  # the trained model, scoring n candidates (nothing is retrained)
        return replace(fitted, params=fitted.params | {"decoding": Decoding(max_candidates=n)})

    model = with_candidates(1)
    independent = [tuple(int(v > 0.5) for v in p) for p in model.break_probabilities(test)]
    assert [s.breaks for s in model.predict(test)] == independent
    model = with_candidates(2)
    two = [s.breaks for s in model.predict(test)]
    if not ids[0].startswith("toy-"):  # (the toy world's gaps are too clear to overrule)
        assert two != independent  # the joint scorer overrules the gap classifier somewhere
    for words, breaks, p in zip(test, two, model.break_probabilities(test), strict=True):
        p = np.clip(p, 1e-6, 1 - 1e-6)
        log_p = np.where(candidate_bits(len(words)) == 1, np.log(p), np.log1p(-p)).sum(axis=1)
        rank = int((log_p > log_p[int(np.dot(breaks, 1 << np.arange(len(p))))] + 1e-9).sum())
        assert rank < 2


def test_vote_ranker_scores_add_to_the_joint_scores(voted, tmp_path):
    """The chosen candidate is the one of the most probable max_candidates with the highest sum
    of the listwise and the LambdaMART margins; without rank_votes there is no ranker."""
    gold, source = voted
    ids = list(gold)
    train, test = ids[:300], words_of(gold[i] for i in ids[300:])
    model = small(source).fit(words_of(gold[i] for i in train), [gold[i] for i in train])
    models.save(model, tmp_path / "m")
    assert "ranker.npz" in zipfile.ZipFile(tmp_path / "m").namelist()
    plain = small(source, decoding=Decoding(rank_votes=False)).fit(
        words_of(gold[i] for i in train), [gold[i] for i in train]
    )
    assert plain.ranker_ is None
    models.save(plain, tmp_path / "p")
    assert "ranker.npz" not in zipfile.ZipFile(tmp_path / "p").namelist()
    joint = [w for w in test if 2 <= len(w) <= MAX_JOINT_WORDS]
    reloaded = models.load(tmp_path / "p", source)
    assert reloaded.ranker is None and reloaded.predict(joint) == plain.predict(joint)
    for m, boosters in ((model, (model.joint_, model.ranker_)), (plain, (plain.joint_,))):
        chosen = m.predict(joint)
        probabilities = m.break_probabilities(joint)
        blocks = candidate_features(
            joint,
            probabilities,
            query_tables(joint, query_source(source)),
            [m.phrases_] * len(joint),
        )
        for words, block, segmentation in zip(joint, blocks, chosen, strict=True):
            kept = np.argsort(-block[:, 0], kind="stable")[: Decoding().max_candidates]
            score = sum(b.inplace_predict(block[kept], predict_type="margin") for b in boosters)
            best = candidate_bits(len(words))[kept[int(np.argmax(score))]]
            assert segmentation.breaks == tuple(best.tolist())
    if not ids[0].startswith("toy-"):  # (the toy world's gaps are too clear to overrule)
        assert model.predict(joint) != plain.predict(joint)


def test_deterministic_given_seed(voted, tmp_path):
    gold, source = voted
    ids = list(gold)[:200]
    paths = []
    for name in ("a", "b"):
        model = small(source, random_state=3).fit(
            words_of(gold[i] for i in ids), [gold[i] for i in ids]
        )
        models.save(model, tmp_path / name)
        paths.append(tmp_path / name)
    assert paths[0].read_bytes() == paths[1].read_bytes()  # the same file, byte for byte


def test_folds_separate_queries(voted):
    gold, source = voted
    folds = query_folds(list(gold), 5, 0)
    tested = [i for _, test in folds for i in test]
    assert sorted(tested) == sorted(gold)
    for train, test in folds:
        assert not set(train) & set(test)
    seen = []

    class Spy(BreakClassifier):
        def fit(self, queries, y, tags=None):
            seen.append({" ".join(q) for q in queries})
            return super().fit(queries, y, tags)

    tiny = Boosting(n_estimators=5, max_depth=2)
    out = cross_validate(lambda: Spy(source, boosting=tiny, inner_folds=3), gold, k=4)
    assert list(out) == list(gold)
    for (train, test), trained in zip(query_folds(list(gold), 4, 0), seen, strict=True):
        assert not trained & {
            " ".join(gold[i][0].segmentation.words) for i in set(test) - set(train)
        } - {" ".join(gold[j][0].segmentation.words) for j in train}


def test_cross_validation_on_a_share_of_each_fold(voted):
    gold, source = voted
    gold = {i: gold[i] for i in list(gold)[:200]}
    seen: list[list[str]] = []

    class Spy(BreakClassifier):
        def fit(self, queries, y, tags=None):
            seen.append([" ".join(q) for q in queries])
            return super().fit(queries, y, tags)

    def run(share):
        seen.clear()
        tiny = Boosting(n_estimators=5, max_depth=2)
        make = lambda: Spy(source, boosting=tiny, inner_folds=3)  # noqa: E731
        out = cross_validate(make, gold, k=4, seed=3, train_share=share)
        assert list(out) == list(gold)
        return [list(s) for s in seen]

    text = {i: " ".join(gold[i][0].segmentation.words) for i in gold}
    halves = run(0.5)
    for (train, _), trained in zip(query_folds(list(gold), 4, 3), halves, strict=True):
        assert len(trained) == round(0.5 * len(train)) == 75
        assert set(trained) <= {text[i] for i in train}
        assert trained == [text[i] for i in train if text[i] in set(trained)]  # fold order kept
    assert run(0.5) == halves  # the same seed draws the same queries
    assert [len(t) for t in run(1.0)] == [150] * 4
    with pytest.raises(QsegError, match="train_share"):
        cross_validate(lambda: Spy(source), gold, train_share=0)


def test_word_vectors(write):
    corpus = write("c.txt", "new york yankees\t1000\nyankees tickets\t3\ncheap tickets\n" * 5)
    a = train_word_vectors(corpus, dimensions=8, seed=1)
    b = train_word_vectors(corpus, dimensions=8, seed=1)
    assert a.vocabulary == b.vocabulary and set(a.vocabulary) == {
        "new",
        "york",
        "yankees",
        "tickets",
        "cheap",
    }
    np.testing.assert_array_equal(a.vectors, b.vectors)
    assert a.lookup(["nope"]).tolist() == [[0.0] * 8]
    with pytest.raises(InputError, match="not an integer"):
        train_word_vectors(write("bad.txt", "a b\tmany\n"))
    with pytest.raises(InputError, match="no words"):
        train_word_vectors(write("empty.txt", "\n"))


def _vectors_under(kernels: str, corpus: Path, trainer: str) -> bytes:
    """The vectors ``trainer`` (a function of qseg.resources.word2vec) makes of ``corpus``
    in a fresh process whose OpenBLAS picked the ``kernels`` of another CPU."""
    settings = "dict(dimensions=32, window=2, epochs=2, min_count=1, seed=0)"
    call = {
        "train_here": f"e.train_here(sys.argv[1], {settings})",
        "train_word_vectors": f"e.train_word_vectors(sys.argv[1], **{settings})",
    }[trainer]
    code = (
        "import sys; from qseg.resources import word2vec as e; "
        f"sys.stdout.buffer.write({call}.to_bytes())"
    )
    env = {**os.environ, "OPENBLAS_CORETYPE": kernels}
    return subprocess.run(
        [sys.executable, "-c", code, str(corpus)], env=env, capture_output=True, check=True
    ).stdout


def test_word_vectors_do_not_depend_on_the_cpu_kernels(write):
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the OpenBLAS kernel names here are x86-64 ones")
    # two kernel choices that any x86-64 CPU with AVX runs stand in for two machines
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    corpus = write("c.txt", "".join(" ".join(rng.choice(words, 5)) + "\n" for _ in range(4000)))
    # train_word_vectors always trains with the baseline kernels, whichever the CPU picks
    # (whether two kernels round differently is a property of the CPU, so not asserted)
    baseline = _vectors_under("Prescott", corpus, "train_here")
    fixed = {k: _vectors_under(k, corpus, "train_word_vectors") for k in ("Sandybridge", "Haswell")}
    assert fixed["Sandybridge"] == fixed["Haswell"] == baseline


def _webis_flags() -> list[str | Path]:
    """The resource flags of the README's Webis commands."""
    data = "data/webis-qsec-10-training-set-"
    return [
        "--ngrams",
        webis_file(data + "n-gram-web-frequencies-google.txt"),
        "--titles",
        webis_file(data + "n-gram-wikipedia-titles.txt"),
    ]


def test_cli_train_and_segment(tmp_path, write):
    gold_path = webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt")
    flags = _webis_flags()
    queries = webis_file("webis-qsec-10-training-set-queries.txt").read_text().splitlines()
    train = write("train.txt", "\n".join(queries[:300]) + "\n")
    model = tmp_path / "m.qseg"
    result = qseg(
        "train",
        "--method",
        "features",
        "--queries",
        train,
        "--gold",
        gold_path,
        *flags,
        "--out",
        model,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert "trained features on 300 queries" in result.stderr.decode()
    assert "part-of-speech" not in result.stderr.decode()
    assert "training features:" in result.stderr.decode()  # the progress bar
    stdin = "\n".join(queries[300:310]) + "\n"
    text = out(qseg("segment", "--method", model, *flags, stdin=stdin))
    assert out(qseg("segment", "--model", model, *flags, stdin=stdin)) == text  # the alias
    lines = text.splitlines()
    assert len(lines) == 10
    for line, query in zip(lines, queries[300:310], strict=True):
        ident, seg = line.split("\t")
        assert ident == query.split("\t")[0]
        assert Segmentation.from_pipe(seg).query == query.split("\t")[1]
    assert_one_line_error(
        qseg("train", "--method", "embeddings", "--gold", gold_path, *flags, "--out", model),
        "--corpus",
    )
    # A wrong model file is refused before the built-in resources are built (into an empty
    # cache here), so the error is the only line and nothing is left in the cache.
    empty_cache = tmp_path / "empty-cache"
    empty_cache.mkdir()
    junk = qseg("segment", "--model", write("x.qseg", "nope"), "a b",
                env={"QSEG_CACHE": str(empty_cache)})  # fmt: skip
    assert_one_line_error(junk, "x.qseg", "not a readable model file", status=1)
    assert not any(empty_cache.iterdir())
    assert_one_line_error(qseg("segment", "--model", tmp_path / "none.qseg", "a b"),
                          "none.qseg", "no such model file")  # fmt: skip
    pos = webis_file("data/webis-qsec-10-training-set-queries-pos-tagged.txt")
    tagged = qseg("segment", "--model", model, *flags, "--pos", pos, stdin=queries[300] + "\n")
    assert out(tagged) == text.splitlines()[0] + "\n"
    assert "does not use part-of-speech tags" in tagged.stderr.decode()


def test_cli_part_of_speech_tags(tmp_path, write):
    """`--pos` trains on tags and segments with them, and says which queries went without."""
    flags = _webis_flags()
    pos = webis_file("data/webis-qsec-10-training-set-queries-pos-tagged.txt")
    lines = webis_file("webis-qsec-10-training-set-queries.txt").read_text().splitlines()
    tags = read_tags(pos)
    rows = [line.split("\t") for line in lines[:300]]
    misaligned = sum(len(tags[i]) != len(q.split()) for i, q in rows)
    assert misaligned > 0  # the Webis tagger split some words, e.g. u.s.
    model = tmp_path / "pos.qseg"
    gold = webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt")
    queries = write("train.txt", "\n".join(lines[:300]) + "\n")
    trained = qseg("train", "--method", "features", "--queries", queries, "--gold", gold,
                   *flags, "--pos", pos, "--out", model, "--quiet")  # fmt: skip
    assert trained.returncode == 0, trained.stderr.decode()
    assert "training features:" not in trained.stderr.decode()
    assert f"{misaligned} of 300 queries have no part-of-speech tags" in trained.stderr.decode()

    # two queries whose ids the tag file does not hold
    tagged = [f"{i}\t{q}" for i, q in (line.split("\t") for line in lines[300:400])
              if len(tags[i]) == len(q.split())]  # fmt: skip
    stdin = "\n".join([*tagged[:8], "x1\tcheap nike shoes", "x2\tnew york yankees tickets"])
    result = qseg("segment", "--model", model, *flags, "--pos", pos, stdin=stdin)
    assert len(out(result).splitlines()) == 10
    assert "2 of 10 queries have no part-of-speech tags" in result.stderr.decode()
    untagged = qseg("segment", "--method", model, *flags, stdin=stdin)
    assert len(out(untagged).splitlines()) == 10
    assert "without --pos every query goes without tag features" in untagged.stderr.decode()


def test_the_svm_breaks_where_its_decision_value_is_positive():
    """paper 004's classifier: a linear SVM (hinge loss); its probability is the logistic of
    the decision value, so a break falls exactly where the SVM decides one."""
    import toy
    from sklearn.svm import LinearSVC

    from qseg.segmenters.learned.gap_models import LinearGapModel

    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    rates = (x[:, 0] + 0.3 * x[:, 1] > 0).astype(float)
    model = LinearGapModel.fit(x, rates, seed=0, loss="hinge")
    z = (x - model.mean) / model.scale
    svm = LinearSVC(C=1.0, max_iter=20000, random_state=0).fit(
        np.vstack([z, z]), np.r_[np.ones(200), np.zeros(200)], sample_weight=np.r_[rates, 1 - rates]
    )
    assert ((model.predict(x) > 0.5) == (svm.decision_function(z) > 0)).all()
    assert ((model.predict(x) > 0.5) == (rates > 0.5)).mean() > 0.95
    trained = toy.train("features(classifier=svm)")
    assert trained.spec == "features(classifier=svm)"


def test_pair_counts_skip_a_word_across_the_gap():
    """paper 004's L0 R1 and L1 R0 counts: "female bus driver" -> C(female driver)."""
    from qseg.segmenters.learned.gap_features import pair_count_features

    counts = NgramCounts({"female driver": 99, "female": 5, "bus": 5, "driver": 5})
    rows = pair_count_features([("female", "bus", "driver"), ("a", "b")], counts)
    assert rows.shape == (3, 2)
    assert rows[0, 0] == pytest.approx(np.log(100))  # gap 0: L0 "female", R1 "driver"
    assert np.isnan(rows[0, 1])  # no L1 before "female"
    assert np.isnan(rows[1, 0]) and rows[1, 1] == pytest.approx(np.log(100))  # L1 R0
    assert np.isnan(rows[2]).all()  # a two-word query has neither pair


def test_the_cached_candidate_layouts_are_read_only():
    from qseg.segmenters.learned.joint import candidate_bits

    bits = candidate_bits(4)
    with pytest.raises(ValueError, match="read-only"):
        bits[0, 0] = 1
    assert candidate_bits(4)[0].tolist() == [0, 0, 0]


def test_a_target_without_votes_is_a_clear_error():
    from qseg.errors import InputError
    from qseg.segmentation import Reference
    from qseg.segmenters.learned.supervised import vote_distribution

    with pytest.raises(InputError, match="the query 'new york' has no votes to learn from"):
        vote_distribution([Reference(Segmentation.from_pipe("new|york"), 0)])


def test_predict_follows_the_fitted_state_not_later_parameters():
    """Parameters set after fit() describe the next fit; predict keeps to the fitted model
    (its inputs and its n_features_in_), as scikit-learn's estimators do."""
    from dataclasses import replace

    import toy

    model = toy.train(toy.TRAINED_SPECS["features"])
    queries = [q.query for q in toy.gold(20, seed=5)]
    before = model.predict(queries)
    inputs = model.get_params()["inputs"]
    model.set_params(inputs=replace(inputs, lexicon=not inputs.lexicon, titles=False))
    assert model.predict(queries) == before
    assert model.model_.n_features == model.n_features_in_
    wider = replace(model.model_, n_features=model.n_features_in_ + 1)
    with pytest.raises(QsegError, match=f"fitted on {model.n_features_in_ + 1}"):
        wider.predict(queries)


@pytest.mark.parametrize("domain", [False, True])
def test_inner_folds_predict_a_fold_without_its_labels(monkeypatch, domain):
    """The joint scorer learns from the gap model's inner-fold predictions: those for a fold's
    queries must not depend on that fold's labels, not even through the lexicon learnt for the
    other folds' queries (a second-order leak: relabelling the fold changed them)."""
    import toy
    from sklearn.model_selection import KFold

    from qseg.segmenters.learned import supervised

    votes = toy.votes(120, seed=2)
    words = [refs[0].segmentation.words for refs in votes.values()]
    seen: list[list[np.ndarray]] = []
    original = supervised.candidate_features

    def spy(words, probabilities, *rest):  # what the joint scorer learns from
        seen.append([np.array(p) for p in probabilities])
        return original(words, probabilities, *rest)

    monkeypatch.setattr(supervised, "candidate_features", spy)
    spec = Inputs(domain=domain)  # the paper 004 features, the lexicon (and the domain)
    kinds = ["web" if i % 3 else "product" for i in range(len(words))] if domain else None
    targets = list(votes.values())
    small(toy.resources(), inputs=spec).fit(words, targets, domains=kinds)
    _, held = next(KFold(3, shuffle=True, random_state=0).split(words))
    flipped = [
        [Reference(Segmentation(w, [1 - b for b in t[0].segmentation.breaks]), 1)]
        if i in held
        else t
        for i, (w, t) in enumerate(zip(words, targets, strict=True))
    ]
    kinds_flipped = kinds and [
        {"web": "product", "product": "web"}[k] if i in held else k for i, k in enumerate(kinds)
    ]  # the query kinds are labels too
    small(toy.resources(), inputs=spec).fit(words, flipped, domains=kinds_flipped)
    chosen = [i for i, w in enumerate(words) if 2 <= len(w) <= MAX_JOINT_WORDS]
    compared = [k for k, i in enumerate(chosen) if i in held]
    assert len(compared) > 20
    for k in compared:
        np.testing.assert_array_equal(seen[0][k], seen[1][k])
    assert any(not np.array_equal(a, b) for a, b in zip(*seen, strict=True))  # the rest moved


def test_joint_with_learnt_inputs_needs_three_inner_folds():
    """Each inner fold learns the lexicon without itself and one other fold: two folds leave
    nothing to learn from (a clear error); without joint decoding two are enough."""
    import toy

    votes = toy.votes(60)
    words = [refs[0].segmentation.words for refs in votes.values()]
    with pytest.raises(QsegError, match="inner_folds must be at least 3, got 2"):
        small(toy.resources(), inputs=Inputs()).set_params(inner_folds=2).fit(
            words, list(votes.values())
        )
    independent = small(toy.resources(), inputs=Inputs(), decoding=Decoding(joint=False))
    independent.set_params(inner_folds=2).fit(words, list(votes.values()))
    assert independent.joint_ is None
