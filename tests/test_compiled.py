"""The compiled inference path gives what the Python path gives: the same segmentation and the
same k-best list (same order, same scores) on every corpus query and on generated ones, for
every shipped model and style; it is safe where it is fast (random words of any length, threads
sharing one model)."""

from __future__ import annotations

import hashlib
import os
import random
import sys
import threading
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from conftest import SHARED
from hypothesis import given, settings
from hypothesis import strategies as st
from qseg.segmenters.learned._key_table import KeyTable
from qseg.segmenters.learned._sums import numpy_sum

import qseg
from qseg.corpora import ir
from qseg.corpora.queryner import read_queryner
from qseg.corpora.webis import read_training_set
from qseg.query import normalize
from qseg.resources import NgramCounts
from qseg.resources.store import build_from_entries
from qseg.segmenters.learned.break_model import BreakModel
from qseg.segmenters.learned.compiled import MAX_COMPILED_WORDS, compile_model, complete_trees
from qseg.segmenters.learned.routing import RoutedModel

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


def with_max_candidates(model: BreakModel, count: object) -> BreakModel:
    """``model`` made in memory with ``decoding.max_candidates`` set to ``count``."""
    decoding = replace(model.decoding, max_candidates=count)
    return replace(model, params={**model.params, "decoding": decoding})


@pytest.mark.parametrize("count", [0, -1, 2.5, True])
def test_a_model_made_with_an_unusable_max_candidates_is_refused_alike_on_both_paths(count):
    """``max_candidates`` sizes the kernel's buffers (0 read past one, -1 asked for 2^64
    bytes) and the Python path's window (it failed on empty arrays, or answered from all but
    the last candidate): a model made in memory with one it cannot use is refused in one line
    where the kernel is made and on the Python path alike, whatever the query."""
    bad = with_max_candidates(kernel_model(), count)
    message = "max_candidates must be"
    with pytest.raises(qseg.QsegError, match=message):
        compile_model(bad)
    for path in (bad, bad.uncompiled()):
        for query in ("tickets", "new york yankees tickets", "new york yankees tickets " * 4):
            with pytest.raises(qseg.QsegError, match=message) as error:
                path.segment(query)
            assert "\n" not in str(error.value)
            with pytest.raises(qseg.QsegError, match=message):
                path.rank(query, 3)
            with pytest.raises(qseg.QsegError, match=message):
                list(path.segment_many([query], errors="skip"))


def test_a_large_max_candidates_is_what_the_python_path_makes_of_it():
    """Up to all the candidates a query has (2^(n - 1)): the kernel answers as the Python path
    does, where it asked for 16 TB from 13 words."""
    large = with_max_candidates(kernel_model(), 2**40)
    reference = large.uncompiled()
    for query in (
        "new york yankees tickets",
        "cheap new york yankees tickets online for the game at the stadium tonight",
    ):
        assert large.segment(query) == reference.segment(query)
        got, expected = large.rank(query, 5), reference.rank(query, 5)
        assert [s for s, _ in got] == [s for s, _ in expected]


@pytest.mark.parametrize("spec", ["default", "naive", "wiki"])
def test_a_query_that_is_not_unicode_text_is_a_query_error(spec):
    """A lone surrogate (undecodable bytes read with ``surrogateescape``) has no UTF-8 form for
    the kernels: a :class:`~qseg.QueryError` like any query that cannot be segmented, which
    ``segment_many(errors="skip")`` leaves out and goes on."""
    segmenter = qseg.segmenter(spec)
    long = " ".join(["new york yankees tickets"] * 20) + " \udcff"  # 81 words: the heap arrays
    for bad in ("a \udcff b", ["new", "york\ud800"], long):
        with pytest.raises(qseg.QueryError, match="lone surrogate") as error:
            segmenter.segment(bad)
        assert "\n" not in str(error.value)
        with pytest.raises(qseg.QueryError, match="lone surrogate"):
            segmenter.rank(bad, 2)
        queries = ["new york yankees", bad, "cheap tickets"]
        got = list(segmenter.segment_many(queries, errors="skip"))
        assert got == [segmenter.segment(q) for q in (queries[0], queries[2])]
        with pytest.raises(qseg.QueryError, match=r"query 1 \(.*lone surrogate"):
            list(segmenter.segment_many(queries))


LEAK_RUN = """
import gc, os, sys
import qseg

def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

best = qseg.segmenter("naive").scorer.best
bad = ("new", "york", "yankees", "tickets") * 250 + ("b\\udcff",)
for calls in (50, int(sys.argv[1])):  # the first round makes what is made once
    gc.collect()
    before = resident()
    for _ in range(calls):
        try:
            best(bad)
        except UnicodeEncodeError:
            pass
    gc.collect()
print(resident() - before)
"""


def test_no_error_path_leaks_the_word_arrays_of_a_long_query(tmp_path):
    """A query of more than 64 words has its words' pointers and lengths on the heap: a word
    without UTF-8 (a lone surrogate, which only a caller bypassing ``normalize`` can pass)
    raises before they are allocated, and every caller frees them however it ends. Checked
    twice: in a fresh process (no freed memory that a leak would fill first), resident memory
    over 5,000 such calls of 1,001 words, 16 KB of arrays each (a leak grew it by 78 MiB);
    and exactly with ``tracemalloc``, which sees the arrays (a successful call's peak holds
    them) and finds none left after 200 failed calls of each kernel's entry that takes any
    length."""
    import gc
    import subprocess
    import tracemalloc

    from qseg.segmenters.learned._gap_kernel import name_edge_counts, span_tables

    from qseg.segmenters.learned.compiled import domain_kernel

    if sys.platform.startswith("linux"):
        script = tmp_path / "leak.py"
        script.write_text(LEAK_RUN, encoding="utf-8")
        grown = subprocess.run(
            [sys.executable, str(script), "5000"], capture_output=True, text=True, check=True
        )
        assert int(grown.stdout) < 8 << 20, f"{int(grown.stdout) >> 20} MiB more"
    naive, source = qseg.segmenter("naive"), kernel_model().source
    counts, words, titles, names = (source.counts, source.words, source.titles, source.names)
    domain = domain_kernel(qseg.segmenter("qseg-default-v3").domain)
    good = ("new", "york", "yankees", "tickets") * 250
    bad = (*good[:-1], "b\udcff")
    entries = [
        naive.scorer.best,
        naive.scorer.table,
        lambda w: span_tables([w], counts.view, words.view, titles.view, 5, 5),
        lambda w: name_edge_counts([w], names.view),
        domain.predict,
    ]
    tracemalloc.start()
    try:
        for entry in entries:
            with pytest.raises(UnicodeEncodeError):
                entry(bad)  # (anything made once, made before counting)
            entry(good)
            gc.collect()
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            entry(good)
            assert tracemalloc.get_traced_memory()[1] - start >= 16 * len(good)  # seen
            gc.collect()
            start = tracemalloc.get_traced_memory()[0]
            for _ in range(200):
                with pytest.raises(UnicodeEncodeError):
                    entry(bad)
            gc.collect()
            assert tracemalloc.get_traced_memory()[0] - start < 16 * len(good), entry
    finally:
        tracemalloc.stop()


def test_keys_no_query_can_equal_leave_a_model_made_in_memory_its_kernel():
    """A phrase or lexicon key holding a line break or a lone surrogate, which a model file is
    refused for (tests/test_model_fuzz.py), in a model made in memory: its kernel holds the
    other keys and answers as the Python path, which never finds those either."""
    model = kernel_model()
    assert model.lexicon is not None
    odd = {"new\nyork": 0.99, "yankees \udcff": 0.99, "new york yankees tickets\n": 0.01}
    tables = tuple(
        {**table, "york\nnew": (9.0, 9), "\udcff": (0.0, 9)} for table in model.lexicon.tables
    )
    changed = replace(
        model, phrases={**model.phrases, **odd}, lexicon=replace(model.lexicon, tables=tables)
    )
    assert changed._kernel is not None
    queries = ["new york yankees tickets", "york new", "new york yankees tickets " * 4]
    reference = changed.uncompiled()
    assert [changed.segment(q) for q in queries] == [reference.segment(q) for q in queries]
    got, expected = changed.rank(queries[0], 6), reference.rank(queries[0], 6)
    assert [s for s, _ in got] == [s for s, _ in expected]


@pytest.mark.parametrize(
    "table, n",
    [
        ([[(5, 3)]], 3),  # past the last word: read past the decoder's arrays
        ([[(1, 3)]], 3),  # a segment of one word
        ([[(2, 1)], [], [], [], []], 2),  # rows past the query: written past them
        ([], -5),
    ],
)
def test_the_compiled_decoder_refuses_a_table_of_other_words(table, n):
    """``decoder.best_breaks`` takes any weight table: one that is not one of n words had the
    compiled decoder read and write past its arrays (a wrong score, or a crash)."""
    from qseg.segmenters.decoder import best_breaks

    with pytest.raises(ValueError, match="weight table of"):
        best_breaks(table, n)
    assert best_breaks([[(2, 1)], [(3, 4)]], 3) == (4, (1, 0))


KERNELS = {
    name: "src/" + name.replace(".", "/") + ".c"
    for name in (
        "qseg._words",
        "qseg.resources._store",
        "qseg.segmenters._kernel",
        "qseg.segmenters.learned._gap_kernel",
        "qseg.segmenters.learned._trees",
        "qseg.segmenters.learned._sums",
        "qseg.segmenters.learned._key_table",
        "qseg.segmenters.learned._domain_kernel",
        "qseg.segmenters.learned._decoding",
        "qseg.segmenters.learned._gap_probabilities",
        "qseg.segmenters.learned._joint_kernel",
    )
}
"""Every extension the segmenters run (module: its translated C source), checked with
AddressSanitizer by :func:`test_the_kernels_read_and_write_only_their_own_memory`."""

ASAN_FLAGS = ["-fPIC", "-O1", "-g1", "-fsanitize=address", "-fno-omit-frame-pointer"]
"""``-g1``: line tables for the reports, at 5 s instead of 8 s for the largest kernel. Compiled
(``-c``, which ccache caches, where it does not cache a compile that links too), then linked."""

ASAN_RUN = """
import importlib.machinery, importlib.util, random, sys

BUILT = dict(arg.split("=", 1) for arg in sys.argv[2:])  # module -> its checked build


class Checked:
    # the checked builds are found before the installed ones, in whatever order qseg imports
    # them (a kernel's cimports import the others by name)
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in BUILT:
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, BUILT[name])
        return importlib.util.spec_from_file_location(name, BUILT[name], loader=loader)


sys.meta_path.insert(0, Checked)

from dataclasses import replace

import qseg
from qseg._words import normal_words
from qseg.query import QueryError, normalize
from qseg.resources.store import build_from_entries
from qseg.segmenters.learned._key_table import KeyTable
from qseg.segmenters.decoder import best_breaks

model = qseg.segmenter("default(style=auto)")
web = model.models["web"]
edges = [  # the fewest candidates, and every one a query has
    replace(web, params={**web.params, "decoding": replace(web.decoding, max_candidates=count)})
    for count in (1, 2**40)
]
naive, wiki = qseg.segmenter("naive"), qseg.segmenter("wiki(unseen_titles=true)")
paired = replace(web, partner=model.models["product"])  # two models decoded together
rng = random.Random(5)
letters = "abcdefghijklmnopqrstuvwxyz0123456789éßü東京-&'"
known = ["new", "york", "the", "of", "tickets", "a", "ﬁle", "x²", "🙂"]
done = 0
for i in range(int(sys.argv[1])):
    length = rng.choice([1, 2, 3, 5, 8, 12, 13, 20, 40, 63, 64, 65, 100, 200])
    words = [
        rng.choice(known) if rng.random() < 0.5 else "".join(rng.choices(letters, k=5))
        for _ in range(length)
    ]
    text = " ".join(words) if i % 2 else "  ".join(w.upper() for w in words)
    normal_words(text)
    try:
        query = normalize(text)
    except QueryError:
        continue
    got = model.segment(query)
    one = model.models[model.kinds([query])[0]]
    assert one._kernel is not None
    for segmenter in (naive, wiki):
        segmenter.segment(query)
        if i % 5 == 0:
            table = segmenter.span_weights(query)
            assert best_breaks(list(table), len(query)) == segmenter.scorer.best(query)
            segmenter.rank(query, 3)
    if i % 10 == 0:  # the Python path: span tables, gap rows, name counts, trees
        assert got == one.uncompiled().segment(query), query
        if 2 <= len(query) <= 64:
            one._kernel.candidates(query, rng.choice([1, 4, 50, 300]))
    if i % 10 == 3:  # (the Python path of a long query takes seconds)
        got = paired.segment(query)
        assert len(query) > 14 or got == paired.uncompiled().segment(query), query
    if i % 10 == 5 and len(query) <= 14:
        for edge in edges:
            edge.segment(query)
            edge.rank(query, 3)
    if i % 25 == 0:  # a word that is not Unicode text reaches a kernel: an error, no more
        bad = (*query[:-1], "b\\udcff")
        calls = [naive.scorer.best, wiki.scorer.table, one._kernel.breaks]
        for call in calls[: 3 if 2 <= len(bad) <= 64 else 2]:
            try:
                call(bad)
            except UnicodeEncodeError:
                pass
            else:
                raise AssertionError("a lone surrogate went through")
    done += 1
entries = {" ".join(rng.choices(known, k=rng.randint(1, 4))): rng.randint(1, 10**6)
           for _ in range(3000)}
for mode in ("exact", "compact"):  # the store's builder (hashes, packing, buckets)
    store = build_from_entries(entries, kind="counts", mode=mode)
    view = store.view
    assert all(view.lookup(key) is not None for key in list(entries)[:200])
    view.lookup_many(list(entries)[:500] + ["not there", "東京 ﬁle"])
table = KeyTable(list(entries))
assert all(table.get(key) >= 0 for key in entries)
for name, path in BUILT.items():
    assert sys.modules[name].__file__ == path, name
print("segmented", done)
"""


def asan_builds(gcc: str) -> dict[str, Path]:
    """Each extension of :data:`KERNELS` built with AddressSanitizer, side by side, the largest
    first (through ccache where installed: a build it has seen costs nothing); kept in
    ``.pytest_cache`` per C source, compiler and flags (the builds are 15 s of the test)."""
    import shutil
    import subprocess
    import sysconfig
    from concurrent.futures import ThreadPoolExecutor

    version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout
    compiler = [c for c in [shutil.which("ccache")] if c] + [gcc]
    include = [f"-I{sysconfig.get_paths()['include']}"]
    built: dict[str, Path] = {}
    needed = []
    for name, source in KERNELS.items():
        path = ROOT / source
        flags = [*ASAN_FLAGS, *include, f"-I{path.parent}"]
        key = hashlib.sha256("\0".join([path.read_text(), version, *flags]).encode())
        target = ROOT / ".pytest_cache" / "asan" / f"{path.stem}-{key.hexdigest()[:16]}.so"
        built[name] = target
        if not target.exists():
            needed.append((path, flags, target))

    def build(job: tuple[Path, list[str], Path]) -> None:
        path, flags, target = job
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")
        objects = target.with_suffix(f".{os.getpid()}.o")
        for command in (
            [*compiler, *flags, "-c", str(path), "-o", str(objects)],
            [gcc, "-shared", "-fsanitize=address", str(objects), "-o", str(partial)],
        ):
            subprocess.run(command, check=True, capture_output=True)
        objects.unlink()
        partial.replace(target)

    largest_first = sorted(needed, key=lambda job: -job[0].stat().st_size)
    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        list(pool.map(build, largest_first))
    return built


def test_the_kernels_read_and_write_only_their_own_memory(tmp_path):
    """Every extension the segmenters run, built with AddressSanitizer (every read and write
    of their buffers checked), segments 500 random queries of 1 to 200 words: the default
    model's kernel (every tenth query also on the Python path: span tables, gap rows, name
    counts, trees; some with 1 candidate and with all a query has), ``naive`` and ``wiki``
    (their scans, decoding and weight tables), words that are not Unicode text on each
    kernel's error path; then builds and reads stores."""
    import shutil
    import subprocess

    gcc = shutil.which("gcc")
    found = (
        subprocess.run(
            [gcc or "gcc", "-print-file-name=libasan.so"], capture_output=True, text=True
        ).stdout.strip()
        if gcc
        else ""
    )
    missing = [source for source in KERNELS.values() if not (ROOT / source).exists()]
    if missing or not gcc or not Path(found).is_file():
        pytest.skip(
            "needs gcc with AddressSanitizer (libasan) and the kernels' translated C sources, "
            "written by an in-place build (pip install -e .)"
            + (f": {', '.join(missing)} missing" if missing else "")
        )
    built = asan_builds(gcc)
    script = tmp_path / "run.py"
    script.write_text(ASAN_RUN, encoding="utf-8")
    env = {**os.environ, "LD_PRELOAD": str(Path(found).resolve()), "ASAN_OPTIONS": "detect_leaks=0"}
    modules = [f"{name}={path}" for name, path in built.items()]
    result = subprocess.run(
        [sys.executable, str(script), "500", *modules], capture_output=True, text=True, env=env
    )
    assert result.returncode == 0 and "AddressSanitizer" not in result.stderr, result.stderr[-3000:]
    assert result.stdout.startswith("segmented ")
