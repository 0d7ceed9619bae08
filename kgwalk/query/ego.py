"""Ego-graph retrieval with soft pruning (GRAG, ../shared/papers/grag.txt), as `query.mode: ego`.

GRAG indexes each node's k-hop ego-graph, retrieves the ego-graphs most similar to the question,
down-weights their nodes and edges by relevance to it, and describes what is left hierarchically.
Here it is built from what walk mode already has, with no index of its own:

- a top node's ego-graph is the union of its candidate walks (the `query.candidates` walks most
  similar to the question, rescored by any prior): similarity already prunes it;
- an edge is as relevant as the best walk through it (soft pruning: edges enter the context best
  first, each with the path that joins it to the root, until the character budget is spent);
- the context is one line per (node, relation, direction) that lists every kept neighbour
  ("Tom Hanks starred in Big, Cast Away, Splash."), root first, then its neighbours, then theirs;
- with query.also_chars, a line also lists the other ends of the relation path from the root
  that reaches it, from the KG (kgwalk/query/answer_sets.py): each line comes with that path.

Grouping is what ego mode buys: the parallel answers that walk mode spends a walk each on share
one line. bench/ego.py compares both modes at equal context length (bench/results/ego.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kgwalk.query.hits import EgoLine, NodeHit, RelationPath, WalkHit
from kgwalk.walks.labels import signature


@dataclass(frozen=True)
class Step:
    """One step of a walk as an edge of the ego-graph: `node -relation-> neighbour`, walked
    against the KG's direction when `inverse`."""

    node: int
    relation: str
    inverse: bool
    neighbour: int


def walk_steps(walk: WalkHit) -> list[Step]:
    """The walk's steps, its direction read off its triples (head first as the KG states them)."""
    return [Step(walk.nodes[i], rel, head != walk.node_labels[i], walk.nodes[i + 1]) for i, (head, rel, _) in enumerate(walk.triples)]


@dataclass
class _Line:
    """The kept neighbours of one node along one relation and direction."""

    node: int
    relation: str
    inverse: bool
    neighbours: list[int]
    score: float
    cosine: float
    walk_id: int
    root: int  # the root of the best walk through the line (an aligned alias's walk starts at the alias)
    path: RelationPath  # from that root to the neighbours, along that walk


LINE_ENDS = len("- .\n")  # a line's bullet, full stop and newline in the context (answer.context_text)


def context_chars(walks: list[WalkHit]) -> int:
    """How many characters these walks take in the answer prompt's context."""
    return sum(len(w.text) + len("- \n") for w in walks)


class _Context:
    """One top node's pruned ego-graph, grown edge by edge."""

    def __init__(self, root: int, labels: dict[int, str], phrase: Callable[[str, bool], tuple[str, str]]) -> None:
        self.root = root
        self.labels = labels
        self.phrase = phrase
        self.lines: dict[tuple[int, str, bool], _Line] = {}
        self.kept: set[Step] = set()

    def cost(self, steps: list[Step]) -> int:
        """Characters these steps add to the context."""
        added, opened = 0, set()
        for s in steps:
            key = (s.node, s.relation, s.inverse)
            if key in self.lines or key in opened:
                added += len(", ") + len(self.labels[s.neighbour])
            else:
                opened.add(key)
                before, after = self.phrase(s.relation, s.inverse)
                added += LINE_ENDS + len(self.labels[s.node]) + 1 + len(before) + len(self.labels[s.neighbour]) + len(after)
        return added

    def keep(self, steps: list[Step], walk: WalkHit, path: list[Step]) -> None:
        """Keep these `steps` of `walk`, whose steps from the root up to them are `path`."""
        for s in steps:
            key = (s.node, s.relation, s.inverse)
            line = self.lines.get(key)
            if line is None:
                route = tuple((p.relation, p.inverse) for p in path[: path.index(s) + 1])
                self.lines[key] = _Line(s.node, s.relation, s.inverse, [s.neighbour], walk.score, walk.cosine, walk.walk_id, walk.nodes[0], route)
            else:
                line.neighbours.append(s.neighbour)
            self.kept.add(s)

    def hits(self) -> list[tuple[EgoLine, int, RelationPath]]:
        """The lines, root's first, then by the depth of the node they start from (breadth
        first over kept edges), best first within a depth; each with a root and the relation
        path from it that reaches the line."""
        depth = {self.root: 0}
        frontier = [self.root]
        while frontier:
            nxt = []
            for s in self.kept:
                if s.node in frontier and s.neighbour not in depth:
                    depth[s.neighbour] = depth[s.node] + 1
                    nxt.append(s.neighbour)
            frontier = nxt
        ordered = sorted(self.lines.values(), key=lambda line: (depth.get(line.node, len(depth)), -line.score))
        return [(self._hit(line), line.root, line.path) for line in ordered]

    def _hit(self, line: _Line) -> EgoLine:
        before, after = self.phrase(line.relation, line.inverse)
        label = self.labels[line.node]
        names = [self.labels[n] for n in line.neighbours]
        triples = [(n, line.relation, label) if line.inverse else (label, line.relation, n) for n in names]
        return EgoLine(
            walk_id=line.walk_id,  # the best walk the line comes from
            score=line.score,
            kind="ego",
            text=f"{label} {before}{', '.join(names)}{after}.",
            nodes=[line.node, *line.neighbours],
            node_labels=[label, *names],
            triples=triples,
            signature=signature([line.relation], [line.inverse]),
            cosine=line.cosine,
        )


def ego_contexts(nodes: list[NodeHit], candidates: dict[int, list[WalkHit]], budget: int,
                 phrase: Callable[[str, bool], tuple[str, str]]) -> list[tuple[EgoLine, int, RelationPath]]:
    """Replace each node's walks with the lines of its pruned ego-graph, at most `budget`
    characters over all nodes; returns each line with a root and the relation path from it that
    reaches the line. `candidates`: each node's candidate walks, best first;
    `phrase(relation, inverse)`: the text before and after the neighbour's name."""
    contexts = {}
    edges: list[tuple[float, int, int, WalkHit, list[Step]]] = []  # (-score, step position, node, walk, its path to this step)
    for order, node in enumerate(nodes):
        labels: dict[int, str] = {}
        for walk in candidates.get(node.id, []):
            labels.update(zip(walk.nodes, walk.node_labels))
            steps = walk_steps(walk)
            edges.extend((-walk.score, i, order, walk, steps[: i + 1]) for i in range(len(steps)))
        contexts[order] = _Context(node.id, labels, phrase)
    spent = 0
    # best edge first; among equals the shallower, then the higher-ranked node
    for _, _, order, walk, path in sorted(edges, key=lambda e: e[:3]):
        context = contexts[order]
        new = [s for s in path if s not in context.kept]
        if not new:
            continue
        cost = context.cost(new)
        if spent + cost <= budget:
            context.keep(new, walk, path)
            spent += cost
    routes = []
    for order, node in enumerate(nodes):
        lines = contexts[order].hits()
        node.walks = [hit for hit, _, _ in lines]
        routes += lines
    return routes
