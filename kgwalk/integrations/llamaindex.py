"""A LlamaIndex retriever over a kgwalk KG (`pip install 'kgwalk[llamaindex]'`): one NodeWithScore(TextNode) per retrieved walk.

    from llama_index.core.query_engine import RetrieverQueryEngine
    from kgwalk.integrations import remote_kg
    from kgwalk.integrations.llamaindex import KgwalkRetriever
    retriever = KgwalkRetriever(remote_kg("http://127.0.0.1:8321"), k_nodes=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=my_llm)

A node's text is the walk's sentence, followed by its answer-set list where there is one; its
score the walk's; its metadata the rest of `kgwalk.integrations.WalkRecord`, kept out of the text
the LLM and the embedder see (the triples say again what the sentence says). `aretrieve` runs the
retrieval in a worker thread, one at a time per in-process Retriever.
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from kgwalk.integrations.source import Mode, WalkRecord, as_source, walk_records


def text_node(record: WalkRecord) -> NodeWithScore:
    metadata = record.metadata()
    keys = list(metadata)
    return NodeWithScore(node=TextNode(text=record.content, metadata=metadata, excluded_llm_metadata_keys=keys,
                                       excluded_embed_metadata_keys=keys), score=record.score)


class KgwalkRetriever(BaseRetriever):
    """Walk&Retrieve over a KG: the question's top nodes, the top walks of each, best first.

    `kg`: local_kg(...), remote_kg(...), a kgwalk Retriever or a KgwalkClient; `k_nodes`, `k_walks`,
    `mode` (walks | ego): None for the KG's query.* defaults."""

    def __init__(self, kg: Any, k_nodes: int | None = None, k_walks: int | None = None, mode: Mode | None = None,
                 callback_manager: CallbackManager | None = None) -> None:
        super().__init__(callback_manager=callback_manager)
        self.kg = as_source(kg)
        self.k_nodes, self.k_walks, self.mode = k_nodes, k_walks, mode

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        retrieval = self.kg.retrieve(query_bundle.query_str, self.k_nodes, self.k_walks, self.mode)
        return [text_node(r) for r in walk_records(retrieval)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
