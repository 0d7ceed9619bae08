"""Retriever: embed the question, take the top-k nodes, then each node's top-k walks (Eq. 3).

    from kgwalk.query import Retriever
    retriever = Retriever.from_config(name="metaqa", warehouse="warehouse")
    for node in retriever.retrieve("who directed [Kismet]"):
        print(node.label, [w.text for w in node.walks])
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgwalk.config import Config, load_config
from kgwalk.embed.model import Embedder, make_embedder
from kgwalk.errors import KgwalkError
from kgwalk.index.store import VectorStore, collection_names, open_store
from kgwalk.walks.labels import walk_triples


@dataclass
class WalkHit:
    walk_id: int
    score: float
    kind: str
    text: str
    nodes: list[int]
    node_labels: list[str]
    triples: list[tuple[str, str, str]]  # (head, relation, tail) as the KG states them

    @property
    def end_node(self) -> int:
        return self.nodes[-1]


@dataclass
class NodeHit:
    id: int
    label: str
    score: float
    walks: list[WalkHit] = field(default_factory=list)


def _walk_hit(score: float, p: dict[str, Any]) -> WalkHit:
    return WalkHit(
        walk_id=int(p["walk_id"]),
        score=score,
        kind=p["kind"],
        text=p["text"],
        nodes=[int(n) for n in p["nodes"]],
        node_labels=list(p["node_labels"]),
        triples=walk_triples(p["node_labels"], p["rel_labels"], p["inverse"]),
    )


class Retriever:
    def __init__(self, cfg: Config, embedder: Embedder | None = None, store: VectorStore | None = None) -> None:
        self.cfg = cfg
        self.store = store or open_store(cfg)
        self._embedder = embedder
        self.nodes_collection, self.walks_collection = collection_names(cfg)

    @property
    def embedder(self) -> Embedder:
        """Loaded on first use, so bad input fails fast without loading a model."""
        if self._embedder is None:
            self._embedder = make_embedder(self.cfg.embed.model, self.cfg.embed.device, precision=self.cfg.embed.precision)
        return self._embedder

    @classmethod
    def from_config(cls, conf: str | None = None, overrides: list[str] | None = None, **values: Any) -> "Retriever":
        return cls(load_config(conf, overrides, **values))

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None) -> list[NodeHit]:
        if not question.strip():
            raise KgwalkError("the question is empty")
        k_nodes = k_nodes or self.cfg.query.k_nodes
        k_walks = k_walks or self.cfg.query.k_walks
        if k_nodes < 1 or k_walks < 1:
            raise KgwalkError("k_nodes and k_walks must be >= 1")
        q = self.embedder.encode([question])[0]
        hits = []
        for node in self.store.search(self.nodes_collection, q, k_nodes):
            walks = self.store.search(self.walks_collection, q, k_walks, root=node.payload["id"])
            hits.append(
                NodeHit(int(node.payload["id"]), node.payload["label"], node.score, [_walk_hit(w.score, w.payload) for w in walks])
            )
        return hits

    def close(self) -> None:
        self.store.close()


def hits_to_json(hits: list[NodeHit]) -> list[dict[str, Any]]:
    return [asdict(h) for h in hits]
