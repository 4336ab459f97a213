"""``qseg annotate`` from the command line and over HTTP (the pages' JSON API), without a
browser: projects made and extended with reports, imports and exports in every format the
other commands read, the agreement summary equal to ``qseg agree`` on the export, a model
trained on an export, the token, and bad input in one line. The pages themselves are driven
in Chromium by tests/test_annotation_browser.py."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from conftest import webis_file
from helpers import Server, assert_one_line_error, out, qseg

pytestmark = pytest.mark.long

httpx = pytest.importorskip("httpx", reason="the annotation pages need the serve extra")

QUERIES = (
    "q1\tnew york yankees tickets\n"
    "q2\tstainless steel chest freezers\n"
    "\n"
    "q3\thow to choose a bike size\n"
    "q4\tNew York Yankees Tickets\n"
    "q5\tparis\n"
)
FLAT = {
    "ann": {
        "q1": "new york yankees|tickets",
        "q2": "stainless steel|chest freezers",
        "q3": "how to|choose|a bike size",
    },
    "bob": {
        "q1": "new york|yankees|tickets",
        "q2": "stainless steel|chest freezers",
        "q3": "how to choose|a bike size",
    },
}


def test_a_project_is_made_extended_and_reported(tmp_path, write):
    queries = write("q.txt", QUERIES)
    made = qseg("annotate", tmp_path / "p.db", "--queries", queries, "--no-serve")
    assert made.returncode == 0
    err = made.stderr.decode()
    assert "q.txt: 4 queries added, 1 duplicate and 1 bad line left out" in err
    assert "duplicate left out: " in err and "q4 'New York Yankees Tickets'" in err
    assert "q.txt:3: empty query" in err
    longer = write("more.txt", "q6\tharry potter\nq7\t" + " ".join(["w"] * 65) + "\n")
    again = qseg("annotate", tmp_path / "p.db", "--queries", longer, "--queries", queries,
                 "--no-serve")  # fmt: skip
    assert "more.txt: 1 query added, 0 duplicates and 1 bad line left out" in (
        again.stderr.decode()
    )
    assert "65 words; a project takes queries of at most 64" in again.stderr.decode()
    assert "q.txt: 0 queries added, 5 duplicates" in again.stderr.decode()
    # a restart gives every query again: one line says so, not one a query
    assert again.stderr.decode().count("duplicate left out") == 1
    assert "(and 4 more)" in again.stderr.decode()
    texts = sqlite3.connect(tmp_path / "p.db").execute("SELECT qid FROM queries ORDER BY position")
    assert [q for (q,) in texts] == ["q1", "q2", "q3", "q5", "q6"]


def _annotated(tmp_path, write) -> tuple[str, str]:
    """A project with the flat answers of FLAT and two nested ones, imported from a table."""
    table = "".join(
        f"{qid}\t{name}\t{value}\n"
        for name, answers in FLAT.items()
        for qid, value in answers.items()
    )
    flat = write("flat.tsv", table)
    nested = write(
        "nested.tsv",
        "q1\tann\t(((new york) yankees) tickets)\nq1\tbob\t((new york) (yankees tickets))\n"
        "q2\tann\t((stainless steel) (chest freezers))\n"
        "q2\tbob\t((stainless steel) (chest freezers))\n",
    )
    project = tmp_path / "p.db"
    out(qseg("annotate", project, "--queries", write("q.txt", QUERIES), "--no-serve"))
    imported = qseg("annotate", project, "--import", flat, "--import", nested, "--no-serve")
    assert "flat.tsv: 6 answers imported (0 new queries), 0 left out" in imported.stderr.decode()
    assert "nested.tsv: 4 answers imported (0 new queries), 0 left out" in (
        imported.stderr.decode()
    )
    return str(project), table


def test_export_import_round_trip_in_every_format(tmp_path, write):
    project, table = _annotated(tmp_path, write)
    exported = out(qseg("annotate", project, "--export", "-"))
    expected_order = sorted(table.splitlines(), key=lambda line: (line.split("\t")[0], line))
    assert exported.splitlines() == expected_order
    nested = out(qseg("annotate", project, "--export", "-", "--mode", "nested"))
    assert nested.splitlines()[0] == "q1\tann\t(((new york) yankees) tickets)"
    # Label Studio out and into a new project: the same tables
    for mode in ("flat", "nested"):
        ls_file = tmp_path / f"{mode}.json"
        qseg("annotate", project, "--export", ls_file, "--mode", mode)
        tasks = json.loads(ls_file.read_text())
        assert [t["data"]["qid"] for t in tasks] == ["q1", "q2", "q3", "q5"]
        copy = tmp_path / f"copy-{mode}.db"
        imported = qseg("annotate", copy, "--import", ls_file, "--no-serve")
        assert " 0 left out" in imported.stderr.decode()
        again = out(qseg("annotate", copy, "--export", "-", "--mode", mode))
        assert again == (exported if mode == "flat" else nested)
    # the table export is what qseg agree and qseg evaluate read
    export = tmp_path / "export.tsv"
    out(qseg("annotate", project, "--export", export))
    assert export.read_text() == exported
    agree = json.loads(out(qseg("agree", export, "--format", "json")))
    assert agree[0]["items"] == 3 and agree[0]["annotations"] == 6
    scores = out(qseg("evaluate", "--gold", export, "--system", "naive=naive", "--format", "json"))
    assert json.loads(scores)


def test_reimporting_keeps_every_answer_and_the_latest_wins(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    change = write("change.tsv", "q1\tann\tnew york|yankees tickets\nq9\tcid\tharry potter\n")
    result = qseg("annotate", project, "--import", change, "--no-serve")
    assert "2 answers imported (1 new query)" in result.stderr.decode()
    exported = out(qseg("annotate", project, "--export", "-"))
    assert "q1\tann\tnew york|yankees tickets\n" in exported
    assert exported.endswith("q9\tcid\tharry potter\n")
    clash = write("clash.tsv", "q1\tcid\tparis\n")
    refused = qseg("annotate", project, "--import", clash, "--no-serve")
    assert "clash.tsv: q1 by cid: the project's query q1 is 'new york yankees tickets'" in (
        refused.stderr.decode()
    )
    (count,) = sqlite3.connect(project).execute("SELECT COUNT(*) FROM annotations").fetchone()
    assert count == 12


def test_qseg_train_gold_on_an_export_trains_a_model(tmp_path, write):
    """300 Webis queries' crowd votes imported as ten annotators each, exported, trained on:
    the same model as trained on the votes file itself."""
    votes = webis_file("webis-qsec-10-training-set-segmentations-crowdsourced.txt")
    lines = votes.read_text(encoding="utf-8").splitlines()[:300]
    subset = write("votes.txt", "\n".join(lines) + "\n")
    project = tmp_path / "webis.db"
    imported = qseg("annotate", project, "--import", subset, "--no-serve")
    assert "(300 new queries), 0 left out" in imported.stderr.decode()
    export = tmp_path / "export.tsv"
    out(qseg("annotate", project, "--export", export))
    data = "data/webis-qsec-10-training-set-"
    flags = [
        "--ngrams",
        webis_file(data + "n-gram-web-frequencies-google.txt"),
        "--titles",
        webis_file(data + "n-gram-wikipedia-titles.txt"),
    ]
    models = {}
    for name, gold in (("export", export), ("votes", subset)):
        models[name] = tmp_path / f"{name}.qseg"
        trained = qseg("train", "--method", "features", "--gold", gold, *flags, "--quiet",
                       "--out", models[name])  # fmt: skip
        assert "trained features on 300 queries" in trained.stderr.decode(), trained.stderr
    held_out = webis_file("webis-qsec-10-training-set-queries.txt").read_text().splitlines()
    stdin = "\n".join(held_out[300:340]) + "\n"
    segmented = {
        name: out(qseg("segment", "--method", model, *flags, stdin=stdin))
        for name, model in models.items()
    }
    assert segmented["export"] == segmented["votes"]
    assert len(segmented["export"].splitlines()) == 40


def test_nested_exports_are_refused_as_training_gold(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    nested = tmp_path / "nested.tsv"
    out(qseg("annotate", project, "--export", nested, "--mode", "nested"))
    result = qseg("train", "--method", "features", "--gold", nested, "--out", tmp_path / "m")
    assert_one_line_error(result, "nested.tsv: item 'q1' is nested", "export the flat mode")


@pytest.fixture
def served(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    server = Server(project, command="annotate")
    server.project = project
    yield server
    assert "Traceback" not in server.stop()


def test_the_agreement_summary_is_qseg_agree_on_the_export(served, tmp_path):
    for mode in ("flat", "nested"):
        summary = served.http.get("/api/agreement", params={"mode": mode}).json()
        export = served.http.get("/api/export", params={"mode": mode})
        disposition = f"attachment; filename=\"p-{mode}.tsv\"; filename*=UTF-8''p-{mode}.tsv"
        assert export.headers["content-disposition"] == disposition
        path = tmp_path / f"{mode}.tsv"
        path.write_text(export.text)
        agree = json.loads(out(qseg("agree", path, "--format", "json")))
        assert summary["agreement"] == [
            {k: v for k, v in row.items() if k != "scope"} for row in agree
        ]
        assert summary["shared"] == (3 if mode == "flat" else 2)
        assert [a["annotator"] for a in summary["annotators"]] == ["ann", "bob"]
    flat = served.http.get("/api/agreement", params={"mode": "flat"}).json()
    ann, bob = flat["annotators"]
    assert ann["break_share"] == pytest.approx(4 / 11)  # 1 + 1 + 2 breaks in 3 + 3 + 5 gaps
    assert bob["break_share"] == pytest.approx(4 / 11)
    assert ann["mean_segments"] == pytest.approx(7 / 3)
    # q2: the same answers; q1 and q3 differ by one break each: 1 - 1/3 and 1 - 1/5
    assert [(q["qid"], round(q["agreement"], 3)) for q in flat["lowest"]] == [
        ("q1", 0.667),
        ("q3", 0.8),
        ("q2", 1.0),
    ]
    assert [q["index"] for q in flat["lowest"]] == [0, 2, 1]


def test_the_agreement_cache_keeps_one_summary_a_mode(tmp_path, write):
    """Issue 66, item 3: each value of ``replicates`` was kept (12 took a worker to 1.2 GB)."""
    from qseg.annotation.project import Project
    from qseg.service.annotation.routes import Summaries

    project, _ = _annotated(tmp_path, write)
    summaries = Summaries()
    with Project.open(project) as opened:
        for replicates in range(10, 130, 10):
            assert summaries.get(opened, "flat", replicates)["replicates"] == replicates
        summaries.get(opened, "nested", 10)
        assert len(summaries) == 2
        again = summaries.get(opened, "flat", 120)
        assert again is summaries.get(opened, "flat", 120)  # not recomputed


def test_the_api_saves_checks_and_reports_progress(served):
    http = served.http
    assert http.post("/api/annotators", json={"name": " cid "}).json() == {"name": "cid"}
    for name in ("a\x00b", "a\tb", "\n"):  # what an exported line cannot hold: the schema's 422
        assert http.post("/api/annotators", json={"name": name}).status_code == 422, name
    first = http.get("/api/item", params={"annotator": "cid", "mode": "flat"}).json()
    assert (first["index"], first["total"], first["done"], first["qid"]) == (0, 4, 0, "q1")
    assert first["words"] == ["new", "york", "yankees", "tickets"] and first["prefill"] is None
    saved = http.post(
        "/api/answers",
        json={"annotator": "cid", "mode": "flat", "qid": "q1", "value": "new york|yankees tickets"},
    )
    assert saved.json() == {"saved": True, "done": 1, "total": 4}
    following = http.get("/api/item", params={"annotator": "cid", "mode": "flat"}).json()
    assert following["index"] == 1 and following["done"] == 1
    back = http.get("/api/item", params={"annotator": "cid", "mode": "flat", "index": 0}).json()
    assert back["answer"] == "new york|yankees tickets"
    wrong = {"annotator": "cid", "mode": "flat", "qid": "q1", "value": "new york"}
    refused = http.post("/api/answers", json=wrong)
    assert refused.status_code == 409 and "not those of query q1" in refused.json()["error"]
    ternary = {
        "annotator": "cid",
        "mode": "nested",
        "qid": "q1",
        "value": "(new york yankees tickets)",
    }
    refused = http.post("/api/answers", json=ternary)
    assert refused.status_code == 409 and "binary trees" in refused.json()["error"]
    unknown = http.get("/api/item", params={"annotator": "eve", "mode": "flat"})
    assert unknown.status_code == 404 and "no annotator 'eve'" in unknown.json()["error"]
    beyond = http.get("/api/item", params={"annotator": "cid", "mode": "flat", "index": 9})
    assert beyond.status_code == 404 and "the project has 4" in beyond.json()["error"]
    # pages and their scripts are served by qseg itself, the API docs too
    for path in ("/", "/flat", "/nested", "/agreement", "/docs", "/static/annotate/nested.js"):
        page = http.get(path)
        assert page.status_code == 200, path
        assert "cdn." not in page.text and "https://" not in page.text.split("<body")[0], path
    docs = http.get("/docs").text
    assert "/static/docs/swagger-ui-bundle.js" in docs
    assert http.get("/static/docs/swagger-ui-bundle.js").status_code == 200
    # issue 66, item 1: no answer may be framed by another site (clickjacking), and a page
    # is reachable only at its route, never as a static file without the pages' headers
    answers = [http.get(p) for p in ("/flat", "/docs", "/static/annotate/flat.js")]
    answers += [http.get("/api/project"), http.get("/no/such/route"), http.get("/login")]
    answers += [http.post("/api/answers", json={})]
    for answer in answers:
        assert answer.headers["x-frame-options"] == "DENY", answer.url
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"], answer.url
        assert answer.headers["x-content-type-options"] == "nosniff", answer.url
    assert "default-src 'self'" in http.get("/flat").headers["content-security-policy"]
    pages = ["/static/annotate/flat.html", "/static/annotate/index.html", "/static/qseg/login.html"]
    for page in [*pages, "/static/annotate/FLAT.html/", "/static/qseg/../annotation/flat.html"]:
        assert http.get(page).status_code == 404, page


def test_prefill_is_the_default_model_segmentation(tmp_path, write):
    project = tmp_path / "p.db"
    out(qseg("annotate", project, "--queries", write("q.txt", QUERIES), "--prefill", "default",
             "--no-serve"))  # fmt: skip
    server = Server(str(project), command="annotate")
    try:
        server.http.post("/api/annotators", json={"name": "ann"})
        item = server.http.get("/api/item", params={"annotator": "ann", "mode": "flat"}).json()
        expected = out(qseg("segment", "new york yankees tickets")).strip()
        assert item["prefill"] == expected.replace(" | ", "|") or item["prefill"] == expected
        assert item["answer"] is None
    finally:
        server.stop()
    bogus = qseg("annotate", project, "--prefill", "bogus(x=1)", "--no-serve")
    assert_one_line_error(bogus, "unknown method 'bogus'")
    out(qseg("annotate", project, "--prefill", "off", "--expert", "--no-serve"))
    settings = sqlite3.connect(project).execute(
        "SELECT value FROM meta WHERE key = 'setting.prefill'"
    )
    assert settings.fetchone() == ("",)
    server = Server(str(project), command="annotate")
    try:  # no pre-filling now; nodes of three parts are taken (expert)
        item = server.http.get("/api/item", params={"annotator": "ann", "mode": "flat"}).json()
        assert item["prefill"] is None
        assert server.http.get("/api/project").json()["settings"] == {
            "prefill": "", "expert": "1", "order": "added", "model": "", "retrain_every": "0",
            "suggest": "0",
        }  # fmt: skip
        tree = {"annotator": "ann", "mode": "nested", "qid": "q1",
                "value": "((new york yankees) tickets)"}  # fmt: skip
        assert server.http.post("/api/answers", json=tree).status_code == 200
    finally:
        server.stop()


def test_off_the_loopback_the_pages_need_the_token(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    refused = qseg("annotate", project, "--host", "0.0.0.0", "--port", "1")
    assert_one_line_error(refused, "binding 0.0.0.0", "give a token")
    server = Server(project, "--token", "s3cret", command="annotate", token="s3cret")
    try:
        bare = httpx.Client(base_url=server.url, follow_redirects=False)
        assert bare.get("/api/project").status_code == 401
        page = bare.get("/flat", headers={"Accept": "text/html"})
        assert page.status_code == 303 and page.headers["location"] == "/login?next=/flat"
        assert bare.get("/login").status_code == 200  # the sign-in page
        assert bare.get("/static/qseg/style.css").status_code == 200
        # issue 66, item 8: a stranger's 404 names no route of the service; a client with
        # the token is told them
        stranger = bare.get("/no/such/route")
        assert stranger.status_code == 404
        assert stranger.json()["error"] == "no route GET /no/such/route"
        told = server.http.get("/no/such/route").json()["error"]
        assert told.startswith("no route GET /no/such/route; routes: ") and "/segment" in told
        for guess in ("wrong", "päss-wörd", "tok€n", "s3cret\u0000"):  # 401, never a 500
            assert bare.post("/login", json={"token": guess}).status_code == 401, guess
        signed = bare.get("/login", params={"token": "s3cret", "next": "/agreement"})
        assert signed.status_code == 303 and signed.headers["location"] == "/agreement"
        cookie = signed.headers["set-cookie"]
        assert "httponly" in cookie.lower() and "s3cret" not in cookie  # a keyed hash of it
        # never to another host, as a browser would read the address (tabs and line breaks
        # dropped, a backslash a slash)
        for elsewhere in (
            "//evil.example",
            "/\\evil.example",
            "https://evil.example",
            "/\t/evil.example/c",
            "/\n/evil.example",
            "/\r\\evil.example",
            " //evil.example",
            "\t//evil.example",
            "javascript:alert(1)",
        ):
            sent = bare.get("/login", params={"token": "s3cret", "next": elsewhere})
            assert sent.headers["location"] == "/", elsewhere
            posted = bare.post("/login", params={"next": elsewhere}, json={"token": "s3cret"})
            assert posted.json() == {"next": "/"}, elsewhere
        assert bare.get("/api/project").status_code == 200  # the cookie stands for the token
        bare.close()
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda p: p.write_bytes(b"not a database at all, just text\n" * 100),
            "not a qseg annotation project",
        ),
        (
            lambda p: sqlite3.connect(p).execute("CREATE TABLE t (x)").connection.commit(),
            "not a qseg annotation project",
        ),
    ],
)
def test_files_that_are_not_projects_are_refused(tmp_path, make, message):
    path = tmp_path / "p.db"
    make(path)
    assert_one_line_error(qseg("annotate", path, "--export", "-"), "p.db", message, status=1)


def test_a_newer_schema_and_bad_paths_are_refused(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    db = sqlite3.connect(project)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    assert_one_line_error(
        qseg("annotate", project, "--export", "-"), "schema version 99", "upgrade qseg", status=1
    )
    assert_one_line_error(qseg("annotate", tmp_path / "none.db"), "none.db", "no such project")
    assert_one_line_error(
        qseg("annotate", tmp_path / "new.db", "--queries", tmp_path / "nothing.txt"),
        "nothing.txt",
        "no such file",
    )
    assert not list(tmp_path.glob("new.db*"))  # the project it would have made is not left
    empty = tmp_path / "empty.db"
    out(qseg("annotate", empty, "--queries", write("e.txt", ""), "--no-serve"))
    assert_one_line_error(qseg("annotate", empty), "the project has no queries")


def test_killing_the_server_loses_no_answer_and_saves_at_once_are_all_kept(tmp_path, write):
    import os
    import signal
    import threading

    project, _ = _annotated(tmp_path, write)
    server = Server(project, command="annotate")
    for name in ("dan", "eve"):
        server.http.post("/api/annotators", json={"name": name})
    answers = {"dan": "new york|yankees tickets", "eve": "new|york yankees|tickets"}
    barrier = threading.Barrier(2)
    codes = []

    def save(name: str) -> None:
        body = {"annotator": name, "mode": "flat", "qid": "q1", "value": answers[name]}
        barrier.wait()
        codes.append(server.http.post("/api/answers", json=body).status_code)

    threads = [threading.Thread(target=save, args=(name,)) for name in answers]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert codes == [200, 200]
    finally:  # the whole group: a worker left behind would outlive the test run
        os.killpg(server.process.pid, signal.SIGKILL)  # no shutdown, no chance to flush
        server.process.wait()
        server.http.close()
    exported = out(qseg("annotate", project, "--export", "-"))
    assert "q1\tdan\tnew york|yankees tickets\n" in exported
    assert "q1\teve\tnew|york yankees|tickets\n" in exported


def test_schemathesis_finds_nothing_in_the_annotation_api(served, tmp_path):
    """Every route of the schema, the annotation API's included, answers generated requests
    within its schema and its declared statuses."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    runner = shutil.which("schemathesis") or str(Path(sys.executable).with_name("schemathesis"))
    done = subprocess.run(
        [runner, "run", "--checks", "all", "--max-examples", "20", "--seed", "1",
         "--generation-database", "none", f"{served.url}/openapi.json"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "/api/answers" in served.http.get("/openapi.json").text


def test_queries_without_ids_from_two_files_are_all_added(tmp_path, write):
    """A line without an id gets its position in the project: a second file's lines are not
    taken for the first's."""
    project = tmp_path / "p.db"
    first, second = write("a.txt", "harry potter\nparis\n"), write("b.txt", "berlin\nparis\n")
    made = qseg("annotate", project, "--queries", first, "--queries", second, "--no-serve")
    assert "b.txt: 1 query added, 1 duplicate" in made.stderr.decode()
    rows = sqlite3.connect(project).execute("SELECT qid, text FROM queries ORDER BY position")
    assert list(rows) == [("1", "harry potter"), ("2", "paris"), ("3", "berlin")]


def test_a_one_word_tree_stays_nested_through_export_and_import(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    paris = write("paris.tsv", "q5\tann\t(paris)\nq5\tbob\tparis\n")
    out(qseg("annotate", project, "--import", paris, "--no-serve"))
    nested = out(qseg("annotate", project, "--export", "-", "--mode", "nested"))
    flat = out(qseg("annotate", project, "--export", "-"))
    assert nested.endswith("q5\tann\t(paris)\n") and flat.endswith("q5\tbob\tparis\n")
    copy = tmp_path / "copy.db"
    exported = write("nested.tsv", nested)
    out(qseg("annotate", copy, "--import", exported, "--no-serve"))
    assert out(qseg("annotate", copy, "--export", "-", "--mode", "nested")) == nested
    empty = qseg("annotate", copy, "--export", "-", "--mode", "flat")
    assert empty.returncode == 1 and b"has no flat answers yet" in empty.stderr


def test_a_refused_record_leaves_nothing_behind(tmp_path, write):
    project, _ = _annotated(tmp_path, write)
    bad = write(
        "bad.json",
        json.dumps(
            [
                {"id": 1, "data": {"text": "berlin wall", "qid": "a\tb"},
                 "annotations": [{"completed_by": 7, "result": []}]},
                {"id": 2, "data": {"text": "berlin wall", "qid": "w1"},
                 "annotations": [{"completed_by": 8, "result": [
                     {"type": "labels", "value": {"start": 0, "end": 11, "labels": ["Segment"]}}
                 ]}]},
                {"id": 3, "data": {"text": "new york", "qid": "q1"},
                 "annotations": [{"completed_by": 9, "result": [
                     {"type": "labels", "value": {"start": 0, "end": 8, "labels": ["Segment"]}}
                 ]}]},
            ]
        ),
    )  # fmt: skip
    result = qseg("annotate", project, "--import", bad, "--no-serve")
    err = result.stderr.decode()
    assert "1 answer imported (1 new query), 1 left out" in err
    assert "q1 by 9: the project's query q1 is 'new york yankees tickets'" in err
    db = sqlite3.connect(project)
    assert db.execute("SELECT qid FROM queries WHERE qid = 'w1'").fetchone() == ("w1",)
    assert db.execute("SELECT name FROM annotators WHERE name = '9'").fetchone() is None


def test_a_refused_file_is_left_as_it_was(tmp_path):
    path = tmp_path / "other.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE t (x)")
    other.commit()
    other.close()
    before = path.read_bytes()
    assert_one_line_error(
        qseg("annotate", path, "--export", "-"), "not a qseg annotation", status=1
    )
    assert path.read_bytes() == before
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()
    assert mode == ("delete",)  # not switched to WAL


def test_pages_of_other_sites_cannot_write_and_other_names_are_refused(served):
    body = {"name": "mallory"}
    forged = served.http.post(
        "/api/annotators", json=body, headers={"Origin": "https://evil.example"}
    )
    assert forged.status_code == 403 and "another site" in forged.json()["error"]
    same = served.http.post("/api/annotators", json=body, headers={"Origin": served.url})
    assert same.status_code == 200
    rebound = served.http.get("/api/project", headers={"Host": f"evil.example:{served.port}"})
    assert rebound.status_code == 403 and "127.0.0.1 or localhost" in rebound.json()["error"]
    local = served.http.get("/api/project", headers={"Host": f"localhost:{served.port}"})
    assert local.status_code == 200 and local.json()["annotators"] == ["ann", "bob", "mallory"]
    page = served.http.get("/flat")
    assert "default-src 'self'" in page.headers["content-security-policy"]


def test_behind_a_proxy_the_public_origin_and_forwarded_addresses(served):
    """A proxy that rewrites Host (Origin: https://annotate.example.org, Host: 127.0.0.1) is
    let in by --public-origin; X-Forwarded-For is believed only from --forwarded-allow-ips.
    (The proxied application in process, a loopback client: the rules are the app's.)"""
    from fastapi.testclient import TestClient

    from qseg.service.app import create_app
    from qseg.service.foundation.settings import load_settings

    origin = {"Origin": "https://annotate.example.org"}
    body = {"name": "carol"}
    assert served.http.post("/api/annotators", json=body, headers=origin).status_code == 403
    forwarded = served.http.get("/api/project", headers={"X-Forwarded-For": "203.0.113.5"})
    assert forwarded.status_code == 200  # not believed: the client is the loopback
    settings = load_settings(
        methods=("naive",),
        project=str(served.project),
        public_origins="https://annotate.example.org",
        forwarded_allow_ips="127.0.0.1",
    )
    proxied = TestClient(
        create_app(settings), base_url="http://127.0.0.1:8000", client=("127.0.0.1", 50000)
    )
    with proxied:
        assert proxied.post("/api/annotators", json=body, headers=origin).status_code == 200
        other = {"Origin": "https://evil.example"}
        assert proxied.post("/api/annotators", json=body, headers=other).status_code == 403
        # the proxy's word is taken: a client elsewhere, and no token, is refused
        forwarded = proxied.get("/api/project", headers={"X-Forwarded-For": "203.0.113.5"})
        assert forwarded.status_code == 403 and "203.0.113.5" in forwarded.json()["error"]


def test_table_exports_keep_spreadsheets_from_running_cells_as_formulas(tmp_path, write):
    """Issue 66, item 8: a cell beginning with = + - @ gets a leading ' (a spreadsheet shows
    it as text), which qseg's readers take off; --raw (or ?raw=true) writes cells as stored."""
    from qseg.annotation.project import Project, Record

    project = tmp_path / "p.db"
    with Project.create(project) as made:
        made.import_records(
            [
                Record("=cmd|' /C calc'!A0", "-5 degrees c", "@bob", "flat", "-5|degrees c"),
                Record("q2", "+1 phone", "'=ann", "flat", "+1 phone"),
                Record("q3", "new york", "ann", "flat", "new york"),
            ],
            "made",
        )  # fmt: skip
    escaped = out(qseg("annotate", project, "--export", "-"))
    assert escaped.splitlines() == [
        "'=cmd|' /C calc'!A0\t'@bob\t'-5|degrees c",
        "q2\t''=ann\t'+1 phone",
        "q3\tann\tnew york",
    ]
    raw = out(qseg("annotate", project, "--export", "-", "--raw"))
    assert raw.splitlines()[:2] == [
        "=cmd|' /C calc'!A0\t@bob\t-5|degrees c",
        "q2\t'=ann\t+1 phone",
    ]
    # what qseg reads back is what was stored
    export = write("export.tsv", escaped)
    copy = tmp_path / "copy.db"
    assert " 0 left out" in qseg("annotate", copy, "--import", export, "--no-serve").stderr.decode()
    assert out(qseg("annotate", copy, "--export", "-", "--raw")) == raw
    server = Server(str(project), command="annotate")
    try:
        served = server.http.get("/api/export", params={"mode": "flat"})
        assert served.text == escaped and served.headers["x-qseg-answers"] == "3"
        assert server.http.get("/api/export", params={"mode": "flat", "raw": "true"}).text == raw
    finally:
        server.stop()


UNCERTAIN_QUERIES = [
    "new york yankees tickets", "stainless steel chest freezers", "how to choose a bike size",
    "harry potter and the goblet of fire", "cheap flights to paris", "black and decker drill",
    "samsung galaxy s9 case", "red wine glasses set", "best pizza in chicago",
    "lord of the rings extended edition", "apple iphone charger cable", "kids bike helmet",
    "bank of america online banking", "university of michigan football", "nike air max shoes",
]  # fmt: skip


def test_the_pages_serve_the_least_sure_queries_first_and_retrain_in_the_background(
    tmp_path, write
):
    """Issue 67, item 1: --order uncertain serves the queries the model is least sure of
    first; every --retrain-every answered queries a process of its own adapts the model and
    orders the queries again, while saves go on; a retrain killed with SIGKILL loses nothing."""
    import signal
    import time

    from qseg.annotation.ordering import (
        model_path,
        order_path,
        process_running,
        read_ordering,
        start_retrain,
    )
    from qseg.models import open_segmenter
    from qseg.query import normalize
    from qseg.segmenters.uncertainty import most_uncertain

    project = tmp_path / "p.db"
    queries = write("q.txt", "".join(f"q{i}\t{q}\n" for i, q in enumerate(UNCERTAIN_QUERIES)))
    made = qseg("annotate", project, "--queries", queries, "--order", "uncertain", "--model",
                "default", "--retrain-every", "10", "--no-serve")  # fmt: skip
    assert made.returncode == 0, made.stderr
    ordering = read_ordering(project)
    expected = most_uncertain(open_segmenter("default"), [normalize(q) for q in UNCERTAIN_QUERIES])
    assert ordering.qids == tuple(f"q{i}" for i in expected) and ordering.learned_from == 0
    server = Server(str(project), command="annotate")
    try:
        http = server.http
        http.post("/api/annotators", json={"name": "ann"})
        served = []
        for _ in range(12):  # past the 10th answer a retrain starts; saves go on meanwhile
            item = http.get("/api/item", params={"annotator": "ann", "mode": "flat"}).json()
            served.append(item["qid"])
            answer = {"annotator": "ann", "mode": "flat", "qid": item["qid"],
                      "value": "|".join(item["words"])}  # fmt: skip
            assert http.post("/api/answers", json=answer).status_code == 200
        assert served[:10] == list(ordering.qids[:10])
        deadline = time.monotonic() + 180
        lock = tmp_path / "p.db.retrain.lock"
        while (read_ordering(project) or ordering).learned_from < 10 or lock.exists():
            assert time.monotonic() < deadline, "the retrain did not finish"
            time.sleep(0.5)
        retrained = read_ordering(project)
        assert retrained.model == str(model_path(project)) and model_path(project).is_file()
        assert sorted(retrained.qids) == sorted(ordering.qids)
        shown = http.get("/api/project").json()["order"]
        assert shown == {"kind": "uncertain", "model": str(model_path(project)),
                         "learned_from": retrained.learned_from}  # fmt: skip
        # the next query is the first unanswered one in the new order
        item = http.get("/api/item", params={"annotator": "ann", "mode": "flat"}).json()
        unanswered = [q for q in retrained.qids if q not in served]
        assert item["qid"] == unanswered[0]
        # a retrain killed mid-way: the order and model stay as they were, nothing is left
        before = (order_path(project).read_bytes(), model_path(project).read_bytes())
        assert start_retrain(project)
        pid = int(lock.read_text())
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)
        # SIGKILL lands when the process is next scheduled: on a busy machine, after a while
        deadline = time.monotonic() + 60
        while process_running(pid):
            assert time.monotonic() < deadline, "the killed retrain did not die"
            time.sleep(0.05)
        assert (order_path(project).read_bytes(), model_path(project).read_bytes()) == before
        assert http.post("/api/answers", json=answer).status_code == 200  # the pages serve
        assert start_retrain(project)  # the dead one's lock taken over
        deadline = time.monotonic() + 180
        while lock.exists():
            assert time.monotonic() < deadline, "the second retrain did not finish"
            time.sleep(0.5)
        assert read_ordering(project).learned_from == 12
        assert not list(tmp_path.glob(".*.tmp"))
    finally:
        assert "Traceback" not in server.stop()


def test_suggestions_are_off_by_default_and_marked_in_the_export(tmp_path, write):
    """Issue 67, item 1: no answer is suggested unless --suggest; an answer given with the
    model's suggestion shown is exported under 'NAME (suggested)'."""
    project = tmp_path / "p.db"
    out(qseg("annotate", project, "--queries", write("q.txt", QUERIES), "--no-serve"))
    server = Server(str(project), command="annotate")
    try:
        server.http.post("/api/annotators", json={"name": "ann"})
        item = server.http.get("/api/item", params={"annotator": "ann", "mode": "flat"}).json()
        assert item["suggestion"] is None and item["prefill"] is None
    finally:
        server.stop()
    out(qseg("annotate", project, "--suggest", "--no-serve"))
    server = Server(str(project), command="annotate")
    try:
        http = server.http
        item = http.get("/api/item", params={"annotator": "ann", "mode": "flat"}).json()
        expected = out(qseg("segment", item["text"])).strip().replace(" | ", "|")
        assert item["suggestion"] == expected
        answers = [
            ("q1", item["suggestion"], True),
            ("q2", "stainless steel|chest freezers", False),
        ]
        for qid, value, suggested in answers:
            body = {"annotator": "ann", "mode": "flat", "qid": qid, "value": value,
                    "suggested": suggested}  # fmt: skip
            assert http.post("/api/answers", json=body).status_code == 200
    finally:
        server.stop()
    exported = out(qseg("annotate", project, "--export", "-")).splitlines()
    assert exported == [
        f"q1\tann (suggested)\t{item['suggestion']}",
        "q2\tann\tstainless steel|chest freezers",
    ]
    # a project made before the table of suggestions existed opens and exports as before
    sqlite3.connect(project).execute("DROP TABLE suggested")
    assert out(qseg("annotate", project, "--export", "-")).splitlines()[0].startswith("q1\tann\t")


def test_exporting_a_project_nobody_answered_in_says_so_kindly(tmp_path, write):
    """Issue 68, item 5: the README's annotate -> export -> agree lines on a new project."""
    project = tmp_path / "p.db"
    out(qseg("annotate", project, "--queries", write("q.txt", QUERIES), "--no-serve"))
    result = qseg("annotate", project, "--export", tmp_path / "flat.tsv")
    assert result.returncode == 1 and result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert lines == [
        f"qseg: p.db has no flat answers yet, so there is nothing to export: annotate first "
        f"(qseg annotate {project} serves the pages)"
    ]
    assert not (tmp_path / "flat.tsv").exists()
