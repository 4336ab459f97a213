"""The annotation pages driven as a person uses them: headless Chromium (Debian's ``chromium``,
which ``.ci/run`` installs where it is missing) through Playwright pointed at that browser
(never ``playwright install``). Two annotators segment queries flat and nested with the
keyboard and the mouse, reload, go back and change an answer, export through the page's
links; the export is compared with the expected file, and the agreement page with ``qseg
agree`` on it. Every page is checked with axe-core for accessibility, and no page asks for
anything from another host."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import Server, out, qseg

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "Chromium is not installed (apt-get install chromium chromium-driver; .ci/run does it): "
        "the browser tests drive the real pages in it",
        allow_module_level=True,
    )
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
pytest.importorskip("fastapi", reason="the annotation pages need the serve extra")

QUERIES = (
    "q1\tnew york yankees tickets\n"
    "q2\tstainless steel chest freezers\n"
    "q3\thow to choose a bike size\n"
    "q4\tparis\n"
)
FLAT_EXPORT = (
    "q1\tann\tnew york|yankees|tickets\n"
    "q1\tbob\tnew york yankees|tickets\n"
    "q2\tann\tstainless steel|chest freezers\n"
    "q2\tbob\tstainless steel|chest freezers\n"
    "q3\tann\thow to|choose|a bike size\n"
    "q3\tbob\thow to choose|a bike size\n"
    "q4\tann\tparis\n"
    "q4\tbob\tparis\n"
)
NESTED_EXPORT = (
    "q1\tann\t(((new york) yankees) tickets)\n"
    "q1\tbob\t((new york) (yankees tickets))\n"
    "q2\tann\t((stainless steel) (chest freezers))\n"
    "q2\tbob\t((stainless steel) (chest freezers))\n"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("annotation")
    queries = folder / "queries.txt"
    queries.write_text(QUERIES)
    project = folder / "project.db"
    out(qseg("annotate", project, "--queries", queries, "--no-serve"))
    running = Server(str(project), command="annotate")
    running.project = str(project)  # type: ignore[attr-defined]
    yield running
    assert "Traceback" not in running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield launched
        launched.close()


class Person:
    """One annotator in a browser context of their own (their own local storage)."""

    def __init__(self, browser, server: Server, name: str) -> None:
        self.context = browser.new_context(accept_downloads=True)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.server = server
        self.name = name

    def start(self, mode: str) -> None:
        page = self.page
        page.goto(self.server.url + "/")
        page.get_by_label("Your annotator id").fill(self.name)
        page.get_by_label(re.compile(f"^{mode.capitalize()}:")).check()
        page.get_by_role("button", name="Start annotating").click()
        page.wait_for_url(re.compile(f"/{mode}\\?annotator={self.name}&index=0"))

    def at(self, index: int) -> None:
        """Wait until the page shows query ``index`` (0-based)."""
        self.page.wait_for_function(
            "n => document.getElementById('progress').textContent.includes(`query ${n} of`)",
            arg=index + 1,
        )

    def text(self, element: str) -> str:
        return self.page.inner_text(f"#{element}")

    def close(self) -> None:
        assert self.errors == []
        self.context.close()


def flat_session(person: Person, second_opinion: bool) -> None:
    """Annotate the four queries flat: keys on the first, clicks on the others; reload in
    the middle; for ``ann``, go back at the end and change the first answer."""
    page = person.page
    person.start("flat")
    person.at(0)
    assert person.text("progress") == f"{person.name}: query 1 of 4, 0 of 4 done"
    assert person.text("segments") == "new york yankees tickets"
    for key in ("ArrowRight", "ArrowRight", "Space"):
        page.keyboard.press(key)
    assert person.text("segments") == "new york yankees | tickets"
    assert page.get_attribute('.gap[data-gap="2"]', "aria-pressed") == "true"
    page.keyboard.press("Enter")
    person.at(1)
    page.click('.gap[data-gap="1"]')
    assert person.text("segments") == "stainless steel | chest freezers"
    page.get_by_role("button", name="Save and next").click()
    person.at(2)
    page.reload()  # the same query, and the progress the server has
    person.at(2)
    assert person.text("progress") == f"{person.name}: query 3 of 4, 2 of 4 done"
    gaps = (1, 2) if not second_opinion else (2,)
    for gap in gaps:
        page.click(f'.gap[data-gap="{gap}"]')
    page.keyboard.press("Enter")
    person.at(3)
    assert page.locator(".gap").count() == 0  # one word: nothing to break
    page.keyboard.press("Enter")  # the focus is on "Save and next"
    page.wait_for_function("() => document.getElementById('message').textContent.includes('all')")
    assert person.text("message") == "Saved. 4 of 4 done: all queries are done. Thank you!"
    if second_opinion:
        return
    for expected in (2, 1, 0):
        page.get_by_role("button", name="Previous query").click()
        person.at(expected)
        assert person.text("message") == ""  # "Saved ..." was about another query
    assert person.text("source") == "Your saved answer; change it and save again."
    assert person.text("segments") == "new york yankees | tickets"
    page.click('.gap[data-gap="1"]')
    page.keyboard.press("Enter")
    person.at(1)
    assert person.text("message") == "Saved: new york|yankees|tickets"
    # the browser's Back goes to the query before, not to the start page
    page.go_back()
    person.at(0)
    assert page.url.endswith("&index=0") and person.text("message") == ""
    page.go_back()
    person.at(1)
    assert page.url.endswith("&index=1")


def group(person: Person, first: int, last: int, keys: bool) -> None:
    """Select parts ``first`` to ``last`` and group them, by keyboard or by mouse."""
    page = person.page
    if keys:
        page.focus(f'.unit[data-part="{first}"]')
        page.keyboard.press("Space")
        for _ in range(last - first):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("g")
    else:
        page.click(f'.unit[data-part="{first}"]')
        page.click(f'.unit[data-part="{last}"]', modifiers=["Shift"])
        page.get_by_role("button", name="Group selected").click()


def nested_session(person: Person, right_branching: bool) -> None:
    page = person.page
    person.start("nested")
    person.at(0)
    assert person.text("rule") == "Each group joins exactly two parts (binary trees)."
    if right_branching:  # ((new york) (yankees tickets)), by mouse
        group(person, 0, 1, keys=False)
        group(person, 1, 2, keys=False)
        group(person, 0, 1, keys=False)
    else:  # (((new york) yankees) tickets), by keyboard, trying to save too early
        group(person, 0, 1, keys=True)
        group(person, 0, 1, keys=True)
        page.keyboard.press("Enter")
        assert person.text("message") == (
            "2 parts are not grouped yet: group until one bracket covers the whole query."
        )
        group(person, 0, 1, keys=True)
    brackets = person.text("brackets")
    assert brackets.startswith("(((new york) yankees) tickets)" if not right_branching else
                               "((new york) (yankees tickets))")  # fmt: skip
    assert "one tree: ready to save" in brackets
    assert page.locator("#tree circle").count() == 3  # the picture: one dot per node
    assert page.locator("#tree text").all_text_contents() == ["new", "york", "yankees", "tickets"]
    page.get_by_role("button", name="Save and next").click()
    person.at(1)
    group(person, 0, 2, keys=True)  # three parts at once: refused, the trees are binary
    assert person.text("message") == (
        "A group joins exactly two parts: the trees are binary (Ramanath et al. 2013)."
    )
    page.keyboard.press("Escape")
    group(person, 0, 1, keys=False)
    group(person, 1, 2, keys=False)
    group(person, 0, 1, keys=False)
    assert person.text("brackets").startswith("((stainless steel) (chest freezers))")
    page.keyboard.press("Enter")
    person.at(2)
    page.reload()
    person.at(2)
    assert person.text("progress") == f"{person.name}: query 3 of 4, 2 of 4 done"
    page.get_by_role("button", name="Previous query").click()
    person.at(1)
    assert person.text("source") == "Your saved tree; ungroup to change it, then save again."
    assert page.locator(".unit").all_inner_texts() == ["((stainless steel) (chest freezers))"]


def download(person: Person, link: str) -> str:
    page = person.page
    page.goto(person.server.url + "/")
    with page.expect_download() as event:
        page.get_by_role("link", name=link, exact=True).click()
    return Path(event.value.path()).read_text(encoding="utf-8")


def test_two_annotators_flat_and_nested_then_export_and_agreement(server, browser, tmp_path):
    ann, bob = Person(browser, server, "ann"), Person(browser, server, "bob")
    flat_session(ann, second_opinion=False)
    flat_session(bob, second_opinion=True)
    nested_session(ann, right_branching=False)
    nested_session(bob, right_branching=True)
    flat = download(ann, "Flat answers")
    nested = download(bob, "nested answers")
    assert flat == FLAT_EXPORT
    assert nested == NESTED_EXPORT
    assert out(qseg("annotate", server.project, "--export", "-", "--mode", "nested")) == nested

    page = ann.page
    page.goto(server.url + "/agreement")
    for mode, export in (("flat", flat), ("nested", nested)):
        page.get_by_label(mode, exact=True).check()
        path = tmp_path / f"{mode}.tsv"
        path.write_text(export)
        agree = json.loads(out(qseg("agree", path, "--format", "json")))
        caption = page.locator("#agreement table")
        rows = len(agree)
        page.wait_for_function(
            "n => document.querySelectorAll('#agreement table tr').length === n + 1", arg=rows
        )
        cells = [caption.locator("tr").nth(i + 1).locator("td").all_inner_texts() for i in
                 range(rows)]  # fmt: skip
        for row, cell in zip(agree, cells, strict=True):
            shown = f"{row['alpha']:.3f} [{row['alpha_low']:.3f}, {row['alpha_high']:.3f}]"
            assert cell[3] == shown
            assert cell[1] == str(row["items"]) and cell[2] == str(row["annotations"])
            if row["s"] is not None:
                assert cell[4] == f"{row['s']:.3f} [{row['s_low']:.3f}, {row['s_high']:.3f}]"
        assert [c[0] for c in cells] == (["d"] if mode == "flat" else ["d1", "d2"])
    # as annotations arrive, the page follows: a third annotator's answer changes the counts
    page.get_by_label("flat", exact=True).check()
    page.wait_for_function("() => document.getElementById('counts').textContent.startsWith('8 ')")
    cid = Person(browser, server, "cid")
    cid.start("flat")
    cid.at(0)
    cid.page.keyboard.press("Enter")
    cid.at(1)
    page.wait_for_function(
        "() => document.getElementById('counts').textContent.startsWith('9 answers')",
        timeout=15_000,
    )
    headers = page.locator("#annotators table th").all_inner_texts()
    assert len(headers) == len(set(headers)) == 9, headers  # no two columns named alike
    lowest = page.locator("#lowest table tr").nth(1).locator("td").all_inner_texts()
    assert lowest[0] == "q1"  # three different answers to q1: the least agreed
    for person in (ann, bob, cid):
        person.close()


@pytest.mark.parametrize("path", ["/", "/flat?annotator=ann", "/nested?annotator=ann",
                                  "/agreement", "/login"])  # fmt: skip
def test_every_page_passes_axe_and_asks_no_other_host(server, browser, path):
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context()
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(server.url + "/")  # an annotator for the pages that need one
    page.get_by_label("Your annotator id").fill("ann")
    page.get_by_role("button", name="Start annotating").click()
    page.wait_for_url(re.compile("/flat"))
    page.goto(server.url + path)
    page.wait_for_load_state("networkidle")
    results = Axe().run(page)
    assert results.violations_count == 0, results.generate_report()
    outside = [url for url in requested if not url.startswith(server.url)]
    assert outside == []
    context.close()


def test_the_api_docs_render_offline(server, browser):
    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []

    def only_here(route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_here)
    page.goto(server.url + "/docs")
    page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
    operations = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/answers" in [o.strip() for o in operations]
    assert outside == []
    context.close()


def test_off_the_loopback_a_browser_signs_in_with_the_token(server, browser):
    """With a token, a page asked for sends the browser to /login; the token typed there
    lets it in (a cookie the service takes for the token), a wrong one does not."""
    guarded = Server(server.project, "--token", "s3cret", command="annotate", token="s3cret")
    try:
        context = browser.new_context()
        page = context.new_page()
        page.goto(guarded.url + "/agreement")
        page.wait_for_url(re.compile("/login\\?next=/agreement"))
        page.get_by_label("Token").fill("wrong")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_function("() => document.getElementById('message').textContent !== ''")
        assert page.inner_text("#message") == "Wrong token."
        page.get_by_label("Token").fill("s3cret")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(guarded.url + "/agreement")
        page.wait_for_selector("#agreement table, #agreement p")  # its figures, or why none
        # Swagger UI reads the token's security scheme: its Authorize button takes the token,
        # and a request tried out from the page carries it
        page.goto(guarded.url + "/docs")
        page.locator(".swagger-ui .btn.authorize").click()
        page.locator(".auth-container input").fill("s3cret")
        page.locator(".auth-btn-wrapper .btn.authorize").click()
        page.locator(".btn-done").click()
        page.locator("#operations-status-methods_methods_get .opblock-summary").click()
        page.locator(".try-out__btn").click()
        with page.expect_response(lambda r: r.url.endswith("/methods")) as answered:
            page.locator(".execute").click()
        assert answered.value.status == 200
        assert answered.value.request.headers["authorization"] == "Bearer s3cret"
        context.close()
        # a next= that a browser reads as another host (a tab, a line break or a backslash
        # dropped or turned): the browser stays on this service
        for asked in ("/%09/evil.example/c", "/%0A/evil.example", "/%0D%5Cevil.example"):
            context = browser.new_context()
            page = context.new_page()
            page.route("http://evil.example/**", lambda route: route.abort())
            page.goto(f"{guarded.url}/login?next={asked}")
            page.get_by_label("Token").fill("s3cret")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(guarded.url + "/")
            assert page.url == guarded.url + "/", asked
            context.close()
    finally:
        assert "Traceback" not in guarded.stop()


def test_the_expert_setting_allows_nodes_of_more_than_two_parts(browser, tmp_path):
    project = tmp_path / "expert.db"
    queries = tmp_path / "queries.txt"
    queries.write_text(QUERIES)
    out(qseg("annotate", project, "--queries", queries, "--expert", "--no-serve"))
    expert = Server(str(project), command="annotate")
    try:
        person = Person(browser, expert, "ann")
        person.start("nested")
        person.at(0)
        assert person.text("rule") == "Expert setting: a group may join more than two parts."
        group(person, 0, 2, keys=True)  # (new york yankees): three parts at once
        group(person, 0, 1, keys=False)
        assert person.text("brackets").startswith("((new york yankees) tickets)")
        person.page.keyboard.press("Enter")
        person.at(1)
        person.close()
    finally:
        expert.stop()
    nested = out(qseg("annotate", project, "--export", "-", "--mode", "nested"))
    assert nested == "q1\tann\t((new york yankees) tickets)\n"


THIRTY = [
    "new york yankees tickets", "stainless steel chest freezers", "how to choose a bike size",
    "harry potter and the goblet of fire", "cheap flights to paris", "black and decker drill",
    "samsung galaxy s9 case", "red wine glasses set", "best pizza in chicago",
    "lord of the rings extended edition", "apple iphone charger cable", "kids bike helmet",
    "bank of america online banking", "university of michigan football", "nike air max shoes",
    "used cars for sale", "chocolate chip cookie recipe", "san francisco hotels",
    "wireless bluetooth headphones", "hp laptop battery", "star wars lego sets",
    "weather in new orleans", "jobs in los angeles", "king size bed frame",
    "the big bang theory season 3", "free online games", "amazon kindle fire",
    "hello kitty backpack", "north face winter jacket", "real estate in boston",
]  # fmt: skip


DONE = "n => document.getElementById('progress').textContent.includes(`${n} of 30 done`)"


def test_two_annotators_in_uncertainty_order_then_a_model_from_the_project(browser, tmp_path):
    """Issue 67, item 6: 30 queries served least sure first (the order the model gives, the
    page saying so), two annotators each answering all of them in the page, a retrain after
    15 answered queries, then ``qseg train --from default --gold PROJECT``."""
    import time

    from qseg.annotation.ordering import read_ordering

    queries = tmp_path / "queries.txt"
    queries.write_text("".join(f"q{i}\t{q}\n" for i, q in enumerate(THIRTY)))
    project = tmp_path / "project.db"
    out(qseg("annotate", project, "--queries", queries, "--order", "uncertain", "--model",
             "default", "--retrain-every", "15", "--no-serve"))  # fmt: skip
    first = read_ordering(project)
    by_text = {q: f"q{i}" for i, q in enumerate(THIRTY)}
    server = Server(str(project), command="annotate")
    try:
        for name, gap in (("ann", 1), ("bob", 2)):
            person = Person(browser, server, name)
            person.start("flat")
            seen = []
            for step in range(30):
                person.page.wait_for_function(DONE, arg=step)
                seen.append(by_text[person.text("segments")])
                if person.page.locator(f'.gap[data-gap="{gap}"]').count():
                    person.page.click(f'.gap[data-gap="{gap}"]')
                person.page.keyboard.press("Enter")
            person.page.wait_for_function(
                "() => document.getElementById('message').textContent.includes('all')"
            )
            assert sorted(seen) == sorted(by_text.values())
            if name == "ann":  # before any retrain: the first model's order
                assert seen[:15] == list(first.qids[:15])
                assert "least sure first" in person.text("progress")
            person.close()
        deadline = time.monotonic() + 120
        while (read_ordering(project) or first).learned_from < 15:
            assert time.monotonic() < deadline, "no retrain"
            time.sleep(0.5)
    finally:
        assert "Traceback" not in server.stop()
    model = tmp_path / "adapted.qseg"
    trained = qseg("train", "--from", "default", "--gold", project, "--out", model)
    assert trained.returncode == 0, trained.stderr
    assert out(qseg("segment", "--method", model, "kids bike helmet")).strip()
