"""The MCP server (kgwalk.integrations.mcp) through the MCP Python SDK's own client: over stdio,
spawning `kgwalk mcp`, and over streamable HTTP at /mcp of a loopback `kgwalk serve` behind an API
key (refused without it), on the sample KG's corpus (test_serve's module fixtures). Each transport
lists the tools and calls each with good and bad arguments: results match the Retriever's, errors
come back as tool errors (isError) with a one-line reason, and the server goes on."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import corpus
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from test_llm_verbalize import ChatServer
from test_serve import SAMPLE, Served, cfg, direct  # noqa: F401 - module fixtures: the built corpus, a Retriever on it

from kgwalk.integrations.mcp import serve_addon
from kgwalk.query.answer import context_text
from kgwalk.serve import create_app
from kgwalk.storage import read_table

REPO = Path(__file__).resolve().parents[1]
QUESTION = "who directed [Kismet]"
ASKED = "who directed [Kismet] (all of them)"  # the fake LLM echoes a prompt from its first "(" on
KEY = "mcp-s3cret"
BAD_SEARCHES = [  # (arguments, the reason after "Error executing tool search: ")
    ({"question": ""}, "question: String should have at least 1 character"),
    ({"question": "   "}, "the question is empty"),  # the retriever's own refusal
    ({"question": "x" * 2001}, "question: String should have at most 2000 characters"),
    ({"question": ["who"]}, "question: Input should be a valid string"),
    ({"k_nodes": 2}, "question: Field required"),
    ({"question": "who", "k_nodes": 0}, "k_nodes: Input should be greater than or equal to 1"),
    ({"question": "who", "k_walks": 21}, "k_walks: Input should be less than or equal to 20"),
    ({"question": "who", "k_nodes": 2.5}, "k_nodes: Input should be a valid integer, got a number with a fractional part"),
    ({"question": "who", "k_node": 2}, "unknown argument k_node (it takes: k_nodes, k_walks, question)"),
]


async def error_of(client: Client, tool: str, arguments: dict) -> str:
    """The text of a call that must fail as a tool error."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error and result.structured_content is None, (tool, arguments, result)
    (content,) = result.content
    assert "\n" not in content.text, content.text
    return content.text


async def check_the_tools(client: Client, direct, cfg, answers: bool) -> None:  # noqa: F811
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"search", "answer", "entity", "status"}
    assert all(t.description for t in tools.values())
    search = tools["search"].input_schema
    assert search["required"] == ["question"] and search["properties"]["question"]["maxLength"] == cfg.query.max_question_chars
    assert search["properties"]["k_nodes"]["anyOf"][0] == {"maximum": cfg.serve.max_k, "minimum": 1, "type": "integer"}
    assert all(p["description"] for t in tools.values() for p in t.input_schema["properties"].values())
    assert {"question", "context", "walks"} <= set(tools["search"].output_schema["properties"])

    result = await client.call_tool("search", {"question": QUESTION, "k_nodes": 2, "k_walks": 2})
    assert not result.is_error, result
    got, want = result.structured_content, direct.retrieve(QUESTION, 2, 2)
    assert json.loads(result.content[0].text) == got  # the same JSON as text, for clients without structured output
    assert got["context"] == context_text(want)  # the answer prompt's context, answer-set lists included
    assert [w["walk_id"] for w in got["walks"]] == [w.walk_id for w in want.walks]
    assert [(w["triples"], w["also"], w["relation_path"]) for w in got["walks"]] == [([list(t) for t in w.triples], w.also_labels, w.signature) for w in want.walks]
    assert any(w["node"] == "Kismet" and w["named"] for w in got["walks"])

    for arguments, reason in BAD_SEARCHES:
        assert await error_of(client, "search", arguments) == f"Error executing tool search: {reason}"
    assert await error_of(client, "nope", {}) == "Unknown tool: nope"

    if answers:
        result = await client.call_tool("answer", {"question": ASKED})
        assert not result.is_error, result
        answered = result.structured_content
        assert answered["answer"].startswith("Sure! Here is the sentence:") and answered["known"] is True
        assert answered["question"] == ASKED and answered["context"] == context_text(direct.retrieve(ASKED, mode=cfg.answer.context))
    else:
        assert (await error_of(client, "answer", {"question": QUESTION})).startswith("Error executing tool answer: answer.backend: no LLM is configured")
    assert await error_of(client, "answer", {"question": ""}) == "Error executing tool answer: question: String should have at least 1 character"

    kismet = int(direct.lexicon.ids_of("Kismet")[0])
    edges = read_table(cfg.table("edges"), ["src", "dst"]).to_pylist()
    result = await client.call_tool("entity", {"label": "kismet"})  # labels are found as the lexicon finds them: any case
    (entity,) = result.structured_content["entities"]
    assert (entity["id"], entity["label"]) == (kismet, "Kismet")
    assert entity["edges"] == len(entity["facts"]) == sum(kismet in (e["src"], e["dst"]) for e in edges)
    assert {"head": "Kismet", "relation": "directed_by", "tail": "William Dieterle", "text": "Kismet was directed by William Dieterle."} in entity["facts"]
    assert len((await client.call_tool("entity", {"label": "Kismet", "limit": 2})).structured_content["entities"][0]["facts"]) == 2
    assert await error_of(client, "entity", {"label": "No Such Film"}) == f"Error executing tool entity: no entity of the KG {cfg.name!r} is labelled 'No Such Film'"
    assert await error_of(client, "entity", {"label": "Kismet", "limit": 0}) == "Error executing tool entity: limit: Input should be greater than or equal to 1"

    status = (await client.call_tool("status", {})).structured_content
    assert (status["name"], status["answer"], status["k_nodes"], status["max_k"]) == (cfg.name, answers, cfg.query.k_nodes, cfg.serve.max_k)
    assert bool(status["no_answer_reason"]) != answers
    assert {t["table"] for t in status["tables"]["kg"]} == {"edges", "entities", "relations"}
    assert await error_of(client, "status", {"verbose": True}) == "Error executing tool status: unknown argument verbose (it takes: none)"

    # after all of those errors, the server still answers
    assert not (await client.call_tool("search", {"question": QUESTION, "k_nodes": 1})).is_error


def test_kgwalk_mcp_over_stdio(cfg, direct):  # noqa: F811
    server = StdioServerParameters(command=sys.executable, cwd=REPO, env={"PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"},
                                   args=["-m", "kgwalk.cli", "mcp", "--name", cfg.name, "--warehouse", str(cfg.warehouse), "--set", f"embed.model={corpus.MODEL}"])

    async def session() -> None:
        async with Client(server) as client:
            await check_the_tools(client, direct, cfg, answers=False)

    anyio.run(session)


def test_kgwalk_mcp_without_a_corpus_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "kgwalk.cli", "mcp", "--name", "t", "--warehouse", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.startswith("kgwalk: error: ") and done.stderr.count("\n") == 1 and str(tmp_path) in done.stderr, done.stderr


def test_mcp_on_kgwalk_serve_behind_its_api_key(cfg, direct, monkeypatch):  # noqa: F811
    llm = ChatServer(empty_for="\x00 nothing")  # (by default it leaves prompts naming Edward Knoblock, Kismet's writer, unanswered)
    llm_cfg = corpus.config(Path(cfg.warehouse), SAMPLE, ["answer.backend=openai", f"answer.llm.base_url={llm.url}", "answer.llm.model=tiny-chat"])
    monkeypatch.setenv(cfg.serve.api_key_env, KEY)
    served = Served(create_app(llm_cfg, retriever=direct, addons=(serve_addon(llm_cfg),)))
    url = served.url + "/mcp"

    async def session() -> None:
        with pytest.raises(ExceptionGroup) as refused:  # no key: the client's first request fails
            async with Client(url) as client:
                await client.list_tools()
        assert refused.group_contains(MCPError)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {KEY}"}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            await check_the_tools(client, direct, llm_cfg, answers=True)

    try:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Key": KEY[:-1]}):
            response = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers)
            assert response.status_code == 401 and "API key" in response.json()["detail"], response.text
        anyio.run(session)
        assert any(ASKED in r["messages"][-1]["content"] for r in llm.requests)  # `answer` asked the service's LLM
        # with a key, the service is reached by whatever host name it has: the key is the guard
        other_host = httpx.post(url, json={}, headers={"X-API-Key": KEY, "Host": "kg.example"})
        assert other_host.status_code not in (401, 421), other_host.text
    finally:
        served.close()
        llm.close()


def test_kgwalk_serve_mounts_mcp(cfg, direct):  # noqa: F811
    """The CLI's wiring: `kgwalk serve` (port 0: the banner says which) has the tools at /mcp, behind its key."""
    env = dict(os.environ, PYTHONPATH=str(REPO)) | {cfg.serve.api_key_env: KEY}
    serve = subprocess.Popen([sys.executable, "-m", "kgwalk.cli", "serve", "--name", cfg.name, "--warehouse", str(cfg.warehouse), "--port", "0",
                              "--set", f"embed.model={corpus.MODEL}"], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    try:
        banner = next(line for line in serve.stderr if "serving" in line or serve.poll() is not None)
        url = re.search(r"on (http://\S+)/ ", banner).group(1) + "/mcp"
        assert httpx.post(url, json={}).status_code == 401

        async def session() -> list[str]:
            async with httpx2.AsyncClient(headers={"X-API-Key": KEY}) as http, Client(streamable_http_client(url, http_client=http)) as client:
                found = await client.call_tool("search", {"question": QUESTION, "k_nodes": 1})
                assert found.structured_content["walks"][0]["node"] == "Kismet"
                return [t.name for t in (await client.list_tools()).tools]

        assert anyio.run(session) == ["search", "answer", "entity", "status"]
    finally:
        serve.terminate()
        serve.wait(30)


def test_without_a_key_mcp_admits_loopback_hosts_alone(cfg, direct, monkeypatch):  # noqa: F811
    """A keyless service listens on loopback only; the SDK's guard keeps a web page that renamed
    itself to 127.0.0.1 (DNS rebinding) from calling the tools."""
    monkeypatch.delenv(cfg.serve.api_key_env, raising=False)
    served = Served(create_app(cfg, retriever=direct, addons=(serve_addon(cfg),)))
    try:
        async def session() -> None:
            async with Client(served.url + "/mcp") as client:
                result = await client.call_tool("search", {"question": QUESTION, "k_nodes": 1})
                assert not result.is_error and result.structured_content["walks"]

        anyio.run(session)
        rebound = httpx.post(served.url + "/mcp", json={}, headers={"Host": "attacker.example"})
        assert rebound.status_code == 421, rebound.text
    finally:
        served.close()


def test_the_core_never_imports_the_frameworks():
    code = ("import sys, kgwalk.cli, kgwalk.serve, kgwalk.query, kgwalk.client, kgwalk.integrations; "
            "print([m for m in ('langchain_core', 'llama_index', 'mcp') if m in sys.modules])")
    light = subprocess.run([sys.executable, "-c", "import sys, kgwalk.integrations; print('kgwalk.query' in sys.modules, 'torch' in sys.modules)"],
                           capture_output=True, text=True, check=True, cwd=REPO)
    assert light.stdout.strip() == "False False"  # a remote KG's adapters load no model and no index
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert done.stdout.strip() == "[]", done.stdout
