"""The compiled inference path gives what the Python path gives: the same segmentation and the
same k-best list (same order, same scores) on every corpus query and on generated ones, for
every shipped model and style; it is safe where it is fast (random words of any length, threads
sharing one model)."""

from __future__ import annotations

import hashlib
import os
import random
import threading
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from qseg.segmenters._joint_kernel import KeyTable, numpy_sum

import qseg
from qseg.corpora import ir
from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import read_training_set
from qseg.query import normalize
from qseg.resources import NgramCounts
from qseg.resources.store import build_from_entries
from qseg.segmenters.break_model import BreakModel
from qseg.segmenters.compiled import MAX_COMPILED_WORDS, compile_model, complete_trees
from qseg.segmenters.routing import RoutedModel

pytestmark = pytest.mark.long

ROOT = Path(__file__).resolve().parents[1]

MODELS = (
    "qseg-default-v2",
    "qseg-default-v3",
    "qseg-default-v3(style=product)",
    "default(style=auto)",
)
"""Every shipped model and style the kernel covers: v2; v3 with its kind inferred (the domain
model in the kernel) and fixed; v4's router and both of its models."""

UNICODE_WORDS = ("東京", "naïve", "café", "straße", "ﬁle", "🙂", "x²", "١٢٣", "ǅemal", "ß")


@cache
def corpus_queries() -> tuple[tuple[str, ...], ...]:
    """The Webis training queries, QueryNER train and dev, the IR collections' queries."""
    data = SHARED / "data"
    if not data.exists():
        pytest.skip(f"the corpora are not found at {data} (../shared is absent)")
    queries = [tuple(w) for w in read_training_set(data / "webis-qsec-10-training").words.values()]
    for part in ("train", "dev"):
        queries += [
            tuple(q.segmentation.words)
            for q in read_queryner(data / "queryner" / f"{part}.jsonl").values()
        ]
    for read, name in (
        (ir.nfcorpus, "nfcorpus"),
        (ir.cranfield, "cranfield"),
        (ir.vaswani, "vaswani"),
    ):
        queries += [normalize(text) for text in read(data / "ir" / name).queries.values()]
    return tuple(normalize(q) for q in queries)


def generated_queries(count: int = 20_000, seed: int = 7) -> list[tuple[str, ...]]:
    """Queries made of corpus words and Unicode ones: one word, up to 40 words, repeated
    words, whole queries repeated."""
    rng = random.Random(seed)
    vocabulary = sorted({w for q in corpus_queries() for w in q}) + list(UNICODE_WORDS)
    out: list[tuple[str, ...]] = []
    while len(out) < count:
        shape = rng.random()
        if shape < 0.1:
            words = [rng.choice(vocabulary)]
        elif shape < 0.2:
            words = [rng.choice(vocabulary)] * rng.randint(2, 14)
        elif shape < 0.3 and out:
            words = list(rng.choice(out))
        elif shape < 0.4:
            words = rng.choices(vocabulary, k=rng.randint(13, 40))
        else:
            words = rng.choices(vocabulary, k=rng.randint(2, 12))
        out.append(normalize(words))
    return out


def members(model: BreakModel | RoutedModel) -> list[BreakModel]:
    return list(model.models.values()) if isinstance(model, RoutedModel) else [model]


@pytest.mark.parametrize("part", ["corpora", "generated, first half", "generated, second half"])
@pytest.mark.parametrize("spec", MODELS)
def test_the_kernel_segments_as_the_python_path(spec, part):
    model = qseg.segmenter(spec)
    assert all(m._kernel is not None for m in members(model))  # the kernel covers it
    reference = model.uncompiled()
    assert all(m._kernel is None for m in members(reference))
    # every corpus query; the 20,000 generated ones for the default (router and both models),
    # 2,000 for the older ones (the Python path takes 3-6 ms a long query: a sample of 150 of
    # more than 12 words from each part, each half of the generated ones a part)
    if part == "corpora":
        queries = list(corpus_queries())
    else:  # in halves, so that no test takes half a minute
        generated = generated_queries(20_000 if spec == MODELS[-1] else 2_000)
        half = len(generated) // 2
        queries = generated[:half] if part.endswith("first half") else generated[half:]
    queries = [q for q in queries if len(q) <= 12] + [q for q in queries if len(q) > 12][:150]
    got = [s.breaks for s in model.predict(queries)]
    expected = [s.breaks for s in reference.predict(queries)]
    wrong = [(q, g, e) for q, g, e in zip(queries, got, expected, strict=True) if g != e]
    assert not wrong, f"{len(wrong)} of {len(queries)} differ, e.g. {wrong[:3]}"
    if isinstance(model, RoutedModel) and model.style == "auto":  # the router, to the bit
        compiled = [model._router.predict(q) for q in queries]
        assert np.array_equal(np.array(compiled, dtype=np.float32), model.router.predict(queries))


@pytest.mark.parametrize("spec", MODELS)
def test_the_kernel_ranks_as_the_python_path(spec):
    model, reference = qseg.segmenter(spec), qseg.segmenter(spec).uncompiled()
    rng = random.Random(3)
    queries = rng.sample(list(corpus_queries()), 600) + rng.sample(generated_queries(), 400)
    for query in queries:
        k = rng.choice((1, 4, 7))
        got, expected = model.rank(query, k), reference.rank(query, k)
        assert [s for s, _ in got] == [s for s, _ in expected], query
        assert np.allclose([v for _, v in got], [v for _, v in expected], rtol=1e-9, atol=0)


def test_queries_the_kernel_does_not_take_go_the_python_way():
    model = qseg.segmenter("qseg-default-v3")
    kernel = model._kernel
    for n in (0, 1, MAX_COMPILED_WORDS + 1):
        with pytest.raises(ValueError, match=f"2 to {MAX_COMPILED_WORDS} words"):
            kernel.breaks(("tickets",) * n)
    for n in (MAX_COMPILED_WORDS, MAX_COMPILED_WORDS + 1):  # the kernel's last, the first after
        query = ("new", "york", "yankees", "tickets") * (n // 4) + ("tickets",) * (n % 4)
        assert model.segment(query) == model.uncompiled().segment(query)
    assert model.segment("tickets").breaks == ()
    tags = ["NNP", "NNP", "NNS"]  # tagged queries take the Python path: the same answer
    assert model.segment("new york tickets", tags) == model.uncompiled().segment(
        "new york tickets", tags
    )


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12),
        min_size=1,
        max_size=200,
    )
)
def test_random_words_of_any_length(words):
    model = kernel_model()
    try:
        query = normalize(words)
    except qseg.QueryError:
        return
    assert model.segment(query) == model.uncompiled().segment(query)
    if 2 <= len(query) <= MAX_COMPILED_WORDS:
        bits, scores = model._kernel.candidates(query, 9)
        assert bits.shape[1] == len(query) - 1 and len(bits) == len(scores) <= 9


@cache
def kernel_model() -> BreakModel:
    return qseg.segmenter("default").models["web"]


def test_a_word_from_the_kernels_word_cache_gives_what_its_lookups_give():
    """The kernel keeps what a query read of each word for the next query that has it: a
    query's candidates and scores are the same to the bit with its words looked up (a new
    kernel), put in the place of other words in the cache, kept there (asked again), or too
    long to keep (23 bytes or more)."""
    model = kernel_model()
    longest = "x" * 22  # the longest word the cache holds, and one byte more
    queries = [
        ("new", "york", "yankees", "tickets"),
        ("cheap", longest, "york", "tickets"),
        ("cheap", longest + "y", "tickets", "online"),
        ("straße", "東京", "café", "new", "york"),
    ]
    looked_up = [compile_model(model).candidates(q, 9) for q in queries]  # a new kernel
    kernel = compile_model(model)
    for i in range(20_000):  # 40,000 other words in the cache first
        kernel.breaks((f"w{i}", f"v{i}", "tickets"))
    for _ in range(2):  # then pushed out by the queries' words, then kept
        for (bits, scores), q in zip(looked_up, queries, strict=True):
            other_bits, other_scores = kernel.candidates(q, 9)
            assert np.array_equal(bits, other_bits) and np.array_equal(scores, other_scores), q
    reference = model.uncompiled()
    assert [model.segment(q) for q in queries] == [reference.segment(q) for q in queries]


@pytest.mark.parametrize("mode", ["exact", "compact"])
def test_the_kernel_reads_the_counts_of_long_spans_where_the_python_path_does(mode):
    """An exact store of n-grams of up to 3 words has none longer: the kernel does not look
    longer spans up there. A compact store may report one present (falsely, here often: 2
    fingerprint bits), and the Python path reads that count: the kernel looks them up too."""
    model = kernel_model()
    queries = [q for q in corpus_queries() if 4 <= len(q) <= 8][:400]
    entries = {
        " ".join(q[i : i + k]): 5 + i for q in queries for k in (1, 2, 3) for i in range(len(q))
    }
    options = {"fingerprint_bits": 2} if mode == "compact" else {}
    store = build_from_entries(entries, kind="counts", mode=mode, **options)
    assert NgramCounts(store=store).max_order == 3
    changed = replace(model, source=replace(model.source, counts=NgramCounts(store=store)))
    assert changed._kernel is not None
    got = [changed.segment(q) for q in queries]
    assert got == [changed.uncompiled().segment(q) for q in queries]
    if mode == "compact":  # the false counts of long spans change answers: they are read
        exact = NgramCounts(store=build_from_entries(entries, kind="counts"))
        plain = replace(model, source=replace(model.source, counts=exact))
        assert got != [plain.segment(q) for q in queries]


def test_threads_share_one_model():
    model = qseg.segmenter("default(style=auto)")
    queries = [q for q in generated_queries(2_500, seed=11) if len(q) <= 12]
    expected = [s.breaks for s in model.predict(queries)]
    results: dict[int, list] = {}

    def work(i: int) -> None:
        results[i] = [model.segment(q).breaks for q in queries]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results[i] == expected for i in range(8))


def test_the_kernel_sums_as_numpy_does():
    """The query-kind model's float32 margin is summed in numpy's order to the bit (one bit
    off would send a tree the other way); a log-probability, summed in float64, agrees with
    numpy's at the float32 the features take."""
    rng = np.random.default_rng(4)
    for length in [*range(1, 64), 127, 128, 129, 300, 1000]:
        for _ in range(5):
            x = (rng.standard_normal(length) * rng.uniform(0.01, 100, length)).astype(np.float32)
            assert numpy_sum(x) == np.add.reduceat(x, [0])[0], length
            logs = np.log(rng.uniform(1e-6, 1, (1, 2, length)))  # as joint's log_bits
            assert np.float32(numpy_sum(logs[0, 0])) == np.float32(logs.sum(axis=2)[0, 0])


def test_key_tables_find_what_a_dict_finds():
    rng = random.Random(2)
    keys = [
        " ".join(rng.choices(["new", "york", "東京", "ﬁle", "a"], k=rng.randint(1, 4)))
        for _ in range(3_000)
    ]
    table, expected = KeyTable(keys), {key: i for i, key in enumerate(keys)}  # the last wins
    assert table.size == len(keys)
    assert all(table.get(key) == i for key, i in expected.items())
    assert table.get("new yorkk") == table.get("") == table.get("york new york new york") == -1
    assert KeyTable([]).get("new") == -1
    with pytest.raises(ValueError, match="line break"):
        KeyTable(["new\nyork"])


def test_complete_trees_walk_to_the_same_leaves():
    trees = kernel_model().joint
    complete = complete_trees(trees)
    assert complete is not None and complete.depth == 5
    assert complete.leaves.shape == (len(trees.roots), 32)
    assert set(complete.leaves.ravel()) <= set(trees.value[trees.left < 0])


def test_models_the_kernel_does_not_cover_keep_the_python_path():
    model = kernel_model()
    assert compile_model(replace(model, joint=None)) is None
    assert model.uncompiled()._kernel is None


ASAN_RUN = """
import importlib.util, random, sys

spec = importlib.util.spec_from_file_location("qseg.segmenters._joint_kernel", sys.argv[1])
module = importlib.util.module_from_spec(spec)
sys.modules["qseg.segmenters._joint_kernel"] = module  # the checked build, not the installed
spec.loader.exec_module(module)

import qseg
from qseg.query import QueryError, normalize

model = qseg.segmenter("default(style=auto)")
rng = random.Random(5)
letters = "abcdefghijklmnopqrstuvwxyz0123456789éßü東京-&'"
known = ["new", "york", "the", "of", "tickets", "a", "ﬁle", "x²", "🙂"]
done = 0
for i in range(int(sys.argv[2])):
    length = rng.choice([1, 2, 3, 5, 8, 12, 13, 20, 40, 63, 64, 65, 100, 200])
    words = [
        rng.choice(known) if rng.random() < 0.5 else "".join(rng.choices(letters, k=5))
        for _ in range(length)
    ]
    try:
        query = normalize(words)
    except QueryError:
        continue
    got = model.segment(query)
    one = model.models[model.kinds([query])[0]]
    assert one._kernel is not None and type(one._kernel).__module__ == module.__name__
    if i % 10 == 0:
        assert got == one.uncompiled().segment(query), query
        if 2 <= len(query) <= 64:
            one._kernel.candidates(query, rng.choice([1, 4, 50, 300]))
    done += 1
print("segmented", done)
"""


def test_the_kernel_reads_and_writes_only_its_own_memory(tmp_path):
    """The kernel built with AddressSanitizer (every read and write of its buffers checked)
    segments 500 random queries of 1 to 200 words, every tenth compared with the Python
    path."""
    import shutil
    import subprocess
    import sys
    import sysconfig

    source = ROOT / "src" / "qseg" / "segmenters"
    translated = source / "_joint_kernel.c"
    gcc = shutil.which("gcc")
    found = (
        subprocess.run(
            [gcc or "gcc", "-print-file-name=libasan.so"], capture_output=True, text=True
        ).stdout.strip()
        if gcc
        else ""
    )
    if not translated.exists() or not gcc or not Path(found).is_file():
        pytest.skip(
            "needs gcc with AddressSanitizer (libasan) and the kernel's translated C source "
            f"({translated}, written by an in-place build: pip install -e .)"
        )
    flags = ["-shared", "-fPIC", "-O1", "-g", "-fsanitize=address", "-fno-omit-frame-pointer"]
    flags += [f"-I{sysconfig.get_paths()['include']}", f"-I{source}"]
    version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
    # built once for this C source, compiler and flags: the build is 8 s of the test
    key = hashlib.sha256("\0".join([translated.read_text(), version, *flags]).encode())
    built = ROOT / ".pytest_cache" / "asan" / f"_joint_kernel-{key.hexdigest()[:16]}.so"
    if not built.exists():
        built.parent.mkdir(parents=True, exist_ok=True)
        partial = built.with_suffix(f".{os.getpid()}.part")
        subprocess.run(
            [gcc, *flags, str(translated), "-o", str(partial)], check=True, capture_output=True
        )
        partial.replace(built)
    script = tmp_path / "run.py"
    script.write_text(ASAN_RUN, encoding="utf-8")
    env = {**os.environ, "LD_PRELOAD": str(Path(found).resolve()), "ASAN_OPTIONS": "detect_leaks=0"}
    result = subprocess.run(
        [sys.executable, str(script), str(built), "500"], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0 and "AddressSanitizer" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.startswith("segmented ")
