"""Which roots a change of edges can affect: the pure core of incremental refresh.

A root's walks are a function of what its walkers *consult*: the degree (hub rule, dead ends)
and the canonical adjacency of every node they stand on before their last step, i.e. nodes
within `radius` = (longest walk) - 1 steps, reached through non-hub nodes (the root itself
always expands). Counter-based randomness makes the walks a function of exactly that, so a
root none of whose consulted nodes changed adjacency has provably identical walks.

Backwards from the nodes whose adjacency changed: a changed node matters to the roots that can
stand on it; it is passed through only if it is not a hub (in the old or the new graph), and so
are the nodes between it and the root. Expanding over the union of old and new edges keeps this
conservative whichever graph a walker saw: the new graph the walkers run on (its reversed
adjacency, which under `both` is its own) and the removed edges.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kgwalk.kg.ids import IdSet, positions
from kgwalk.walks.graph import Graph, fold64, walk_edges
from kgwalk.walks.spec import WalkSpec

_REVERSED = {"out": "in", "in": "out", "both": "both"}


def walk_radius(spec: WalkSpec) -> int:
    """Steps from the root to the farthest node a walker consults (stands on before a step)."""
    longest = max(spec.depth if "bfs" in spec.kinds else 0, spec.length if "random" in spec.kinds else 0)
    return longest - 1


def edge_difference(old: pa.Table, new: pa.Table) -> tuple[pa.Table, pa.Table]:
    """(added, removed) edges between two edge tables of distinct (src, rel, dst) rows."""
    both = pa.concat_tables([old.select(["src", "rel", "dst"]), new.select(["src", "rel", "dst"])])
    cols = [both.column(n).to_numpy() for n in ("src", "rel", "dst")]
    # One sort of a 64-bit hash of each edge rather than lexsort's three passes (20M rows of the 10M-edge
    # KG: about 3x faster); equal hashes are then confirmed equal edges, and a collision sorts exactly.
    keys = fold64(fold64(fold64(np.zeros(len(cols[0]), np.uint64), cols[0]), cols[1]), cols[2])
    order = np.argsort(keys)
    equal_next = _equal_next(cols, order)
    ordered_keys = keys[order]
    if (ordered_keys[1:] == ordered_keys[:-1])[~equal_next].any():  # two different edges share a hash: it could part a pair
        order = np.lexsort(cols[::-1])
        equal_next = _equal_next(cols, order)
    same = np.zeros(len(order), bool)  # rows whose edge is in both tables sit next to each other
    same[1:] |= equal_next
    same[:-1] |= equal_next
    in_both = np.empty(len(order), bool)
    in_both[order] = same
    is_new = np.arange(len(order)) >= old.num_rows
    return both.filter(pa.array(is_new & ~in_both)), both.filter(pa.array(~is_new & ~in_both))


def _equal_next(cols: list[np.ndarray], order: np.ndarray) -> np.ndarray:
    """Whether each row in `order` is the same edge as the next one."""
    if not len(order):
        return np.zeros(0, bool)
    equal = np.ones(len(order) - 1, bool)
    for c in cols:
        ordered = c[order]
        equal &= ordered[1:] == ordered[:-1]
    return equal


def changed_nodes(changed_edges: pa.Table, direction: str) -> np.ndarray:
    """Entity ids whose adjacency (in the walk direction) a set of added/removed edges changes."""
    parts = []
    if direction in ("out", "both"):
        parts.append(changed_edges.column("src").to_numpy())
    if direction in ("in", "both"):
        parts.append(changed_edges.column("dst").to_numpy())
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)


def _ends(edges: pa.Table) -> pa.Table:
    return pa.table({"id": np.unique(np.concatenate([edges.column("src").to_numpy(), edges.column("dst").to_numpy()]))})


def _degrees(edges: pa.Table, node_ids: np.ndarray, direction: str) -> np.ndarray:
    """Adjacency sizes in the walk direction of the sorted `node_ids` (Graph's rule: a self-loop is one
    entry); edges may have ends elsewhere."""
    src, src_in = positions(edges.column("src").to_numpy(), node_ids)
    dst, dst_in = positions(edges.column("dst").to_numpy(), node_ids)
    deg = np.zeros(len(node_ids), np.int64)
    if direction in ("out", "both"):
        deg += np.bincount(src[src_in], minlength=len(node_ids))
    if direction in ("in", "both"):
        keep = dst_in & (edges.column("src").to_numpy() != edges.column("dst").to_numpy()) if direction == "both" else dst_in
        deg += np.bincount(dst[keep], minlength=len(node_ids))
    return deg


def _neighbours(graph: Graph, ids: np.ndarray) -> np.ndarray:
    """The ids of the neighbours of those of `ids` that are nodes of `graph`."""
    at, found = positions(ids, graph.node_ids)
    at = at[found]
    deg = graph.degree[at]
    starts = np.repeat(graph.indptr[at] - np.cumsum(deg) + deg, deg) + np.arange(int(deg.sum()))
    return graph.node_ids[graph.nbr[starts]]


def affected_roots(old_edges: pa.Table, new_edges: pa.Table, spec: WalkSpec, relations: pa.Table | None = None, *,
                   graph: Graph | None = None) -> np.ndarray:
    """Sorted entity ids (of the old or new graph) whose walks may differ between the two graphs.
    `relations` (id, label; the old and the new ones) name explicit inverse relations, whose
    mirrored copies the walkers skip (`walk_edges`): hubs are then told by the degrees walkers see.
    `graph`: the new edges' graph in the walk direction (`Graph.from_arrow`), where the caller has it."""
    added, removed = edge_difference(old_edges, new_edges)
    changed = pa.concat_tables([added, removed])
    seeds = changed_nodes(changed, spec.direction)
    if not len(seeds):
        return seeds
    rel_ids = pa.table({"id": np.unique(np.concatenate([old_edges.column("rel").to_numpy(), added.column("rel").to_numpy()]))})
    relations = rel_ids if relations is None else relations
    if graph is None:
        graph = Graph.from_arrow(new_edges, _ends(new_edges), relations, spec.direction)
    # Predecessors in the walk direction = the adjacency of the reversed direction (a mirrored copy the
    # walkers skip joins the same two nodes as the fact it mirrors).
    reverse = _REVERSED[spec.direction]
    back = graph if reverse == spec.direction else Graph.from_arrow(new_edges, pa.table({"id": graph.node_ids}), relations, reverse)
    gone = Graph.from_arrow(removed, _ends(removed), rel_ids, reverse)
    passable = _passable(old_edges, changed, graph, spec, relations)
    affected = frontier = seeds
    for _ in range(walk_radius(spec)):
        frontier = frontier[passable(frontier)]  # a walker stands on it before its last step
        if not len(frontier):
            break
        reached = np.unique(np.concatenate([_neighbours(back, frontier), _neighbours(gone, frontier)]))
        frontier = np.setdiff1d(reached, affected, assume_unique=True)
        affected = np.union1d(affected, frontier)
    return affected


def _passable(old_edges: pa.Table, changed: pa.Table, graph: Graph, spec: WalkSpec, relations: pa.Table):
    """Which nodes a walker may pass through in the old or the new graph: not hubs in both. Only the
    ends of changed edges have another degree in the old graph (a mirrored copy and the fact it
    mirrors join the same nodes), so only their edges of the old graph are read."""
    if spec.hub_degree is None:
        return lambda ids: np.ones(len(ids), bool)
    hub = spec.hub_degree
    touched = _ends(changed).column("id").to_numpy()
    near = IdSet(touched)
    old_near = old_edges.filter(pa.array(near.mask(old_edges.column("src")) | near.mask(old_edges.column("dst"))))
    old_deg = _degrees(walk_edges(old_near, relations, spec.direction), touched, spec.direction)

    def passable(ids: np.ndarray) -> np.ndarray:
        at, in_graph = positions(ids, graph.node_ids)
        new = np.where(in_graph, graph.degree[at] if len(graph.node_ids) else 0, 0)
        was, changed_end = positions(ids, touched)
        old = np.where(changed_end, old_deg[was], new)
        return (old <= hub) | (new <= hub)

    return passable
