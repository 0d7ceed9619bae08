"""Complete answer sets, read off the KG at query time (query.also_chars; issue 25).

The corpus keeps one walk per root and relation path after the first step
(walks.max_per_signature), so a question whose answers are many parallel facts ("which movies did
the director of Kismet direct") finds one of them on a walk. The retriever completes the set from
the KG itself: from a retrieved walk's root it follows the walk's relation path (relations and
directions) through the KG's edges and lists every end the context does not name yet, in the
walk's own fields (`WalkHit.also`: ids; `also_labels`: their labels), never inside its `text`
(the stored record's sentence). In ego mode a line (node, relation, direction) is completed the
same way, by the path from the root that reaches it. Walks are completed best first until `query.also_chars`
characters of lists are spent over the whole context.

This is the issue's "grouped walk per root and relation path", computed when asked: the corpus
does not grow (1x its walks). Hub guard: a path through a node of huge degree can reach
thousands of ends; each step scans at most `MAX_VISITS` adjacency entries, and only as many ends
are labelled as the budget can take.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from kgwalk.query.ego import walk_steps
from kgwalk.query.hits import RelationPath, WalkHit
from kgwalk.walks.graph import Graph

MAX_VISITS = 20_000  # adjacency entries one step of one path may scan (the hub guard)
ALSO = " Also: "  # how a list follows its walk's sentence in the answer prompt's context


def also_text(hit: WalkHit) -> str:
    """The walk's answer-set list as the context shows it after its sentence ('' when empty)."""
    return f"{ALSO}{', '.join(hit.also_labels)}." if hit.also_labels else ""


class AnswerSets:
    """Every end of a relation path from a root: the KG's edges as the walks traverse them (the
    same direction, explicit inverse relations walked once), with entity labels."""

    def __init__(self, graph: Graph, entities: pa.Table, relations: pa.Table) -> None:
        self.graph = graph
        entities = entities.select(["id", "label"]).sort_by("id")
        if not np.array_equal(entities.column("id").to_numpy(), graph.node_ids):
            raise ValueError("the entities table does not match the graph's nodes")
        self._labels = entities.column("label").combine_chunks()
        self._relations: dict[str, list[int]] = {}  # label -> relation indices (labels need not be unique)
        positions = np.searchsorted(graph.rel_ids, relations.column("id").to_numpy())
        for label, at in zip(relations.column("label").to_pylist(), positions.tolist()):
            self._relations.setdefault(label, []).append(at)

    @classmethod
    def from_tables(cls, edges: pa.Table, entities: pa.Table, relations: pa.Table, direction: str) -> AnswerSets:
        return cls(Graph.from_arrow(edges, entities, relations, direction), entities, relations)

    def ends(self, root: int, path: list[tuple[str, bool]], max_visits: int = MAX_VISITS) -> np.ndarray:
        """The entity ids `path` ((relation label, walked backwards) per step) reaches from `root`,
        in id order; each step scans at most `max_visits` adjacency entries (a partial set past a hub)."""
        g = self.graph
        at = int(np.searchsorted(g.node_ids, root))
        if at == g.num_nodes or g.node_ids[at] != root:
            return np.empty(0, np.int64)
        frontier = np.array([at], np.int64)
        for relation, inverse in path:
            relation_indices = self._relations.get(relation)
            if relation_indices is None or not len(frontier):
                return np.empty(0, np.int64)
            entries = _visits(g, frontier, max_visits)
            rels = g.rel[entries]
            # one relation per label is the rule; np.isin's setup cost most of a query's lists
            named_relation = rels == relation_indices[0] if len(relation_indices) == 1 else np.isin(rels, relation_indices)
            taken = entries[(g.inverse[entries] == inverse) & named_relation]
            frontier = np.unique(g.nbr[taken])
        return g.node_ids[frontier]

    def reach(self, root: int, max_hops: int, max_visits: int = MAX_VISITS) -> dict[int, int]:
        """Entity id -> the fewest steps (1..max_hops, any relation, as the walks go) from `root` to it; each step
        scans at most `max_visits` adjacency entries (a hub's neighbours past that are not reached through it)."""
        g = self.graph
        at = int(np.searchsorted(g.node_ids, root))
        if at == g.num_nodes or g.node_ids[at] != root:
            return {}
        seen = np.zeros(g.num_nodes, bool)
        seen[at] = True
        frontier, hops = np.array([at], np.int64), {}
        for step in range(1, max_hops + 1):
            entries = _visits(g, frontier, max_visits)
            if not len(entries):
                break
            reached = np.unique(g.nbr[entries])
            frontier = reached[~seen[reached]]
            seen[frontier] = True
            hops.update(dict.fromkeys(g.node_ids[frontier].tolist(), step))
        return hops

    def labels(self, ids: list[int]) -> list[str]:
        return self._labels.take(pa.array(np.searchsorted(self.graph.node_ids, np.asarray(ids, np.int64)))).to_pylist()


def _visits(graph: Graph, frontier: np.ndarray, max_visits: int) -> np.ndarray:
    """The adjacency entries of the `frontier` nodes, node after node, the first `max_visits` of them."""
    if len(frontier) == 1:  # a path's first step: one node's entries are one range, at a quarter of the cost
        start = int(graph.indptr[frontier[0]])
        return np.arange(start, start + min(int(graph.degree[frontier[0]]), max_visits))
    starts, degree = graph.indptr[frontier], graph.degree[frontier]
    last = np.cumsum(degree)
    visits = np.arange(min(int(last[-1]), max_visits) if len(last) else 0)
    owner = np.searchsorted(last, visits, side="right")  # which frontier node each visit scans
    return starts[owner] + visits - (last[owner] - degree[owner])


def walk_routes(hits: list[WalkHit]) -> list[tuple[WalkHit, int, RelationPath]]:
    """Each walk with its root and its relation path (an ego line's come from ego_contexts)."""
    return [(hit, hit.nodes[0], tuple((s.relation, s.inverse) for s in walk_steps(hit))) for hit in hits]


def name_answer_sets(routes: Sequence[tuple[WalkHit, int, RelationPath]], sets: AnswerSets, max_chars: int,
                     joint: Mapping[int, int] | None = None) -> None:
    """Best hit first, the ends its relation path reaches from its root that the context does not
    name yet, into its `also` and `also_labels`, in at most `max_chars` characters of lists (as
    `also_text` writes them) over all hits. `routes`: (hit, root, path) per hit of the context.
    `joint`: where the question names several entities, those every one of them reaches (entity ->
    steps, `joint_reach`): a list names them first, nearest first."""
    named = {n for hit, _, _ in routes for n in hit.nodes}
    spent = 0
    completed: set[tuple[int, RelationPath]] = set()
    # the deepest first among equals: an ego-graph's lines of one walk share its score, and the answer is the walk's end
    for hit, root, path in sorted(routes, key=lambda r: (-r[0].score, -len(r[2]))):
        if not path or (root, path) in completed or spent + len(ALSO) + 2 > max_chars:
            continue
        completed.add((root, path))
        new = [e for e in sets.ends(root, list(path)).tolist() if e not in named]
        if joint:
            new.sort(key=lambda e: joint.get(e, len(joint) + 1_000))
        # a name takes at least one character and ", ": label no more than the budget can take
        new = new[: (max_chars - spent) // 3]
        cost = len(ALSO)
        for entity, label in zip(new, sets.labels(new) if new else []):
            added = len(label) + (len(", ") if hit.also else len("."))
            if spent + cost + added > max_chars:
                break
            cost += added
            hit.also.append(entity)
            hit.also_labels.append(label)
            named.add(entity)
        if hit.also:
            spent += cost
