"""A LangChain retriever over a kgwalk KG (`pip install 'kgwalk[langchain]'`): one Document per retrieved walk.

    from kgwalk.integrations import local_kg
    from kgwalk.integrations.langchain import KgwalkRetriever
    retriever = KgwalkRetriever(kg=local_kg("metaqa", warehouse="warehouse"), k_nodes=2)
    for doc in retriever.invoke("who directed [Kismet]"):
        print(doc.page_content, doc.metadata["triples"])

A Document's page_content is the walk's sentence, followed by its answer-set list where there is
one ("... directed Juarez. Also: Tennessee Johnson, Lawyer Man."); its metadata is the rest of
`kgwalk.integrations.WalkRecord` (node, node_score, named, score, walk_id, kind, triples,
relation_path, also). `ainvoke` runs the retrieval in a worker thread (LangChain's default), one
retrieval at a time per in-process Retriever.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import Field, field_validator

from kgwalk.integrations.source import KgSource, Mode, as_source, walk_records


class KgwalkRetriever(BaseRetriever):
    """Walk&Retrieve over a KG: the question's top nodes, the top walks of each, as Documents best first."""

    kg: Any = Field(description="local_kg(...), remote_kg(...), a kgwalk Retriever or a KgwalkClient")
    k_nodes: int | None = Field(None, ge=1, description="nodes to retrieve (None: the KG's query.k_nodes)")
    k_walks: int | None = Field(None, ge=1, description="walks per node (None: the KG's query.k_walks)")
    mode: Mode | None = Field(None, description="walks, or ego: the lines of each node's pruned ego-graph (None: the KG's query.mode)")

    @field_validator("kg")
    @classmethod
    def _kg_source(cls, kg: Any) -> KgSource:
        return as_source(kg)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        retrieval = self.kg.retrieve(query, self.k_nodes, self.k_walks, self.mode)
        return [Document(page_content=r.content, metadata=r.metadata()) for r in walk_records(retrieval)]
