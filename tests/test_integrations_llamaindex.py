"""The LlamaIndex retriever (kgwalk.integrations.llamaindex) with the real llama-index-core: retrieve,
aretrieve, and a RetrieverQueryEngine with the library's MockLLM (which answers with the prompt it
was given: the context the engine built), in process and against a loopback `kgwalk serve` over the
sample KG's corpus (test_serve's module fixtures)."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode
from integration_kgs import cfg, direct, kg, server  # noqa: F401 - module fixtures: the corpus, a Retriever, a served app, both ways

from kgwalk.client import KgwalkClientError
from kgwalk.errors import KgwalkError
from kgwalk.integrations.llamaindex import KgwalkRetriever
from kgwalk.query.answer_sets import also_text

QUESTION = "the director of [Kismet] is also the director of which movies"



def test_retrieve_gives_the_walks_as_scored_text_nodes(kg, direct):  # noqa: F811
    retrieval = direct.retrieve(QUESTION, 2, 2)
    node_of = {w.walk_id: n for n in retrieval.nodes for w in n.walks}
    got = KgwalkRetriever(kg, k_nodes=2, k_walks=2).retrieve(QUESTION)
    assert [n.node.get_content() for n in got] == [w.text + also_text(w) for w in retrieval.walks]
    for hit, walk in zip(got, retrieval.walks):
        meta = hit.node.metadata
        assert hit.score == pytest.approx(walk.score) and meta["walk_id"] == walk.walk_id
        assert (meta["node"], meta["named"], meta["relation_path"]) == (node_of[walk.walk_id].label, node_of[walk.walk_id].matched, walk.signature)
        assert meta["triples"] == walk.triples and meta["also"] == walk.also_labels
        # the metadata stays out of what the LLM and an embedder read: the sentence says it already
        assert hit.node.get_content(MetadataMode.LLM) == hit.node.get_content(MetadataMode.EMBED) == hit.node.get_content()
    awaited = asyncio.run(KgwalkRetriever(kg, k_nodes=2, k_walks=2).aretrieve(QUESTION))
    assert [(n.node.get_content(), n.score) for n in awaited] == [(n.node.get_content(), n.score) for n in got]


def test_a_query_engine_puts_the_walks_in_the_llms_context(kg, direct):  # noqa: F811
    engine = RetrieverQueryEngine.from_args(KgwalkRetriever(kg, k_nodes=2, k_walks=2), llm=MockLLM())
    question = "who directed [Kismet]"
    walks = direct.retrieve(question, 2, 2).walks
    expected = next(w for w in walks if ("Kismet", "directed_by", "William Dieterle") in w.triples)  # (the hashing test embedder's ranking)
    for response in (engine.query(question), asyncio.run(engine.aquery(question))):
        prompt = str(response)  # MockLLM's reply is its prompt
        assert f"Query: {question}" in prompt and expected.text + also_text(expected) in prompt
        assert all(w.text + also_text(w) in prompt for w in walks), prompt
        assert "walk_id" not in prompt and "triples" not in prompt
        assert [n.node.metadata["walk_id"] for n in response.source_nodes] == [w.walk_id for w in walks]


def test_ego_mode_and_bad_input(kg, direct):  # noqa: F811
    lines = direct.retrieve(QUESTION, 1, 2, mode="ego").walks
    got = KgwalkRetriever(kg, k_nodes=1, k_walks=2, mode="ego").retrieve(QUESTION)
    assert [n.node.get_content() for n in got] == [w.text + also_text(w) for w in lines]
    assert {n.node.metadata["kind"] for n in got} == {"ego"}
    with pytest.raises((KgwalkClientError, KgwalkError), match="the question is (empty|blank)"):
        KgwalkRetriever(kg).retrieve("  ")
