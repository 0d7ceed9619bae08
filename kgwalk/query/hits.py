"""What retrieval returns: the top nodes, each with its walks (or, in ego mode, the lines of its
pruned ego-graph), as plain dataclasses that the CLI, the HTTP API and the answerer read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from kgwalk.config import QueryMode
from kgwalk.walks.labels import step_signatures, step_triples


NO_GOOD_MATCH = "No good match: the question names no entity of this KG and no walk is close to it; these are the nearest walks."
RelationPath = tuple[tuple[str, bool], ...]  # per step from a root: (relation label, walked against the KG's direction)


@dataclass(slots=True)
class WalkHit:
    walk_id: int
    score: float
    kind: str
    text: str
    nodes: list[int]
    node_labels: list[str]
    triples: list[tuple[str, str, str]]  # (head, relation, tail) as the KG states them
    signature: str  # the relation path, e.g. "directed_by>|<directed_by" (< = walked backwards)
    cosine: float  # the walk's cosine to the question; `score` adds any rerank prior
    # the other ends of its relation path from its root in the KG, none named elsewhere in the
    # context (query.also_chars; kgwalk/query/answer_sets.py): ids, and their labels in the same order
    also: list[int] = field(default_factory=list)
    also_labels: list[str] = field(default_factory=list)

    @property
    def end_node(self) -> int:
        return self.nodes[-1]


@dataclass
class EgoLine(WalkHit):
    """One line of a node's pruned ego-graph (query.mode=ego): a node and its kept neighbours by one relation
    ("E starred Ann, Bob."). `walk_id` is the best walk it comes from, `nodes` the node then its neighbours,
    `signature` the one relation; `kind` is "ego"."""


def best_first(hit: WalkHit) -> tuple[float, int]:
    """The order walks are ranked and shown in: best score first, equal scores by walk id, so a
    question gets the same context from every build of the same corpus (a short sentence's vector
    often ties with another's; the store returns ties in the order the build happened to write)."""
    return (-hit.score, hit.walk_id)


@dataclass
class NodeHit:
    id: int
    label: str
    score: float  # cosine of the node vector to the question
    matched: bool = False  # named in the question (hybrid search)
    walks: list[WalkHit] = field(default_factory=list)


@dataclass
class Retrieval:
    question: str
    nodes: list[NodeHit]
    timings_ms: dict[str, float]
    mode: str = "walks"  # query.mode: in ego mode a node's "walks" are the lines of its ego-graph
    best: WalkHit | None = None  # the best-scoring walk (ego mode: of the candidates): the extractive answer is its end
    # the evidence is too weak to call a match: the question names no entity of the KG (kgwalk/query/steps.py) and the
    # best walk's cosine is below query.weak_cosine (or there is no walk); the walks are still shown, the nearest there are
    no_good_match: bool = False

    @property
    def walks(self) -> list[WalkHit]:
        """Every retrieved walk, best score first (ego mode: node by node, each as told)."""
        if self.mode == "ego":
            return [w for n in self.nodes for w in n.walks]
        return sorted((w for n in self.nodes for w in n.walks), key=best_first)

    @property
    def match_note(self) -> str:
        """One line for people where the match is weak; empty otherwise."""
        return NO_GOOD_MATCH if self.no_good_match else ""

    def to_json(self) -> dict[str, Any]:
        return {"question": self.question, "mode": self.mode, "nodes": [asdict(n) for n in self.nodes], "timings_ms": self.timings_ms,
                "no_good_match": self.no_good_match, "match_note": self.match_note}


def walk_hits(scores: Sequence[float], records: pa.Table) -> list[WalkHit]:
    """The walks of `records` (kgwalk/index/records.py's fields), row for row, each with its score. Built column by
    column, not from a dict per record: a topic the prior reranks brings its best walk of every relation path, some
    170 walks a question on a family KG, where a dict and a signature per record took 1 ms."""
    nodes, node_at = _flat(records.column("nodes"))
    labels, _ = _flat(records.column("node_labels"))
    relations, step_at = _flat(records.column("rel_labels"))
    inverse, _ = _flat(records.column("inverse"))
    triples, steps = step_triples(labels, relations, inverse, np.diff(step_at)), step_signatures(relations, inverse)
    columns = (records.column(c).to_pylist() for c in ("walk_id", "kind", "text"))
    return [WalkHit(walk_id, score, kind, text, nodes[a:b], labels[a:b], triples[c:d], "|".join(steps[c:d]), score)
            for walk_id, kind, text, score, a, b, c, d in zip(*columns, scores, node_at, node_at[1:], step_at, step_at[1:])]


def _flat(column: pa.ChunkedArray) -> tuple[list[Any], list[int]]:
    """A list column's values as Python objects, and where each row's start and end among them (rows + 1 offsets)."""
    lists = column.combine_chunks()
    offsets = np.zeros(len(lists) + 1, np.int64)
    np.cumsum(lists.value_lengths().to_numpy(zero_copy_only=False), out=offsets[1:])  # value_lengths and flatten respect a slice
    return lists.flatten().to_numpy(zero_copy_only=False).tolist(), offsets.tolist()


class Retrieves(Protocol):
    """What answers a question with a Retrieval: the Retriever itself, the service's turn-taking wrapper of it,
    and what the integrations wrap (kgwalk/integrations)."""

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: QueryMode | None = None) -> Retrieval: ...

    def warm_up(self) -> None:
        """Load what the first question would (models, lexicon, prior), so that it is not slower than the rest."""
        ...

    def close(self) -> None: ...
