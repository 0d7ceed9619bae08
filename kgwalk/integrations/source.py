"""What the adapters share: a KG to retrieve from, in this process or behind `kgwalk serve`, and
its retrieval read into plain walk records.

Both kinds of KG give the /retrieve JSON (`Retrieval.to_json()`: the remote one over HTTP, the
local one in process), so one parser reads either. This module imports neither a model nor an
index: an app that only calls a remote KG loads httpx and pydantic alone.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from kgwalk.client import KgwalkClient

if TYPE_CHECKING:
    from kgwalk.query import Retriever

Mode = Literal["walks", "ego"]  # query.mode; None where a parameter takes one: the KG's own
ALSO = " Also: "  # how an answer-set list follows its sentence in the answer prompt (kgwalk.query.answer_sets.ALSO)


@runtime_checkable
class KgSource(Protocol):
    """A KG that retrieves: its answer is the /retrieve JSON (`kgwalk.query.Retrieval.to_json()`)."""

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: Mode | None = None) -> dict[str, Any]: ...


# one lock per Retriever, however many sources wrap it: a Retriever is not known to be thread-safe,
# and async callers (ainvoke, aretrieve, MCP tools) run it in worker threads
_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def _lock_of(retriever: Retriever) -> threading.Lock:
    with _LOCKS_LOCK:
        return _LOCKS.setdefault(retriever, threading.Lock())


class LocalKg:
    """A KG in this process: a `kgwalk.query.Retriever` over a built warehouse, its calls taking turns."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.lock = _lock_of(retriever)

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: Mode | None = None) -> dict[str, Any]:
        with self.lock:
            return self.retriever.retrieve(question, k_nodes, k_walks, mode).to_json()

    def close(self) -> None:
        self.retriever.close()


class RemoteKg:
    """A KG behind a running `kgwalk serve`, through `kgwalk.client.KgwalkClient` (no model, index, Spark or Ray here)."""

    def __init__(self, client: KgwalkClient) -> None:
        self.client = client

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: Mode | None = None) -> dict[str, Any]:
        return self.client.retrieve(question, k_nodes, k_walks, mode)

    def close(self) -> None:
        self.client.close()


def local_kg(name: str | None = None, warehouse: str | None = None, conf: str | None = None, overrides: list[str] | None = None) -> LocalKg:
    """The KG `name` built in `warehouse` (conf: name, warehouse), opened in this process; `overrides`: `key=value` settings."""
    from kgwalk.query import Retriever

    return LocalKg(Retriever.from_config(conf, overrides, name=name, warehouse=warehouse))


def remote_kg(url: str, api_key: str | None = None, timeout: float = 30.0) -> RemoteKg:
    """The KG a `kgwalk serve` at `url` answers over; `api_key`: its serve.api_key_env key, where it has one."""
    return RemoteKg(KgwalkClient(url, api_key=api_key, timeout=timeout))


def as_source(kg: Any) -> KgSource:
    """A KG to retrieve from, given a source, a `Retriever` (in process) or a `KgwalkClient` (a running `kgwalk serve`)."""
    if isinstance(kg, KgwalkClient):
        return RemoteKg(kg)
    retrievers = sys.modules.get("kgwalk.query.retriever")  # not loaded: kg cannot be a Retriever (and the import is heavy)
    if retrievers is not None and isinstance(kg, retrievers.Retriever):
        return LocalKg(kg)
    if isinstance(kg, KgSource):
        return kg
    raise TypeError(f"kg must be a kgwalk Retriever, a KgwalkClient or a KgSource (local_kg, remote_kg), not {type(kg).__name__}")


class WalkRecord(BaseModel):
    """One retrieved walk (in ego mode: one line of a top node's pruned ego-graph) as the adapters hand it on."""

    text: str = Field(description="the walk as one sentence (ego mode: a line of a top node's ego-graph)")
    also: list[str] = Field(description="the other ends of its relation path from its root in the KG: the rest of its answer set, where there is one")
    node: str = Field(description="the label of the top node it was retrieved for")
    node_id: int
    node_score: float = Field(description="cosine of that node to the question")
    named: bool = Field(description="the node is named in the question")
    score: float = Field(description="the walk's cosine to the question, plus any rerank prior")
    walk_id: int = Field(description="the walk's id in the corpus (ego mode: of the best walk the line comes from)")
    kind: str = Field(description="bfs, random, or ego")
    triples: list[tuple[str, str, str]] = Field(description="(head, relation, tail) as the KG states them")
    relation_path: str = Field(description='the relation path from the root, e.g. "directed_by>|<directed_by" (< = walked against the KG\'s direction)')

    @property
    def content(self) -> str:
        """The sentence, followed by its answer-set list where there is one, as the answer prompt shows it."""
        return f"{self.text}{ALSO}{', '.join(self.also)}." if self.also else self.text

    def metadata(self) -> dict[str, Any]:
        """Everything but the sentence, for a Document's or a TextNode's metadata."""
        return self.model_dump(exclude={"text"})


def walk_records(retrieval: dict[str, Any]) -> list[WalkRecord]:
    """The walks of a /retrieve JSON answer in the order the answer prompt shows them: best first
    (ego mode: node by node, each node's lines as told)."""
    records = [
        WalkRecord(text=w["text"], also=w.get("also_labels", []), node=n["label"], node_id=n["id"], node_score=n["score"],
                   named=n.get("matched", False), score=w["score"], walk_id=w["walk_id"], kind=w["kind"],
                   triples=w["triples"], relation_path=w["signature"])
        for n in retrieval["nodes"] for w in n["walks"]
    ]
    if retrieval.get("mode", "walks") == "ego":
        return records
    return sorted(records, key=lambda r: (-r.score, r.walk_id))  # kgwalk.query.hits.best_first


def context_text(records: list[WalkRecord]) -> str:
    """The records as the answer prompt's context lists them (kgwalk.query.answer.context_text)."""
    return "\n".join(f"- {r.content}" for r in records)
