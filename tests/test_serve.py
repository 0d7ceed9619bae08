"""The query service over HTTP: a real uvicorn server on loopback over the sample KG's corpus (built
in this process), called through kgwalk.client (and raw httpx for malformed requests); /answer
against a fake OpenAI-compatible LLM on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import corpus
import httpx
import pytest
import uvicorn
from test_llm_verbalize import ChatServer

from kgwalk.client import KgwalkClient, KgwalkClientError
from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.query import Retriever
from kgwalk.query.answer import PAPER_ANSWER_SYSTEM_PROMPT
from kgwalk.serve import create_app, run_server

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "metaqa_sample.txt"
QUESTIONS = ["what films did Emir Kusturica star in", "the director of [Kismet] is also the director of which movies",
             "which movies were released in 1955"]


class Served:
    """A uvicorn server for `app` on a loopback port of its own, in a daemon thread."""

    def __init__(self, app) -> None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))  # bound here and handed over: no race for a free port
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:  # after the lifespan: retriever open and warm
            assert self.thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture(scope="module")
def cfg(tmp_path_factory) -> Config:
    cfg = corpus.config(tmp_path_factory.mktemp("serve"), SAMPLE)
    corpus.build_in_process(cfg)
    return cfg


@pytest.fixture(scope="module")
def direct(cfg) -> Iterator[Retriever]:
    """The same corpus queried in-process, to compare the service with."""
    retriever = Retriever(cfg)
    yield retriever
    retriever.close()


@pytest.fixture(scope="module")
def server(cfg) -> Iterator[Served]:
    """No API key, no LLM; the app opens its own retriever at startup."""
    served = Served(create_app(cfg))
    yield served
    served.close()


@pytest.fixture
def client(server) -> Iterator[KgwalkClient]:
    with KgwalkClient(server.url) as c:
        yield c


def walk_ids(nodes: list[dict]) -> list[tuple[int, list[int]]]:
    return [(n["id"], [w["walk_id"] for w in n["walks"]]) for n in nodes]


def test_health_and_openapi(client, server):
    assert client.health() == {"status": "ok", "name": "t", "answer": False}
    schema = httpx.get(server.url + "/openapi.json").json()
    assert {"/health", "/retrieve", "/answer"} <= set(schema["paths"])
    assert "post" in schema["paths"]["/retrieve"] and "post" in schema["paths"]["/answer"]
    query = schema["components"]["schemas"]["Query"]["properties"]
    assert query["question"]["maxLength"] == 2000  # from query.max_question_chars
    assert query["k_nodes"]["anyOf"][0]["maximum"] == 20  # from serve.max_k
    assert "walks" in json.dumps(schema["components"]["schemas"]["NodeOut"])  # the response is described, not just "object"
    assert {"400", "401", "422", "502", "503"} <= set(schema["paths"]["/answer"]["post"]["responses"])


def test_retrieve_matches_the_retriever_and_honours_k(client, direct, cfg):
    for question in QUESTIONS:
        for k_nodes, k_walks in ((None, None), (1, 1), (2, 4), (5, 2)):
            got = client.retrieve(question, k_nodes=k_nodes, k_walks=k_walks)
            want = direct.retrieve(question, k_nodes, k_walks).to_json()
            assert got["question"] == question
            assert walk_ids(got["nodes"]) == walk_ids(want["nodes"])
            assert [w["text"] for n in got["nodes"] for w in n["walks"]] == [w["text"] for n in want["nodes"] for w in n["walks"]]
            assert [n["label"] for n in got["nodes"]] == [n["label"] for n in want["nodes"]]
            assert len(got["nodes"]) == (k_nodes or cfg.query.k_nodes)
            # a named node may show the places of the others (query.unnamed_walks), never more in all
            assert all(n["walks"] for n in got["nodes"])
            assert sum(len(n["walks"]) for n in got["nodes"]) <= len(got["nodes"]) * (k_walks or cfg.query.k_walks)
            assert got["nodes"][0]["walks"][0]["triples"][0] == list(want["nodes"][0]["walks"][0]["triples"][0])
            assert {"embed", "node_search", "walk_search"} <= set(got["timings_ms"])
    named = client.retrieve(QUESTIONS[1], k_nodes=1)["nodes"][0]
    assert named["label"] == "Kismet" and named["matched"]


def test_retrieve_takes_the_mode_answer_its_own(client, direct, server):
    """/retrieve's `mode` (query.mode by default) is echoed in the reply; /answer's context keeps answer.context."""
    question = QUESTIONS[1]
    got = client.retrieve(question, k_nodes=1, k_walks=2, mode="ego")
    want = direct.retrieve(question, 1, 2, mode="ego")
    assert got["mode"] == "ego" and [w["text"] for w in got["nodes"][0]["walks"]] == [w.text for w in want.walks]
    assert {w["kind"] for w in got["nodes"][0]["walks"]} == {"ego"}
    assert client.retrieve(question, k_nodes=1)["mode"] == direct.cfg.query.mode
    bad = httpx.post(server.url + "/retrieve", json={"question": question, "mode": "graph"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "mode"], bad.text
    extra = httpx.post(server.url + "/answer", json={"question": question, "mode": "ego"})
    assert extra.status_code == 422 and "Extra inputs" in extra.text


def test_concurrent_requests_get_the_sequential_results(client, direct, server):
    want = {q: walk_ids(direct.retrieve(q, 2, 2).to_json()["nodes"]) for q in QUESTIONS}
    with ThreadPoolExecutor(6) as pool, KgwalkClient(server.url) as other:
        got = list(pool.map(lambda i: (QUESTIONS[i % 3], (client if i % 2 else other).retrieve(QUESTIONS[i % 3], 2, 2)), range(18)))
    assert all(walk_ids(result["nodes"]) == want[q] for q, result in got)


@pytest.mark.parametrize("body, field, reason", [
    ({"question": ""}, "question", "at least 1 character"),
    ({"question": " \n\t "}, "question", "the question is blank"),
    ({"question": "x" * 2001}, "question", "at most 2000 characters"),
    ({"question": "who directed Kismet", "k_nodes": 0}, "k_nodes", "greater than or equal to 1"),
    ({"question": "who directed Kismet", "k_walks": 21}, "k_walks", "less than or equal to 20"),
    ({"question": "who directed Kismet", "k_nodes": "3"}, "k_nodes", "valid integer"),
    ({"question": "who directed Kismet", "k_nodes": 2.5}, "k_nodes", "valid integer"),
    ({"question": 7}, "question", "valid string"),
    ({"question": ["who"]}, "question", "valid string"),
    ({"k_nodes": 2}, "question", "Field required"),
    ({"question": "who directed Kismet", "k_node": 2}, "k_node", "Extra inputs are not permitted"),
])
def test_bad_input_is_422_with_the_reason(server, body, field, reason):
    for path in ("/retrieve", "/answer"):  # validated before anything else, LLM or not
        response = httpx.post(server.url + path, json=body)
        assert response.status_code == 422, response.text
        errors = response.json()["detail"]
        assert any(e["loc"][-1] == field and reason in e["msg"] for e in errors), errors


def test_a_whole_number_written_as_a_float_is_an_integer(server):
    """JSON Schema's "integer" is any number without a fraction (found by test_serve_fuzz): 2.0 is 2."""
    response = httpx.post(server.url + "/retrieve", json={"question": "who directed Kismet", "k_nodes": 2.0, "k_walks": 1.0})
    assert response.status_code == 200, response.text
    assert len(response.json()["nodes"]) == 2 and all(len(n["walks"]) == 1 for n in response.json()["nodes"])


def test_malformed_requests(server, client):
    assert httpx.post(server.url + "/retrieve").status_code == 422  # no body
    bad_json = httpx.post(server.url + "/retrieve", content=b'{"question": ', headers={"Content-Type": "application/json"})
    assert bad_json.status_code == 422 and "JSON" in bad_json.text
    assert httpx.post(server.url + "/retrieve", json=["who"]).status_code == 422
    assert httpx.get(server.url + "/retrieve").status_code == 405
    # the client turns FastAPI's error list into one readable line
    with pytest.raises(KgwalkClientError) as err:
        client.retrieve("   ")
    assert err.value.status_code == 422 and err.value.detail == "question: Value error, the question is blank"
    with pytest.raises(KgwalkClientError) as err:
        client.retrieve("who directed Kismet", k_nodes=99)
    assert err.value.status_code == 422 and err.value.detail.startswith("k_nodes: Input should be less than or equal to 20")


def test_retrieval_error_is_400_with_its_message(cfg):
    """A KgwalkError raised by the retriever itself: here its own, stricter question limit."""
    strict = Retriever(corpus.config(Path(cfg.warehouse), SAMPLE, ["query.max_question_chars=30"]))
    served = Served(create_app(cfg, retriever=strict))
    try:
        with KgwalkClient(served.url) as c:
            with pytest.raises(KgwalkClientError) as err:
                c.retrieve("which movies share a director with Kismet")  # 41 characters: passes the app's 2000
            assert err.value.status_code == 400 and "query.max_question_chars=30" in err.value.detail
            assert c.retrieve("who directed Kismet", 1, 1)["nodes"]  # the server goes on
    finally:
        served.close()
        strict.close()


def test_answer_without_llm_is_503_naming_the_setting(client):
    with pytest.raises(KgwalkClientError) as err:
        client.answer("who directed Kismet")
    assert err.value.status_code == 503 and "answer.backend" in err.value.detail


def test_answer_with_an_llm(cfg, direct):
    llm = ChatServer(empty_for="\x00 nothing")  # fails some first attempts (429, 503): the answerer retries
    llm_cfg = corpus.config(Path(cfg.warehouse), SAMPLE, ["answer.backend=openai", f"answer.llm.base_url={llm.url}",
                                                          "answer.llm.model=tiny-chat"])
    served = Served(create_app(llm_cfg, retriever=direct))
    # the fake LLM echoes the prompt from its first "(" on, so the question carries one
    question = "what films did Emir Kusturica star in (all of them)"
    try:
        with KgwalkClient(served.url) as c:
            assert c.health()["answer"] is True
            got = c.answer(question, k_nodes=2, k_walks=2)
    finally:
        served.close()
        llm.close()
    prompts = [r for r in llm.requests if question in r["messages"][-1]["content"]]
    assert prompts and {r["model"] for r in prompts} == {"tiny-chat"}
    system, user = prompts[-1]["messages"][0]["content"], prompts[-1]["messages"][-1]["content"]
    assert system == PAPER_ANSWER_SYSTEM_PROMPT
    assert got["answer"] == f'Sure! Here is the sentence:\n"{ChatServer.sentence(user)}" Hope it helps.' and got["known"]
    # the context is the retrieval in answer.context's mode (ego: the top nodes' pruned ego-graphs,
    # in the characters the 2 x 2 walks take)
    want = direct.retrieve(question, 2, 2, mode=llm_cfg.answer.context).to_json()
    assert walk_ids(got["nodes"]) == walk_ids(want["nodes"])
    texts = [w["text"] for n in got["nodes"] for w in n["walks"]]
    walks = direct.retrieve(question, 2, 2, mode="walks").walks
    assert texts and all(f"- {t}" in user for t in texts)
    assert len("\n".join(f"- {t}" for t in texts)) <= len("\n".join(f"- {w.text}" for w in walks))
    assert {"llm", "total", "embed"} <= set(got["timings_ms"])


def test_api_key(cfg, direct, monkeypatch):
    monkeypatch.setenv(cfg.serve.api_key_env, "s3cret-key")
    served = Served(create_app(cfg, retriever=direct))
    url = served.url
    body = {"question": "who directed Kismet", "k_nodes": 1}
    try:
        assert httpx.get(url + "/health").json()["status"] == "ok"  # probes need no key
        for path in ("/retrieve", "/answer"):
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-key"}, {"X-API-Key": "s3cret-ke"},
                            {"Authorization": "Basic s3cret-key"}):
                response = httpx.post(url + path, json=body, headers=headers)
                assert response.status_code == 401 and "API key" in response.json()["detail"], (path, headers)
        assert httpx.get(url + "/openapi.json").status_code == 401
        # checked before the body: a bad request without a key is still 401, not 422
        assert httpx.post(url + "/retrieve", json={"question": ""}).status_code == 401
        ok = httpx.post(url + "/retrieve", json=body, headers={"X-API-Key": "s3cret-key"})
        assert ok.status_code == 200 and len(ok.json()["nodes"]) == 1
        with KgwalkClient(url, api_key="s3cret-key") as c:
            assert c.retrieve("who directed Kismet", k_nodes=2)["nodes"][0]["label"] == "Kismet"
            with pytest.raises(KgwalkClientError) as err:
                c.answer("who directed Kismet")
            assert err.value.status_code == 503  # past the key check: no LLM here
        with KgwalkClient(url, api_key="nope") as c, pytest.raises(KgwalkClientError) as err:
            c.retrieve("who directed Kismet")
        assert err.value.status_code == 401
    finally:
        served.close()


def test_a_dedicated_server_keeps_its_startup_objects_out_of_the_collectors_scans(cfg, direct, server):
    """`kgwalk serve` (freeze_gc): full collections would otherwise scan the index handles,
    lexicon and records every few hundred questions (33-58 ms pauses on MetaQA); an app inside
    another process (the module's `server`) leaves its collector alone."""
    import gc

    assert gc.get_freeze_count() == 0
    served = Served(create_app(cfg, retriever=direct, freeze_gc=True))
    try:
        frozen = gc.get_freeze_count()
        with KgwalkClient(served.url) as c:
            assert c.retrieve("who directed Kismet")["nodes"]
        assert frozen > 10_000 and gc.get_freeze_count() > 0  # still frozen while it serves
    finally:
        served.close()
    assert gc.get_freeze_count() == 0  # handed back at shutdown


def test_kgwalk_serve_asks_for_the_frozen_startup(cfg, monkeypatch):
    from kgwalk.serve import app as serve_app

    asked = {}

    def app_made(*args, **kwargs):
        asked.update(kwargs)
        raise KgwalkError("stop here")

    monkeypatch.setattr(serve_app, "create_app", app_made)
    with pytest.raises(KgwalkError, match="stop here"):
        run_server(cfg, host="127.0.0.1", port=0)
    assert asked == {"freeze_gc": True, "addons": ()}


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "my-host.example"])
def test_run_server_refuses_a_public_host_without_a_key(cfg, monkeypatch, host):
    monkeypatch.delenv(cfg.serve.api_key_env, raising=False)
    with pytest.raises(KgwalkError, match=f"export {cfg.serve.api_key_env}="):
        run_server(cfg, host=host, port=0)


def test_client_reports_an_unreachable_server():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with KgwalkClient(f"http://127.0.0.1:{port}", timeout=2) as c, pytest.raises(KgwalkClientError) as err:
        c.health()
    assert err.value.status_code is None and "cannot reach the kgwalk service" in str(err.value)


def test_client_import_is_light():
    heavy = ["torch", "numpy", "kgwalk.query", "kgwalk.config", "fastapi", "qdrant_client", "pyarrow"]
    code = f"import sys, kgwalk.client; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def raw_exchange(url: str, head: bytes, body_parts: list[bytes]) -> tuple[int, dict]:
    """Send a request's head and some body bytes on a bare socket, without finishing the body, and
    read the answer: a server that waited for the rest would time out instead (the socket's
    timeout bounds the wait so that the test fails rather than hangs)."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(head)
        for part in body_parts:
            sock.sendall(part)
        answer = b""
        while chunk := sock.recv(65536):  # "Connection: close": the server ends the exchange
            answer += chunk
    head_bytes, _, body = answer.partition(b"\r\n\r\n")
    return int(head_bytes.split(b" ", 2)[1]), json.loads(body)


def test_a_body_over_the_limit_is_413_before_it_is_read(server, cfg):
    limit = 12 * cfg.query.max_question_chars + 16 * 1024  # the largest valid request, every character escaped, and room
    # announced by Content-Length: refused on the head alone, before any body is sent (bytes sent and left unread
    # can make the server's close a reset that loses its answer on a busy machine)
    head = f"POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {50 * 2**20}\r\n\r\n"
    status, body = raw_exchange(server.url, head.encode(), [])
    assert status == 413 and f"{limit:,} bytes" in body["detail"], body
    # chunked, no Content-Length: refused once the bytes read pass the limit, the rest never read
    head = "POST /retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"x" * 8192
    status, body = raw_exchange(server.url, head.encode(), [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * (limit // len(chunk) + 1))
    assert status == 413 and f"{limit:,} bytes" in body["detail"], body
    # the largest valid question, every character sent as a JSON escape pair, is under the limit
    widest = json.dumps({"question": "\U0001F600" * cfg.query.max_question_chars, "k_nodes": 1, "k_walks": 1})
    assert limit - 16 * 1024 < len(widest) < limit
    assert httpx.post(server.url + "/retrieve", content=widest, headers={"Content-Type": "application/json"}).status_code == 200


def test_a_422_names_the_field_without_echoing_the_input(server):
    for body in ({"question": "x" * 30_000}, {"question": ["y" * 30_000]}, {"question": "who", "z" * 30_000: 1}):
        response = httpx.post(server.url + "/retrieve", json=body)
        assert response.status_code == 422 and len(response.content) < 1000, len(response.content)
        assert all(set(e) == {"loc", "msg", "type"} for e in response.json()["detail"]), response.text


@pytest.mark.parametrize("raw, field, reason", [
    (b'{"question": "Kismet \\ud800 director"}', "question", "unicode string"),  # valid JSON, not valid Unicode
    (b'{"question": "Kismet \\udfff"}', "question", "unicode string"),
    (b'{"question": "x", "k_nodes": NaN}', "k_nodes", "valid integer"),  # Python's json reads NaN and Infinity
    (b'{"question": "x", "k_walks": -Infinity}', "k_walks", "valid integer"),
    (b'{"question": "x", "k_nodes": 1e999}', "k_nodes", "valid integer"),
])
def test_invalid_unicode_and_nan_are_422(server, raw, field, reason):
    for path in ("/retrieve", "/answer"):
        response = httpx.post(server.url + path, content=raw, headers={"Content-Type": "application/json"})
        assert response.status_code == 422, response.text
        assert any(e["loc"][-1] == field and reason in e["msg"] for e in response.json()["detail"]), response.text


@pytest.mark.parametrize("raw, reason", [
    (b'{"question": "Kismet \xff\xfe director"}', "the body is not valid UTF-8 (byte 21)"),
    (b'{"question": ' + b"[" * 5000 + b"]" * 5000 + b"}", "the body's JSON nests too deeply"),
])
def test_a_body_json_cannot_read_is_422_with_one_line(server, raw, reason):
    """FastAPI answered these 400 "There was an error parsing the body"; 400 means a failed retrieval."""
    for path in ("/retrieve", "/answer"):
        response = httpx.post(server.url + path, content=raw, headers={"Content-Type": "application/json"})
        assert response.status_code == 422, response.text
        assert response.json() == {"detail": [{"loc": ["body"], "msg": reason, "type": "body_invalid"}]}


def test_without_a_key_only_loopback_and_allowed_host_names_are_answered(server, cfg, direct, monkeypatch):
    """DNS rebinding: a page at attacker.example whose name resolves to 127.0.0.1 reaches a
    loopback service from the browser; its requests carry Host: attacker.example."""
    port = server.url.rsplit(":", 1)[1]
    body = {"question": "who directed Kismet", "k_nodes": 1}
    for host in ("attacker.example", f"attacker.example:{port}", "127.0.0.1.attacker.example", "localhost.attacker.example", "kg.internal"):
        for method, path in (("GET", "/health"), ("POST", "/retrieve"), ("GET", "/status"), ("GET", "/")):
            response = httpx.request(method, server.url + path, json=body if method == "POST" else None, headers={"Host": host})
            assert response.status_code == 421 and "serve.allowed_hosts" in response.json()["detail"], (host, path, response.text)
    for host in (f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST", f"[::1]:{port}", "127.8.9.10"):
        assert httpx.post(server.url + "/retrieve", json=body, headers={"Host": host}).status_code == 200, host
    status, _ = raw_exchange(server.url, b"GET /health HTTP/1.0\r\n\r\n", [])  # no Host at all
    assert status == 421
    # serve.allowed_hosts: a reverse proxy's name, with any port or the one given
    proxied = corpus.config(Path(cfg.warehouse), SAMPLE, ["serve.allowed_hosts=[kg.internal, 'other.internal:8080']"])
    served = Served(create_app(proxied, retriever=direct))
    try:
        for host, code in (("kg.internal", 200), ("KG.internal:9000", 200), ("other.internal:8080", 200), ("other.internal:8081", 421),
                           ("attacker.example", 421)):
            assert httpx.get(served.url + "/health", headers={"Host": host}).status_code == code, host
    finally:
        served.close()
    # with an API key the key is the guard: any Host, as behind a proxy
    monkeypatch.setenv(cfg.serve.api_key_env, "s3cret-key")
    keyed = Served(create_app(cfg, retriever=direct))
    try:
        assert httpx.get(keyed.url + "/health", headers={"Host": "kg.example.com"}).status_code == 200
        assert httpx.post(keyed.url + "/retrieve", json=body, headers={"Host": "kg.example.com"}).status_code == 401
    finally:
        keyed.close()


def test_serve_on_a_port_in_use_is_one_line_and_its_own_exit_code(tmp_path):
    """Checked before the corpus is opened: here there is none, which would otherwise end in exit 2."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    command = [sys.executable, "-m", "kgwalk.cli", "serve", "--name", "t", "--warehouse", str(tmp_path), "--port", str(port)]
    try:
        busy = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    finally:
        holder.close()
    assert busy.returncode == 98, busy.stderr
    assert busy.stderr.startswith(f"kgwalk: error: serve: 127.0.0.1:{port} is in use") and busy.stderr.count("\n") == 1, busy.stderr
    free = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert free.returncode == 2 and free.stderr.startswith("kgwalk: error: ") and str(tmp_path) in free.stderr, free.stderr


def test_status_is_kgwalk_status_as_data_with_the_corpus_shape(server, cfg):
    from collections import Counter

    from kgwalk.refresh.status import status_data
    from kgwalk.storage import read_table

    response = httpx.get(server.url + "/status")
    got, want = response.json(), status_data(cfg)
    assert {key: got[key] for key in want if key not in ("root", "kg")} == {key: want[key] for key in want if key not in ("root", "kg")}
    # no server path: the warehouse folder's name and the KG's, the source file's name
    assert got["root"] == f"{Path(cfg.warehouse).name}/{cfg.name}" and str(Path(cfg.warehouse).parent) not in response.text
    assert [t | {"change": Path(t["change"]).name} for t in want["kg"]] == got["kg"] and all(t["change"] == SAMPLE.name for t in got["kg"])
    assert [(t["table"], t["built"], t["behind"]) for t in got["derived"]] == [(t, True, []) for t in ("walks", "texts", "vectors", "index")]
    roots = Counter(read_table(cfg.table("walks"), ["root"]).column("root").to_pylist())
    edges = read_table(cfg.table("edges"), ["src", "dst"]).to_pydict()
    degree = Counter(edges["src"] + edges["dst"])
    corpus_shape = got["corpus"]
    assert (corpus_shape["walks"], corpus_shape["roots"]) == (sum(roots.values()), len(roots))
    assert corpus_shape["walks_per_root"] == [{"walks": n, "roots": c} for n, c in sorted(Counter(roots.values()).items())]
    top = sorted(degree.items(), key=lambda item: (-item[1], item[0]))[:10]
    assert [(h["id"], h["edges"], h["walks"]) for h in corpus_shape["hubs"]] == [(i, n, roots[i]) for i, n in top]
    assert got["service"]["answer"] is False and got["service"]["embed_model"] == cfg.embed.model
    assert httpx.get(server.url + "/status").json()["corpus"] == corpus_shape  # kept per table version
    with KgwalkClient(server.url) as c:
        assert c.status() == got
