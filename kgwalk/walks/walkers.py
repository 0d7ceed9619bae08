"""Walkers as small strategy classes over a Graph: vectorised NumPy over all roots of a batch.

Each walker turns a batch of root indices into a WalkBlock: padded matrices, one row per walk,
grouped by root. A root's rows never depend on which other roots share its batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from kgwalk.walks.graph import Graph, fold64, mix64
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

    def take(self, rows: np.ndarray) -> WalkBlock:
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


def first_in_groups(group: np.ndarray) -> np.ndarray:
    """Whether each row is the first of its group in row order (`rank_within_groups(group) == 0`), without ranking the
    rest: the cap of one walk per relation path, a few calls a question (a third of rank_within_groups' time)."""
    order = np.argsort(group, kind="stable")
    sorted_group = group[order]
    head = np.ones(len(group), bool)
    np.not_equal(sorted_group[1:], sorted_group[:-1], out=head[1:])
    first = np.zeros(len(group), bool)
    first[order[head]] = True
    return first


def row_hashes(columns: list[np.ndarray]) -> np.ndarray:
    """A 64-bit hash per row of integer/bool columns: grouping by it replaces np.unique(axis=0),
    which sorts whole rows and dominated BFS time."""
    h = np.zeros(len(columns[0]), np.uint64)
    for col in columns:
        h = fold64(h, col)
    return mix64(h)


def random_step_entries(seed: int, root_ids: np.ndarray, walk_index: np.ndarray, t: int,
                        node_ids: np.ndarray, degree: np.ndarray) -> np.ndarray:
    """The adjacency entry (0..degree-1, canonical order) a random walker takes at step t:
    hash(seed, root id, walk index, t, current node id) mod degree. Both engines call this, so
    their random walks agree bit for bit."""
    h = fold64(np.full(len(root_ids), seed, np.uint64), root_ids)
    h = fold64(fold64(fold64(h, walk_index), np.full(len(root_ids), t)), node_ids)
    return (h % degree.astype(np.uint64)).astype(np.int64)


def _expand(graph: Graph, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For frontier nodes, (frontier position, adjacency entry) of every outgoing entry, in order."""
    deg = graph.degree[frontier]
    parent = np.repeat(np.arange(len(frontier)), deg)
    first = np.repeat(graph.indptr[frontier] - np.cumsum(deg) + deg, deg)
    return parent, first + np.arange(len(parent))


def _chunks(rows: np.ndarray, weights: np.ndarray, limit: int) -> list[np.ndarray]:
    """Consecutive runs of `rows` whose weights sum to about `limit` (a run exceeds it by at most
    one row's weight): bounds the candidate arrays of one BFS level by a setting, not the graph."""
    if not len(rows) or weights.sum() <= limit:
        return [rows]
    before = np.cumsum(weights) - weights
    group = before // limit
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    return np.split(rows, starts[1:])


def _passable(graph: Graph, nodes: np.ndarray, hub_degree: int | None) -> np.ndarray:
    return np.ones(len(nodes), bool) if hub_degree is None else graph.degree[nodes] <= hub_degree


def _padded(rows: np.ndarray, pad: int, fill: int | bool) -> np.ndarray:
    """`rows` with `pad` columns of `fill` after them (np.pad's own overhead was a query's 0.2 ms: it walks a few
    roots per question)."""
    out = np.full((rows.shape[0], rows.shape[1] + pad), fill, rows.dtype)
    out[:, : rows.shape[1]] = rows
    return out


def _appended(rows: np.ndarray, column: np.ndarray) -> np.ndarray:
    """`rows` with `column` after them, as np.column_stack makes them (whose own overhead was most of extending a
    question's paths)."""
    out = np.empty((rows.shape[0], rows.shape[1] + 1), np.result_type(rows, column))
    out[:, :-1] = rows
    out[:, -1] = column
    return out


@dataclass
class _Paths:
    """A BFS level's paths, one row each: root_pos (which root of the batch), nodes (P, t+1) node
    indices, rels and inverse (P, t), and signature: a hash of the row's root and relation path
    (its relations and directions), folded in step by step as paths extend (rehashing every step
    of every path at each level was a third of a question's BFS)."""

    root_pos: np.ndarray
    nodes: np.ndarray
    rels: np.ndarray
    inverse: np.ndarray
    signature: np.ndarray

    @classmethod
    def of_roots(cls, roots: np.ndarray) -> _Paths:
        root_pos = np.arange(len(roots))
        return cls(root_pos, roots[:, None].astype(np.int64), np.empty((len(roots), 0), np.int32), np.empty((len(roots), 0), bool),
                   fold64(np.zeros(len(roots), np.uint64), root_pos))

    def signatures(self, graph: Graph, parent: np.ndarray, entry: np.ndarray) -> np.ndarray:
        """The signature of path `parent` followed by adjacency entry `entry`, per row."""
        return fold64(fold64(self.signature[parent], graph.rel[entry]), graph.inverse[entry])

    def extend(self, graph: Graph, parent: np.ndarray, entry: np.ndarray, signature: np.ndarray | None = None) -> _Paths:
        """Path `parent` followed by adjacency entry `entry`, per row; `signature`: their `signatures`, where the caller
        has them already."""
        return _Paths(self.root_pos[parent], _appended(self.nodes[parent], graph.nbr[entry]), _appended(self.rels[parent], graph.rel[entry]),
                      _appended(self.inverse[parent], graph.inverse[entry]),
                      self.signatures(graph, parent, entry) if signature is None else signature)

    def walks(self, kind: str, depth: int, cap: int | None) -> tuple[WalkBlock, np.ndarray]:
        """The level's walks (at most `cap` per root and relation path from 2 steps: a root's own
        facts are never capped), padded to `depth`, and their roots."""
        t = self.rels.shape[1]
        keep = np.ones(len(self.root_pos), bool)
        if cap is not None and t >= 2:
            keep = first_in_groups(self.signature) if cap == 1 else rank_within_groups(self.signature) < cap
        pad, n = depth - t, int(keep.sum())
        block = WalkBlock(kind, _padded(self.nodes[keep], pad, -1), _padded(self.rels[keep], pad, -1), _padded(self.inverse[keep], pad, False),
                          np.full(n, t, np.int8), np.ones(n, np.int32))
        return block, self.root_pos[keep]

    def without_self_loops(self) -> _Paths:
        """A root's self-loop is a fact of its own that leads nowhere new: walks go on from the others."""
        onward = self.nodes[:, -1] != self.nodes[:, 0]
        return _Paths(self.root_pos[onward], self.nodes[onward], self.rels[onward], self.inverse[onward], self.signature[onward])


class Walker:
    kind: ClassVar[str]

    def walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec, max_paths: int) -> WalkBlock:
        """Walks of `roots` (node indices); `max_paths` bounds the working arrays' rows."""
        raise NotImplementedError


class BFSWalker(Walker):
    """`reached` (the paper's): one walk per node reached within `depth`, the root-to-node
    shortest path (Eq. 2), and one per self-loop of the root (`A r A`: a fact no path to another
    node says). `paths`: one walk per relation path instead (see `_every_path`).

    Ties between equally short paths go to the first in canonical order: paths of a level are
    ordered by their adjacency positions (position at step 1, then at step 2, ...), which is the
    order expansion visits them. Hubs end walks but are never passed through. Rows come out by
    root, then level, then canonical order (the `max_per_root` order).
    """

    kind = "bfs"

    def walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec, max_paths: int) -> WalkBlock:
        if spec.bfs_mode == "paths":
            return self._every_path(graph, roots, spec, max_paths)
        n, d = graph.num_nodes, spec.depth
        paths = _Paths.of_roots(roots)
        visited = np.sort(paths.root_pos * n + roots)
        levels: list[WalkBlock] = []
        level_root: list[np.ndarray] = []
        for t in range(1, d + 1):
            last = paths.nodes[:, -1]
            expandable = np.flatnonzero(_passable(graph, last, spec.hub_degree) | (t == 1))
            parents, entries = [], []
            # Chunks run in canonical order and see earlier chunks' picks, so the first path to
            # each node wins exactly as it would in one pass.
            for chunk in _chunks(expandable, graph.degree[last[expandable]], max_paths):
                parent, entry = _expand(graph, last[chunk])
                parent = chunk[parent]
                keys = paths.root_pos[parent] * n + graph.nbr[entry]
                pos = np.minimum(np.searchsorted(visited, keys), len(visited) - 1)
                fresh = np.flatnonzero(visited[pos] != keys)
                _, first = np.unique(keys[fresh], return_index=True)
                pick = fresh[np.sort(first)]
                new = np.sort(keys[pick])  # unique, and none visited yet: a merge keeps it sorted
                visited = np.insert(visited, np.searchsorted(visited, new), new)
                if t == 1:  # a root's self-loops are facts of their own, though they reach no new node
                    pick = np.sort(np.concatenate([pick, np.flatnonzero(graph.nbr[entry] == last[parent])]))
                parents.append(parent[pick])
                entries.append(entry[pick])
            p, e = np.concatenate(parents), np.concatenate(entries)
            if not len(p):
                break
            paths = paths.extend(graph, p, e)
            block, block_roots = paths.walks(self.kind, d, spec.max_per_signature)
            levels.append(block)
            level_root.append(block_roots)
            if t == 1:
                paths = paths.without_self_loops()
        return _by_root(self.kind, d, levels, level_root)

    def _every_path(self, graph: Graph, roots: np.ndarray, spec: WalkSpec, max_paths: int) -> WalkBlock:
        """bfs_mode `paths`: every relation path a simple walk of up to `depth` steps can follow
        from the root gets a walk, not only the paths that first reach some node. In `reached`
        mode a path whose ends were all reached first by other paths has none ("films written by
        X" has no walk to a genre when X's films, reached first as "directed by X", claimed every
        genre), so a question asking that path cannot be answered from the corpus.

        A level's states are the canonically first path per (root, relation path, end node);
        every state of a level expands to the next (a walk never revisits its own nodes). Kept:
        every 1-step walk (the root's facts, self-loops included, two relations to one neighbour
        both) and, from 2 steps, the first `max_per_signature` states per (root, relation path).
        """
        d, cap = spec.depth, spec.max_per_signature
        paths = _Paths.of_roots(roots)
        levels: list[WalkBlock] = []
        level_root: list[np.ndarray] = []
        for t in range(1, d + 1):
            last = paths.nodes[:, -1]
            expandable = np.flatnonzero(_passable(graph, last, spec.hub_degree) | (t == 1))
            # one walk per relation path at the last level: nothing expands its states, so the
            # relation path alone tells them apart (with a larger cap, distinct ends must)
            only_paths = t == d and t >= 2 and cap == 1
            seen = np.empty(0, np.uint64)
            parents, entries, signatures = [], [], []
            for chunk in _chunks(expandable, graph.degree[last[expandable]], max_paths):
                parent, entry = _expand(graph, last[chunk])
                parent = chunk[parent]
                step_to = graph.nbr[entry]
                fresh = np.ones(len(parent), bool)
                for column in paths.nodes.T:  # column by column: a (paths, steps) comparison's any(axis=1) took 4x as long
                    fresh &= column[parent] != step_to
                if t == 1:
                    fresh |= step_to == last[parent]  # a self-loop is one of the root's facts
                parent, entry, step_to = parent[fresh], entry[fresh], step_to[fresh]
                path = paths.signatures(graph, parent, entry)
                if only_paths:  # a chunk's first path of each; the level's cap keeps the first overall
                    pick = np.flatnonzero(first_in_groups(path))
                else:  # chunks run in canonical order and see earlier chunks' states
                    keys = fold64(path, step_to)
                    pos = np.minimum(np.searchsorted(seen, keys), max(len(seen) - 1, 0))
                    unseen = np.flatnonzero(seen[pos] != keys) if len(seen) else np.arange(len(keys))
                    new, first = np.unique(keys[unseen], return_index=True)
                    pick = unseen[np.sort(first)]
                    seen = np.insert(seen, np.searchsorted(seen, new), new)  # none seen yet: a merge keeps it sorted
                parents.append(parent[pick])
                entries.append(entry[pick])
                signatures.append(path[pick])
            p, e = np.concatenate(parents), np.concatenate(entries)
            if not len(p):
                break
            paths = paths.extend(graph, p, e, np.concatenate(signatures))
            block, block_roots = paths.walks(self.kind, d, cap)
            levels.append(block)
            level_root.append(block_roots)
            if t == 1:
                paths = paths.without_self_loops()
        return _by_root(self.kind, d, levels, level_root)


class RandomWalker(Walker):
    """`walks_per_root` random walks of `length` steps (Eq. 1), deduplicated per root with counts.

    Counter-based randomness (`random_step_entries`): a root's walks depend only on the graph
    around it, never on batching, partitioning, engine or machine. A walk stops early at a dead
    end or a hub. Rows come out grouped by root.
    """

    kind = "random"

    def walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec, max_paths: int) -> WalkBlock:
        per_batch = max(1, max_paths // spec.walks_per_root)
        blocks = [self._walk(graph, roots[i : i + per_batch], spec) for i in range(0, len(roots), per_batch)]
        return _concat(blocks) if blocks else empty_block(self.kind, spec.length)

    def _walk(self, graph: Graph, roots: np.ndarray, spec: WalkSpec) -> WalkBlock:
        nw, length = spec.walks_per_root, spec.length
        walker_root = np.repeat(roots, nw)
        walk_index = np.tile(np.arange(nw, dtype=np.int64), len(roots))
        root_ids = graph.node_ids[walker_root]
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
            step = random_step_entries(spec.seed, root_ids[rows], walk_index[rows], t, graph.node_ids[cur[rows]], deg[rows])
            entry = graph.indptr[cur[rows]] + step
            nodes[rows, t] = graph.nbr[entry]
            rels[rows, t - 1] = graph.rel[entry]
            inverse[rows, t - 1] = graph.inverse[entry]
            cur[rows] = graph.nbr[entry]
        moved = np.flatnonzero(nodes[:, 1] >= 0)
        if not len(moved):
            return empty_block(self.kind, length)
        nodes, rels, inverse = nodes[moved], rels[moved], inverse[moved]
        # Walker rows are grouped by root, and so are the first occurrences np.unique returns
        # once sorted: the deduplicated rows stay grouped by root.
        _, first, counts = np.unique(row_hashes([*nodes.T, *rels.T, *inverse.T]), return_index=True, return_counts=True)
        order = np.argsort(first)
        rows = first[order]
        return WalkBlock(
            self.kind,
            nodes[rows],
            rels[rows],
            inverse[rows],
            (nodes[rows, 1:] >= 0).sum(axis=1).astype(np.int8),
            counts[order].astype(np.int32),
        )


WALKERS: dict[str, Walker] = {w.kind: w for w in (BFSWalker(), RandomWalker())}


def empty_block(kind: str, width: int) -> WalkBlock:
    return WalkBlock(
        kind,
        np.empty((0, width + 1), np.int64),
        np.empty((0, width), np.int32),
        np.empty((0, width), bool),
        np.empty(0, np.int8),
        np.empty(0, np.int32),
    )


def _by_root(kind: str, depth: int, levels: list[WalkBlock], level_root: list[np.ndarray]) -> WalkBlock:
    """BFS levels' rows in one block ordered by root, then level, then canonical order."""
    if not levels:
        return empty_block(kind, depth)
    order = np.argsort(np.concatenate(level_root), kind="stable")
    return _concat(levels).take(order)


def _concat(blocks: list[WalkBlock]) -> WalkBlock:
    return WalkBlock(
        blocks[0].kind,
        np.concatenate([b.nodes for b in blocks]),
        np.concatenate([b.rels for b in blocks]),
        np.concatenate([b.inverse for b in blocks]),
        np.concatenate([b.steps for b in blocks]),
        np.concatenate([b.count for b in blocks]),
    )
