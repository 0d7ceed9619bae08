"""Walkers as small strategy classes over a Graph: vectorised NumPy over all roots of a batch.

Each walker turns a batch of root indices into a WalkBlock: padded matrices, one row per walk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from kgwalk.walks.graph import Graph, fold64
from kgwalk.walks.spec import WalkSpec


@dataclass
class WalkBlock:
    """Walks as padded rows: nodes (W, L+1) node indices, rels (W, L) relation indices,
    inverse (W, L), steps (W,) the walk's length; padding is -1 / False. count: multiplicity."""

    kind: str
    nodes: np.ndarray
    rels: np.ndarray
    inverse: np.ndarray
    steps: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.steps)

    def take(self, rows: np.ndarray) -> "WalkBlock":
        return WalkBlock(self.kind, self.nodes[rows], self.rels[rows], self.inverse[rows], self.steps[rows], self.count[rows])


def rank_within_groups(group: np.ndarray) -> np.ndarray:
    """0-based position of each row among the rows of its group, in row order."""
    n = len(group)
    order = np.argsort(group, kind="stable")
    sorted_group = group[order]
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    sizes = np.diff(np.r_[starts, n])
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n) - np.repeat(starts, sizes)
    return rank


def _expand(graph: Graph, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For frontier nodes, (frontier position, adjacency entry) of every outgoing entry, in order."""
    deg = graph.degree[frontier]
    parent = np.repeat(np.arange(len(frontier)), deg)
    first = np.repeat(graph.indptr[frontier] - np.cumsum(deg) + deg, deg)
    return parent, first + np.arange(len(parent))


def _passable(graph: Graph, nodes: np.ndarray, hub_degree: int | None) -> np.ndarray:
    return np.ones(len(nodes), bool) if hub_degree is None else graph.degree[nodes] <= hub_degree


class Walker:
    kind: ClassVar[str]

    def walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec) -> WalkBlock:
        raise NotImplementedError


class BFSWalker(Walker):
    """One walk per node reached within `depth`: the root-to-node shortest path (Eq. 2).

    Ties between equally short paths go to the first in canonical order (parent path, then the
    parent's adjacency order). Hubs end walks but are never passed through.
    """

    kind = "bfs"

    def walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec) -> WalkBlock:
        n, d = graph.num_nodes, spec.depth
        root_pos = np.arange(len(roots))  # which root (batch position) each path belongs to
        nodes = roots[:, None].astype(np.int64)
        rels = np.empty((len(roots), 0), np.int32)
        inverse = np.empty((len(roots), 0), bool)
        visited = np.sort(root_pos * n + roots)
        levels: list[WalkBlock] = []
        level_root: list[np.ndarray] = []
        for t in range(1, d + 1):
            last = nodes[:, -1]
            expandable = np.flatnonzero(_passable(graph, last, spec.hub_degree) | (t == 1))
            parent, entry = _expand(graph, last[expandable])
            parent = expandable[parent]
            cand = graph.nbr[entry]
            keys = root_pos[parent] * n + cand
            pos = np.minimum(np.searchsorted(visited, keys), len(visited) - 1)
            fresh = np.flatnonzero(visited[pos] != keys)
            _, first = np.unique(keys[fresh], return_index=True)
            chosen = fresh[np.sort(first)]
            if not len(chosen):
                break
            p, e = parent[chosen], entry[chosen]
            nodes = np.column_stack([nodes[p], cand[chosen]])
            rels = np.column_stack([rels[p], graph.rel[e]])
            inverse = np.column_stack([inverse[p], graph.inverse[e]])
            root_pos = root_pos[p]
            visited = np.union1d(visited, keys[chosen])
            keep = np.ones(len(chosen), bool)
            if spec.max_per_signature is not None and t >= 2:  # a root's own facts are never capped
                signature = np.column_stack([root_pos, rels, inverse])
                _, group = np.unique(signature, axis=0, return_inverse=True)
                keep = rank_within_groups(group.ravel()) < spec.max_per_signature
            pad = d - t
            levels.append(
                WalkBlock(
                    self.kind,
                    np.pad(nodes[keep], ((0, 0), (0, pad)), constant_values=-1),
                    np.pad(rels[keep], ((0, 0), (0, pad)), constant_values=-1),
                    np.pad(inverse[keep], ((0, 0), (0, pad))),
                    np.full(int(keep.sum()), t, np.int8),
                    np.ones(int(keep.sum()), np.int32),
                )
            )
            level_root.append(root_pos[keep])
        if not levels:
            return _empty(self.kind, d)
        block = _concat(levels)
        order = np.argsort(np.concatenate(level_root), kind="stable")  # root, then level, then canonical
        return block.take(order)


class RandomWalker(Walker):
    """`walks_per_root` random walks of `length` steps (Eq. 1), deduplicated per root with counts.

    Counter-based randomness: the entry taken at step t is hash(seed, root id, walk index, t,
    node id) mod degree over the canonical adjacency, so a root's walks depend only on the graph
    around it, never on batching, partitioning or machine. A walk stops early at a dead end or hub.
    """

    kind = "random"

    def walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec) -> WalkBlock:
        nw, length = spec.walks_per_root, spec.length
        walker_root = np.repeat(roots, nw)
        walk_index = np.tile(np.arange(nw, dtype=np.int64), len(roots))
        base = fold64(np.full(len(walker_root), spec.seed, np.uint64), graph.node_ids[walker_root])
        base = fold64(base, walk_index)
        nodes = np.full((len(walker_root), length + 1), -1, np.int64)
        rels = np.full((len(walker_root), length), -1, np.int32)
        inverse = np.zeros((len(walker_root), length), bool)
        nodes[:, 0] = walker_root
        cur, alive = walker_root.copy(), np.ones(len(walker_root), bool)
        for t in range(1, length + 1):
            deg = graph.degree[cur]
            alive &= (deg > 0) & (_passable(graph, cur, spec.hub_degree) | (t == 1))
            rows = np.flatnonzero(alive)
            if not len(rows):
                break
            h = fold64(fold64(base[rows], np.full(len(rows), t)), graph.node_ids[cur[rows]])
            entry = graph.indptr[cur[rows]] + (h % deg[rows].astype(np.uint64)).astype(np.int64)
            nodes[rows, t] = graph.nbr[entry]
            rels[rows, t - 1] = graph.rel[entry]
            inverse[rows, t - 1] = graph.inverse[entry]
            cur[rows] = graph.nbr[entry]
        steps = (nodes[:, 1:] >= 0).sum(axis=1).astype(np.int8)
        moved = steps > 0
        rows = np.column_stack([nodes, rels, inverse])[moved]
        if not len(rows):
            return _empty(self.kind, length)
        # Root index leads each row, so unique rows come out grouped by root.
        uniq, counts = np.unique(rows, axis=0, return_counts=True)
        return WalkBlock(
            self.kind,
            uniq[:, : length + 1],
            uniq[:, length + 1 : 2 * length + 1].astype(np.int32),
            uniq[:, 2 * length + 1 :].astype(bool),
            (uniq[:, 1 : length + 1] >= 0).sum(axis=1).astype(np.int8),
            counts.astype(np.int32),
        )


WALKERS: dict[str, Walker] = {w.kind: w for w in (BFSWalker(), RandomWalker())}


def _empty(kind: str, width: int) -> WalkBlock:
    return WalkBlock(
        kind,
        np.empty((0, width + 1), np.int64),
        np.empty((0, width), np.int32),
        np.empty((0, width), bool),
        np.empty(0, np.int8),
        np.empty(0, np.int32),
    )


def _concat(blocks: list[WalkBlock]) -> WalkBlock:
    return WalkBlock(
        blocks[0].kind,
        np.concatenate([b.nodes for b in blocks]),
        np.concatenate([b.rels for b in blocks]),
        np.concatenate([b.inverse for b in blocks]),
        np.concatenate([b.steps for b in blocks]),
        np.concatenate([b.count for b in blocks]),
    )


def cap_per_root(block: WalkBlock, max_per_root: int | None) -> WalkBlock:
    """Keep each root's first `max_per_root` walks in emission order (BFS: shortest first;
    random: canonical row order)."""
    if max_per_root is None or not len(block):
        return block
    return block.take(np.flatnonzero(rank_within_groups(block.nodes[:, 0]) < max_per_root))
