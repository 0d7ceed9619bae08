"""LLM verbalizers through the real verbalize stage (Ray actors, Delta, the warehouse cache):
`openai` against a real HTTP server on loopback, `transformers` with a tiny random model the test
builds itself, `vllm` where it can be imported."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from conftest import TINY_KG
from corpus import config, walks_in_process
from tiny_llm import build_tiny_chat_model

from kgwalk import stages
from kgwalk.config import LLMConf
from kgwalk.errors import KgwalkError
from kgwalk.llm import make_chat_model
from kgwalk.llm.openai_api import RateLimiter
from kgwalk.storage import read_table
from kgwalk.verbalize.cache import SentenceCache, append_sentences
from kgwalk.verbalize.llm import (
    PAPER_SYSTEM_PROMPT,
    PAPER_USER_PROMPT,
    clean_sentence,
    format_triples,
)
from kgwalk.verbalize.pipeline import WALK_COLUMNS, load_labels
from kgwalk.verbalize.template import TemplateVerbalizer


@pytest.fixture(scope="module", autouse=True)
def ray_stopped_after():
    """The stages start a local Ray in this process; later tests expect none running."""
    yield
    import ray

    ray.shutdown()


@pytest.mark.parametrize(
    "reply, sentence",
    [
        ("Kismet was directed by William Dieterle.", "Kismet was directed by William Dieterle."),
        ("  Kismet was directed by William Dieterle  ", "Kismet was directed by William Dieterle."),
        ('Sure! Here is the sentence: "Kismet was directed by William Dieterle."', "Kismet was directed by William Dieterle."),
        ("Here is the constructed sentence:\n\n**Kismet was directed by William Dieterle.**", "Kismet was directed by William Dieterle."),
        ("Sentence: Kismet is a film. It was directed by X.", "Kismet is a film."),
        ("Dr. Strangelove was directed by Stanley Kubrick. I hope this helps!", "Dr. Strangelove was directed by Stanley Kubrick."),
        ("J. R. R. Tolkien wrote The Hobbit.", "J. R. R. Tolkien wrote The Hobbit."),
        ("Its rating is 7.5 out of 10. Done.", "Its rating is 7.5 out of 10."),
        ("", None),
        ("   \n  ", None),
        ('"..."', None),
        ("x" * 3000, None),
        ("The sentence is: " * 15 + "The sentence is.", None),  # a decoding loop
        ("Kismet is a film. I hope this helps! I hope this helps! I hope this helps!", "Kismet is a film."),  # after the sentence
        ("Kismet, Kismet and Juarez were directed by William Dieterle.", "Kismet, Kismet and Juarez were directed by William Dieterle."),
    ],
)
def test_clean_sentence(reply, sentence):
    assert clean_sentence(reply) == sentence


def test_sentence_cache_lookup(tmp_path):
    path = str(tmp_path / "cache")
    append_sentences(path, 7, pa.array([30, 10], pa.int64()), pa.array(["c", None], pa.string()))
    append_sentences(path, 7, pa.array([20, 30], pa.int64()), pa.array(["b", "c"], pa.string()))  # 30 again: same text
    append_sentences(path, 8, pa.array([40], pa.int64()), pa.array(["other verbalizer"], pa.string()))
    cache = SentenceCache.load(path, 7)
    assert len(cache) == 3
    found, texts = cache.get(np.array([10, 40, 30, 5, 20], np.int64))
    assert found.tolist() == [True, False, True, False, True]
    assert texts.to_pylist() == [None, "c", "b"]
    assert len(SentenceCache.load(str(tmp_path / "none"), 7)) == 0


class ChatServer:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1 that records what it is asked.

    Replies wrap a sentence built from the walk's triples in chatter the verbalizer must strip.
    Some prompts fail once first (429 with Retry-After, or 503); prompts naming `empty_for` get an
    empty reply; each request takes `delay` seconds so that concurrency shows.
    """

    def __init__(self, empty_for: str = "Edward Knoblock", delay: float = 0.02, status: int | None = None) -> None:
        self.requests: list[dict] = []
        self.attempts: Counter = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.auth: set[str | None] = set()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][-1]["content"]
                with server.lock:
                    server.attempts[user] += 1
                    attempt = server.attempts[user]
                    server.requests.append({**body, "at": time.monotonic()})
                    server.auth.add(self.headers.get("Authorization"))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(delay)
                    reply = self._reply(user, attempt)
                finally:
                    # Counted out before the reply is written: once written, the client may send its next request
                    # before this thread would get to the decrement, and that request would count as a 4th.
                    with server.lock:
                        server.in_flight -= 1
                self._send(*reply)

            def _reply(self, user: str, attempt: int) -> tuple[int, dict, dict | None]:
                if status is not None:
                    return status, {"error": "no"}, None
                flaky = sum(map(ord, user)) % 4
                if attempt == 1 and flaky == 0:
                    return 429, {"error": "slow down"}, {"Retry-After": "0"}
                if attempt == 1 and flaky == 1:
                    return 503, {"error": "busy"}, None
                content = "" if empty_for in user else f'Sure! Here is the sentence:\n"{ChatServer.sentence(user)}" Hope it helps.'
                return 200, {"choices": [{"message": {"role": "assistant", "content": content}}]}, None

            def _send(self, code: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                for k, v in {"Content-Type": "application/json", "Content-Length": str(len(data)), **(headers or {})}.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @staticmethod
    def sentence(user: str) -> str:
        return "The walk says " + user[user.index("(") :].rstrip(".") + "."

    def answered(self) -> int:
        return len({r["messages"][-1]["content"] for r in self.requests})

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server():
    server = ChatServer()
    yield server
    server.close()


def _openai_cfg(tmp_path: Path, url: str, *extra: str):
    return config(
        tmp_path / "wh",
        TINY_KG,
        ["walks.depth=1", "verbalize.verbalizer=openai", "verbalize.llm.model=tiny-chat", f"verbalize.llm.base_url={url}",
         "verbalize.llm.concurrency=3", "verbalize.batch_size=32", *extra],
    )


def _walk_prompts(cfg) -> dict[int, str]:
    walks = load_labels(cfg).attach(read_table(cfg.table("walks"), WALK_COLUMNS))
    cols = [walks.column(c).to_pylist() for c in ("walk_id", "node_labels", "rel_labels", "inverse")]
    return {w: format_triples(n, r, i) for w, n, r, i in zip(*cols)}


def test_openai_verbalizer_stage_retries_hygiene_and_cache(tmp_path, chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    cfg = _openai_cfg(tmp_path, chat_server.url)
    walks_in_process(cfg)
    triples = _walk_prompts(cfg)
    assert stages.run_verbalize(cfg) == len(triples)

    texts = {r["walk_id"]: r for r in read_table(cfg.table("texts")).to_pylist()}
    assert set(texts) == set(triples)
    distinct = set(triples.values())
    assert chat_server.answered() == len(distinct)  # every walk content asked ...
    walks_per_prompt = Counter(PAPER_USER_PROMPT.replace("{triples}", t) for t in triples.values())
    assert sum(chat_server.attempts.values()) > len(distinct)  # some first attempts failed (429/503) ...
    # ... and were retried once, then answered (a content shared by walks in two batches is asked twice)
    assert all(n <= 2 * walks_per_prompt[user] for user, n in chat_server.attempts.items())
    assert 2 <= chat_server.max_in_flight <= 3  # verbalize.llm.concurrency
    assert chat_server.auth == {"Bearer sk-test"}  # the key from $OPENAI_API_KEY
    first = chat_server.requests[0]
    assert first["model"] == "tiny-chat" and first["temperature"] == 0
    assert first["messages"][0] == {"role": "system", "content": PAPER_SYSTEM_PROMPT}
    assert {r["messages"][1]["content"] for r in chat_server.requests} == {PAPER_USER_PROMPT.replace("{triples}", t) for t in distinct}

    template = TemplateVerbalizer(cfg.verbalize.phrases)
    for walk_id, row in texts.items():
        if "Edward Knoblock" in triples[walk_id]:  # an empty reply: the template sentence, counted as fallback
            assert row["source"] == "fallback" and row["text"].endswith(".") and "Edward Knoblock" in row["text"]
        else:
            assert row["source"] == "llm"
            assert row["text"] == "The walk says " + triples[walk_id] + "."  # chatter and quotes stripped
    fallbacks = [w for w, r in texts.items() if r["source"] == "fallback"]
    assert fallbacks, "the tiny KG names Edward Knoblock"
    walks = load_labels(cfg).attach(read_table(cfg.table("walks"), WALK_COLUMNS))
    expected = dict(zip(walks.column("walk_id").to_pylist(), template.sentences(walks).to_pylist()))
    assert all(texts[w]["text"] == expected[w] for w in fallbacks)

    # A second build asks nothing: every sentence comes from the cache, fallbacks included.
    asked = len(chat_server.requests)
    stages.run_verbalize(cfg)
    again = {r["walk_id"]: r for r in read_table(cfg.table("texts")).to_pylist()}
    assert len(chat_server.requests) == asked
    assert {w: r["text"] for w, r in again.items()} == {w: r["text"] for w, r in texts.items()}
    assert Counter(r["source"] for r in again.values()) == {"cache": len(texts) - len(fallbacks), "fallback": len(fallbacks)}

    # A new prompt invalidates exactly its own entries: everything is asked again, once.
    changed = _openai_cfg(tmp_path, chat_server.url, "verbalize.prompt.user='Verbalize: {triples}'")
    stages.run_verbalize(changed)
    assert len(chat_server.requests) - asked >= len(distinct)
    assert {r["messages"][1]["content"] for r in chat_server.requests[asked:]} == {f"Verbalize: {t}" for t in distinct}


class StoppedClock:
    """A monotonic clock that moves only when the test moves it; sleeps are recorded, not slept."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.slept.append(seconds)


def test_rate_limiter_gives_each_start_the_next_slot():
    clock = StoppedClock()
    limiter = RateLimiter(20, clock, clock.sleep)
    threads = [threading.Thread(target=limiter.wait) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # eight callers at one instant, from eight threads: starts 1/20 s apart, none shared
    assert sorted(clock.slept) == pytest.approx([k / 20 for k in range(8)])

    clock.now += 10  # an idle spell earns no burst: the next start is now, the one after 1/20 s later
    clock.slept.clear()
    limiter.wait()
    limiter.wait()
    assert clock.slept == pytest.approx([0, 1 / 20])
    clock.now += 0.08  # the next slot is at +0.10: wait the rest
    limiter.wait()
    clock.now += 0.5  # past the slot after that: no wait
    limiter.wait()
    assert clock.slept[2:] == pytest.approx([0.02, 0])

    unlimited = RateLimiter(None, clock, clock.sleep)
    clock.slept.clear()
    unlimited.wait()
    assert clock.slept == []


def test_openai_client_rate_limit_errors_and_unreachable(tmp_path, chat_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    conf = LLMConf(model="m", base_url=chat_server.url, concurrency=4, requests_per_second=20)
    chat = make_chat_model("openai", conf, "verbalize.llm")
    assert chat.limiter.interval == pytest.approx(1 / 20)  # requests_per_second reaches the client's limiter
    clock = StoppedClock()
    chat.limiter = RateLimiter(20, clock, clock.sleep)
    replies = chat.chat([[{"role": "user", "content": f"(A{i}, r, B) Edward Knoblock"}] for i in range(10)])
    assert replies == [""] * 10  # empty replies come back as they are; the verbalizer falls back
    # every request sent, retries (429/503 first attempts) included, took the limiter's next slot
    assert len(chat_server.requests) > 10
    assert sorted(clock.slept) == pytest.approx([k / 20 for k in range(len(chat_server.requests))])
    assert chat_server.auth == {None}  # no key set, no header sent

    for status, match in [(401, "check base_url, model and \\$OPENAI_API_KEY"), (500, "failed 3 times; last: HTTP 500")]:
        server = ChatServer(status=status, delay=0)
        try:
            bad = make_chat_model("openai", LLMConf(model="m", base_url=server.url, max_retries=2), "verbalize.llm")
            with pytest.raises(KgwalkError, match=match):
                bad.chat([[{"role": "user", "content": "(a, b, c)"}]])
        finally:
            server.close()
    gone = make_chat_model("openai", LLMConf(model="m", base_url="http://127.0.0.1:9/v1", max_retries=1, timeout_s=2), "verbalize.llm")
    with pytest.raises(KgwalkError, match="failed 2 times; last: ConnectError"):
        gone.chat([[{"role": "user", "content": "(a, b, c)"}]])


def test_settings_errors_name_the_key(tmp_path):
    walks_in_process(cfg := config(tmp_path / "wh", TINY_KG, ["walks.depth=1", "verbalize.verbalizer=openai", "verbalize.llm.model=m"]))
    with pytest.raises(KgwalkError, match="verbalize.llm.base_url"):
        stages.run_verbalize(cfg)
    for override, match in [
        ("verbalize.verbalizer=gpt", "unknown verbalizer 'gpt'"),
        ("verbalize.llm.model=null", "verbalize.llm.model"),
        ("verbalize.prompt.user='no placeholder'", "must contain \\{triples\\}"),
    ]:
        with pytest.raises(KgwalkError, match=match):  # an unknown verbalizer as the config loads, the rest by the stage
            stages.run_verbalize(config(tmp_path / "wh", TINY_KG, ["verbalize.verbalizer=transformers", "verbalize.llm.model=m", override]))


def test_transformers_verbalizer_stage_with_a_tiny_random_model(tmp_path):
    words = TINY_KG.read_text().replace("|", " ").split() + ["(", ")", ",", "."]
    model = build_tiny_chat_model(tmp_path / "tiny-chat", words)
    cfg = config(tmp_path / "wh", TINY_KG, ["walks.depth=1", "verbalize.verbalizer=transformers", f"verbalize.llm.model={model}",
                                            "verbalize.llm.max_tokens=6", "verbalize.llm.batch_size=16"])
    walks_in_process(cfg)
    triples = _walk_prompts(cfg)
    assert stages.run_verbalize(cfg) == len(triples)
    texts = {r["walk_id"]: r for r in read_table(cfg.table("texts")).to_pylist()}

    # the same model asked here, in this process, gives the stage's sentences (greedy decoding)
    chat = make_chat_model("transformers", cfg.verbalize.llm, "verbalize.llm")
    conversations = [[{"role": "system", "content": PAPER_SYSTEM_PROMPT}, {"role": "user", "content": PAPER_USER_PROMPT.replace("{triples}", t)}]
                     for t in triples.values()]
    for walk_id, reply in zip(triples, chat.chat(conversations)):
        sentence = clean_sentence(reply)
        assert texts[walk_id]["source"] == ("llm" if sentence else "fallback")
        if sentence:
            assert texts[walk_id]["text"] == sentence
    assert any(r["source"] == "llm" for r in texts.values())

    stages.run_verbalize(cfg)  # cached: no model needed for what it already said
    assert {r["source"] for r in read_table(cfg.table("texts")).to_pylist()} <= {"cache", "fallback"}
    longer = config(tmp_path / "wh", TINY_KG, ["walks.depth=1", "verbalize.verbalizer=transformers", f"verbalize.llm.model={model}",
                                               "verbalize.llm.max_tokens=7"])
    stages.run_verbalize(longer)  # another max_tokens: other sentences, so nothing is served from the cache
    assert "cache" not in {r["source"] for r in read_table(cfg.table("texts")).to_pylist()}


HAVE_VLLM = importlib.util.find_spec("vllm") is not None


@pytest.mark.skipif(HAVE_VLLM, reason="vllm is installed: test_vllm_backend runs instead")
def test_vllm_backend_missing_is_a_clear_error():
    with pytest.raises(KgwalkError, match=r"pip install 'kgwalk\[vllm\]'"):
        make_chat_model("vllm", LLMConf(model="m"), "verbalize.llm")


@pytest.mark.skipif(not HAVE_VLLM, reason="vllm does not install on CPU-only machines (CUDA wheels)")
def test_vllm_backend(tmp_path):
    words = TINY_KG.read_text().replace("|", " ").split()
    chat = make_chat_model("vllm", LLMConf(model=build_tiny_chat_model(tmp_path / "m", words), max_tokens=4), "verbalize.llm")
    replies = chat.chat([[{"role": "user", "content": "Kismet"}], [{"role": "user", "content": "Drama"}]])
    assert len(replies) == 2 and all(isinstance(r, str) for r in replies)
