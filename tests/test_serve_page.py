"""The query page (/) in a real browser: Debian's headless Chromium driven by Playwright, against a
real uvicorn server on loopback over the sample KG's corpus. It asks a question and checks the
nodes, walks, triples, timings and the drawn subgraph against the retriever's own answer; shows a
bad question's reason; asks for the API key once; shows the answer of an LLM above the context;
shows the status view; and loads nothing from outside the server (/docs included)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import corpus
import pytest
from test_llm_verbalize import ChatServer
from test_serve import SAMPLE, Served, cfg, direct  # noqa: F401  (cfg, direct: the sample corpus's fixtures)

from kgwalk.refresh.status import corpus_shape
from kgwalk.serve import create_app

CHROMIUM = Path("/usr/bin/chromium")
# README's picture: rewritten only on request (timings differ per run, and make test leaves tracked files alone)
SCREENSHOT = Path(__file__).resolve().parents[1] / "bench" / "results" / "serve_page.png"
SAVE_SCREENSHOT = os.environ.get("KGWALK_SAVE_SCREENSHOT") == "1"
KEY = "page-key"

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"the page's browser test drives Debian's chromium at {CHROMIUM}, "
                                                              "which is not installed (`make test` installs it: apt-get install chromium)")


class Tab:
    """A page in a fresh browser context, recording every URL it requests and every script error."""

    def __init__(self, browser, url: str) -> None:
        self.context = browser.new_context(viewport={"width": 1440, "height": 1000})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.url = url
        response = self.page.goto(url + "/")
        assert response.status == 200
        self.page.wait_for_selector("body[data-ready=true]")

    def ask(self, question: str, k_nodes: int | None = None, k_walks: int | None = None) -> None:
        self.page.fill("#question", question)
        self.page.fill("#k-nodes", "" if k_nodes is None else str(k_nodes))
        self.page.fill("#k-walks", "" if k_walks is None else str(k_walks))
        self.page.click("#ask-button")

    def wait_for_result(self) -> None:
        self.page.wait_for_selector("#result:not([hidden]) .walk")
        self.page.wait_for_function("() => window.kgwalkPage.graph() && window.kgwalkPage.graph().nodes().length > 0")

    def texts(self, selector: str) -> list[str]:
        return self.page.locator(selector).all_text_contents()

    def offline(self) -> bool:
        """Nothing but the server itself was asked for (no CDN, no font service)."""
        return all(url.startswith((self.url + "/", "data:")) for url in self.requests)

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(cfg) -> Iterator[Served]:  # noqa: F811
    served = Served(create_app(cfg))
    yield served
    served.close()


def drawn(tab: Tab) -> tuple[dict[str, str], set[tuple[str, str, str]]]:
    """The subgraph as drawn: {entity label: classes}, {(head label, relation, tail label)}."""
    nodes = tab.page.evaluate("() => window.kgwalkPage.graph().nodes().map(n => [n.data('label'), n.classes().join(' ')])")
    edges = tab.page.evaluate("() => window.kgwalkPage.graph().edges().map(e => [e.source().data('label'), e.data('label'), e.target().data('label')])")
    return dict(nodes), {tuple(e) for e in edges}


def test_a_question_shows_nodes_walks_timings_and_the_subgraph(browser, server, direct):  # noqa: F811
    question = "who starred in [Kismet]"
    want = direct.retrieve(question, 2, 3).to_json()
    tab = Tab(browser, server.url)
    try:
        assert tab.texts("#ask-button") == ["Retrieve"]  # no LLM on this server
        tab.ask(question, 2, 3)
        tab.wait_for_result()
        assert tab.page.locator("#answer-box").is_hidden()
        assert tab.texts(".node .label") == [n["label"] for n in want["nodes"]]
        assert tab.texts(".node .node-head .score") == [f"score {n['score']:.3f}" for n in want["nodes"]]
        named = [n["matched"] for n in want["nodes"]]
        assert named[0] and tab.page.locator(".node").nth(0).locator(".badge").all_text_contents() == ["named in the question"]
        assert [tab.page.locator(".node").nth(i).locator(".badge").count() == 1 for i in range(len(named))] == named
        walks = [w for n in want["nodes"] for w in n["walks"]]
        assert tab.texts(".walk .text") == [w["text"] for w in walks]
        rows = tab.page.locator(".walk").nth(0).locator(".triples tr")
        assert [tuple(rows.nth(i).locator("td").all_text_contents()) for i in range(rows.count())] == [tuple(t) for t in walks[0]["triples"]]
        timings = tab.page.locator("#timings").inner_text()
        assert all(phase in timings for phase in ("embed", "node_search", "walk_search", "total"))

        labels, edges = drawn(tab)
        assert set(labels) == {label for w in walks for label in w["node_labels"]} | {n["label"] for n in want["nodes"]}
        assert edges == {tuple(t) for w in walks for t in w["triples"]}  # each triple once, in the KG's direction
        assert "topic" in labels["Kismet"].split()
        assert all("end" in labels[w["node_labels"][-1]].split() for w in walks)
        assert not any("topic" in labels[n["label"]].split() for n in want["nodes"] if not n["matched"])

        tab.page.locator(".walk").nth(0).click()  # follow the first walk in the drawing
        followed = tab.page.evaluate("() => window.kgwalkPage.graph().edges('.followed')"
                                     ".map(e => [e.source().data('label'), e.data('label'), e.target().data('label')])")
        assert {tuple(e) for e in followed} == {tuple(t) for t in walks[0]["triples"]} and len(followed) == len({tuple(t) for t in walks[0]["triples"]})
        tab.page.locator(".walk").nth(0).click()  # and back
        tab.page.mouse.move(0, 0)
        shot = tab.page.screenshot(path=str(SCREENSHOT) if SAVE_SCREENSHOT else None)
        assert shot[:8] == b"\x89PNG\r\n\x1a\n"
        assert tab.offline(), tab.requests
        assert not tab.errors, tab.errors
    finally:
        tab.close()


def test_a_bad_question_shows_the_reason(browser, server):
    tab = Tab(browser, server.url)
    try:
        tab.ask("   ")
        tab.page.wait_for_selector("#error:not([hidden])")
        assert tab.texts("#error") == ["question: Value error, the question is blank"]
        tab.ask("who directed Kismet", k_nodes=99)
        tab.page.wait_for_function("() => document.getElementById('error').textContent.startsWith('k_nodes')")
        assert tab.texts("#error")[0].startswith("k_nodes: Input should be less than or equal to 20")
        assert tab.page.locator("#result").is_hidden()
        tab.ask("who directed Kismet")  # a good question clears the reason
        tab.wait_for_result()
        assert tab.page.locator("#error").is_hidden()
    finally:
        tab.close()


def test_the_status_view(browser, server, cfg):  # noqa: F811
    tab = Tab(browser, server.url)
    try:
        tab.page.click("#tab-status")
        tab.page.wait_for_selector("#status .grid")
        grids = tab.page.locator("#status .grid")
        kg_rows = grids.nth(0).locator("tbody tr")
        assert [kg_rows.nth(i).locator("td").nth(0).inner_text() for i in range(kg_rows.count())] == ["edges", "entities", "relations"]
        derived = grids.nth(1).locator("tbody tr")
        assert [derived.nth(i).locator("td").nth(3).inner_text() for i in range(derived.count())] == ["up to date"] * 4
        shape = corpus_shape(cfg)
        assert tab.texts(".hub-label") == [h["label"] if len(h["label"]) <= 26 else h["label"][:25] + "…" for h in shape["hubs"]]
        assert tab.page.locator("#status svg rect.bar:not(.hub)").count() > 1  # the walks-per-root histogram
        assert f"{shape['walks']:,} walks from {shape['roots']:,} roots" in tab.page.locator("#status").text_content()
        assert "none since the build" in tab.page.locator("#status").text_content()
        assert tab.offline() and not tab.errors, (tab.requests, tab.errors)
    finally:
        tab.close()


def test_the_api_key_is_asked_for_once_and_kept_in_the_tab(browser, cfg, monkeypatch):  # noqa: F811
    monkeypatch.setenv(cfg.serve.api_key_env, KEY)
    served = Served(create_app(cfg))
    monkeypatch.delenv(cfg.serve.api_key_env)
    tab = Tab(browser, served.url)  # the page and its files load without the key
    try:
        assert tab.page.locator("#key-form").is_hidden()
        tab.ask("who directed Kismet", 1, 1)
        tab.page.wait_for_selector("#key-form:not([hidden])")
        tab.page.fill("#key-input", "wrong")
        tab.page.click("#key-form button")
        tab.page.wait_for_function("() => document.getElementById('key-note').textContent.includes('refused')")
        tab.page.fill("#key-input", KEY)
        tab.page.click("#key-form button")
        tab.wait_for_result()
        assert tab.texts(".node .label") == ["Kismet"]
        assert tab.page.evaluate("() => [sessionStorage.getItem('kgwalk-api-key'), localStorage.length]") == [KEY, 0]
        tab.page.reload()
        tab.page.wait_for_selector("body[data-ready=true]")
        tab.ask("which movies were released in 1955", 1, 1)  # same tab: the key is kept, not asked for again
        tab.wait_for_result()
        assert tab.page.locator("#key-form").is_hidden()
        tab.page.click("#tab-status")
        tab.page.wait_for_selector("#status .grid")
        assert tab.offline() and not [e for e in tab.errors if "401" not in e], (tab.requests, tab.errors)
    finally:
        tab.close()
        served.close()


def test_with_an_llm_the_answer_is_above_the_context(browser, cfg, direct):  # noqa: F811
    llm = ChatServer(empty_for="\x00 nothing")
    llm_cfg = corpus.config(Path(cfg.warehouse), SAMPLE, ["answer.backend=openai", f"answer.llm.base_url={llm.url}",
                                                          "answer.llm.model=tiny-chat"])
    served = Served(create_app(llm_cfg, retriever=direct))
    question = "what films did Emir Kusturica star in (all of them)"  # the fake LLM echoes from the first "("
    tab = Tab(browser, served.url)
    try:
        assert tab.texts("#ask-button") == ["Answer"]
        tab.ask(question, 2, 2)
        tab.wait_for_result()
        prompt = [r for r in llm.requests if question in r["messages"][-1]["content"]][-1]["messages"][-1]["content"]
        assert tab.texts("#answer") == [f'Sure! Here is the sentence:\n"{ChatServer.sentence(prompt)}" Hope it helps.']
        assert tab.page.locator("#answer-box").bounding_box()["y"] < tab.page.locator("#nodes").bounding_box()["y"]
        assert "llm" in tab.page.locator("#timings").inner_text()
        assert tab.offline() and not tab.errors, (tab.requests, tab.errors)
    finally:
        tab.close()
        served.close()
        llm.close()


def test_the_api_docs_load_swagger_ui_from_the_server(browser, server):
    tab = Tab(browser, server.url)
    try:
        tab.page.goto(server.url + "/docs")
        tab.page.wait_for_selector(".swagger-ui .opblock-summary-path")
        assert {"/retrieve", "/answer", "/status", "/health"} <= set(tab.texts(".opblock-summary-path"))
        assert any("/static/vendor/swagger-ui-dist-" in url for url in tab.requests)
        assert tab.offline(), tab.requests
    finally:
        tab.close()
