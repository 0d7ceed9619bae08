"""The LangChain retriever (kgwalk.integrations.langchain) with the real langchain-core: Documents,
an LCEL chain, invoke and ainvoke, in process and against a loopback `kgwalk serve` over the sample
KG's corpus (test_serve's module fixtures: built once here, served by uvicorn on loopback)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from pydantic import ValidationError
from integration_kgs import cfg, direct, kg, server  # noqa: F401 - module fixtures: the corpus, a Retriever, a served app, both ways

from kgwalk.client import KgwalkClient, KgwalkClientError
from kgwalk.errors import KgwalkError
from kgwalk.integrations import LocalKg, RemoteKg, remote_kg
from kgwalk.integrations.langchain import KgwalkRetriever
from kgwalk.query.answer import context_text
from kgwalk.query.answer_sets import also_text

QUESTION = "the director of [Kismet] is also the director of which movies"
QUESTIONS = [QUESTION, "what films did Emir Kusturica star in", "who wrote [Kismet]"]



def format_docs(docs: list[Document]) -> str:
    return "\n".join(f"- {d.page_content}" for d in docs)


def test_one_document_per_walk_best_first_with_its_facts(kg, direct):  # noqa: F811
    docs = KgwalkRetriever(kg=kg, k_nodes=2, k_walks=2).invoke(QUESTION)
    retrieval = direct.retrieve(QUESTION, 2, 2)
    walks = retrieval.walks
    assert [d.metadata["walk_id"] for d in docs] == [w.walk_id for w in walks]
    assert [d.page_content for d in docs] == [w.text + also_text(w) for w in walks]
    assert any("Also: " in d.page_content for d in docs)  # an answer-set list, after its sentence
    node_of = {w.walk_id: n for n in retrieval.nodes for w in n.walks}
    for doc, walk in zip(docs, walks):
        node = node_of[walk.walk_id]
        assert (doc.metadata["node"], doc.metadata["node_id"], doc.metadata["named"]) == (node.label, node.id, node.matched)
        assert doc.metadata["node_score"] == pytest.approx(node.score) and doc.metadata["score"] == pytest.approx(walk.score)
        assert doc.metadata["triples"] == walk.triples and doc.metadata["relation_path"] == walk.signature
        assert doc.metadata["also"] == walk.also_labels and doc.metadata["kind"] == walk.kind
    assert any(d.metadata["named"] and d.metadata["node"] == "Kismet" for d in docs)


def test_an_lcel_chain_sync_and_async(kg, direct):  # noqa: F811
    chain = KgwalkRetriever(kg=kg, k_nodes=2, k_walks=2) | RunnableLambda(format_docs)
    want = context_text(direct.retrieve(QUESTION, 2, 2))  # the answer prompt's context, as the answerer writes it
    assert chain.invoke(QUESTION) == want
    assert asyncio.run(chain.ainvoke(QUESTION)) == want


def test_concurrent_ainvoke_gets_the_sequential_results(kg):  # noqa: F811 - the shared fixture
    retriever = KgwalkRetriever(kg=kg, k_nodes=2, k_walks=2)
    want = [[d.page_content for d in retriever.invoke(q)] for q in QUESTIONS]

    async def together() -> list[list[Document]]:
        return await asyncio.gather(*(retriever.ainvoke(q) for q in QUESTIONS * 3))

    got = asyncio.run(together())
    assert [[d.page_content for d in docs] for docs in got] == want * 3


def test_ego_mode_returns_the_ego_graph_lines(kg, direct):  # noqa: F811
    docs = KgwalkRetriever(kg=kg, k_nodes=1, k_walks=2, mode="ego").invoke(QUESTION)
    lines = direct.retrieve(QUESTION, 1, 2, mode="ego").walks
    assert [d.page_content for d in docs] == [w.text + also_text(w) for w in lines]
    assert {d.metadata["kind"] for d in docs} == {"ego"} and docs[0].metadata["node"] == "Kismet"
    assert "ego" not in {d.metadata["kind"] for d in KgwalkRetriever(kg=kg, k_nodes=1, k_walks=2, mode="walks").invoke(QUESTION)}


def test_a_retriever_or_a_client_is_taken_as_it_is(direct, server):  # noqa: F811
    want = [d.page_content for d in KgwalkRetriever(kg=LocalKg(direct), k_nodes=1).invoke(QUESTION)]
    with KgwalkClient(server.url) as client:
        for kg in (direct, client):
            assert [d.page_content for d in KgwalkRetriever(kg=kg, k_nodes=1).invoke(QUESTION)] == want
    assert isinstance(KgwalkRetriever(kg=direct).kg, LocalKg) and isinstance(KgwalkRetriever(kg=client).kg, RemoteKg)
    with pytest.raises(TypeError, match="kg must be a kgwalk Retriever, a KgwalkClient or a KgSource"):
        KgwalkRetriever(kg="http://127.0.0.1:8321")


def test_bad_input_says_why(direct, server):  # noqa: F811
    with pytest.raises(ValidationError, match="k_nodes"):
        KgwalkRetriever(kg=direct, k_nodes=0)
    with pytest.raises(ValidationError, match="mode"):
        KgwalkRetriever(kg=direct, mode="graph")
    with pytest.raises(KgwalkError, match="the question is empty"):
        KgwalkRetriever(kg=direct).invoke("   ")
    remote = KgwalkRetriever(kg=remote_kg(server.url))
    with pytest.raises(KgwalkClientError) as err:
        remote.invoke("   ")
    assert err.value.status_code == 422 and err.value.detail == "question: Value error, the question is blank"
    with pytest.raises(KgwalkClientError) as err:
        asyncio.run(KgwalkRetriever(kg=remote.kg, k_nodes=99).ainvoke(QUESTION))
    assert err.value.status_code == 422 and err.value.detail.startswith("k_nodes: Input should be less than or equal to 20")
