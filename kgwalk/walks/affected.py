"""Which roots a change of edges can affect: the pure core of incremental refresh.

A root's walks are a function of what its walkers *consult*: the degree (hub rule, dead ends)
and the canonical adjacency of every node they stand on before their last step, i.e. nodes
within `radius` = (longest walk) - 1 steps, reached through non-hub nodes (the root itself
always expands). Counter-based randomness makes the walks a function of exactly that, so a
root none of whose consulted nodes changed adjacency has provably identical walks.

Backwards from the nodes whose adjacency changed: a changed node matters to the roots that can
stand on it; it is passed through only if it is not a hub (in the old or the new graph), and so
are the nodes between it and the root. Expanding over the union of old and new edges keeps this
conservative whichever graph a walker saw.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kgwalk.walks.graph import Graph, walk_edges
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
    order = np.lexsort(cols[::-1])
    same = np.zeros(len(order), bool)  # rows whose edge is in both tables sit next to each other
    equal_next = np.logical_and.reduce([c[order][1:] == c[order][:-1] for c in cols]) if len(order) else same[:0]
    same[1:] |= equal_next
    same[:-1] |= equal_next
    in_both = np.empty(len(order), bool)
    in_both[order] = same
    is_new = np.arange(len(order)) >= old.num_rows
    return both.filter(pa.array(is_new & ~in_both)), both.filter(pa.array(~is_new & ~in_both))


def changed_nodes(changed_edges: pa.Table, direction: str) -> np.ndarray:
    """Entity ids whose adjacency (in the walk direction) a set of added/removed edges changes."""
    parts = []
    if direction in ("out", "both"):
        parts.append(changed_edges.column("src").to_numpy())
    if direction in ("in", "both"):
        parts.append(changed_edges.column("dst").to_numpy())
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, np.int64)


def _degrees(edges: pa.Table, node_ids: np.ndarray, direction: str) -> np.ndarray:
    """Adjacency sizes in the walk direction over `node_ids` (Graph's rule: a self-loop is one entry)."""
    src = np.searchsorted(node_ids, edges.column("src").to_numpy())
    dst = np.searchsorted(node_ids, edges.column("dst").to_numpy())
    deg = np.zeros(len(node_ids), np.int64)
    if direction in ("out", "both"):
        deg += np.bincount(src, minlength=len(node_ids))
    if direction in ("in", "both"):
        keep = src != dst if direction == "both" else slice(None)
        deg += np.bincount(dst[keep], minlength=len(node_ids))
    return deg


def affected_roots(old_edges: pa.Table, new_edges: pa.Table, spec: WalkSpec, relations: pa.Table | None = None) -> np.ndarray:
    """Sorted entity ids (of the old or new graph) whose walks may differ between the two graphs.
    `relations` (id, label; the old and the new ones) name explicit inverse relations, whose
    mirrored copies the walkers skip (`walk_edges`): hubs are then told by the degrees walkers see."""
    added, removed = edge_difference(old_edges, new_edges)
    seeds = changed_nodes(pa.concat_tables([added, removed]), spec.direction)
    if not len(seeds):
        return seeds
    union = pa.concat_tables([old_edges.select(["src", "rel", "dst"]), added])
    node_ids = np.unique(np.concatenate([union.column("src").to_numpy(), union.column("dst").to_numpy()]))
    if spec.hub_degree is None:
        passable = np.ones(len(node_ids), bool)
    else:
        walked = [e if relations is None else walk_edges(e, relations, spec.direction) for e in (old_edges, new_edges)]
        old_deg, new_deg = (_degrees(e, node_ids, spec.direction) for e in walked)
        passable = (old_deg <= spec.hub_degree) | (new_deg <= spec.hub_degree)
    # Predecessors in the walk direction = the adjacency of the reversed direction.
    relations = pa.table({"id": np.unique(union.column("rel").to_numpy())})
    preds = Graph.from_arrow(union, pa.table({"id": node_ids}), relations, _REVERSED[spec.direction])
    affected = np.zeros(len(node_ids), bool)
    frontier = np.searchsorted(node_ids, seeds)
    affected[frontier] = True
    for _ in range(walk_radius(spec)):
        frontier = frontier[passable[frontier]]  # a walker stands on it before its last step
        if not len(frontier):
            break
        deg = preds.degree[frontier]
        starts = np.repeat(preds.indptr[frontier] - np.cumsum(deg) + deg, deg) + np.arange(int(deg.sum()))
        reached = np.unique(preds.nbr[starts])
        frontier = reached[~affected[reached]]
        affected[frontier] = True
    return node_ids[affected]
