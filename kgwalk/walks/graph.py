"""The compact CSR graph every walker runs on, plus the counter-based hash they share.

Each node's adjacency is sorted canonically by (relation id, direction, neighbour id), so the
choices walkers make depend only on the graph, never on input order or partitioning.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import positions, sorted_positions
from kgwalk.kg.relations import inverse_relation_pairs

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finalizer over a uint64 array (wrapping arithmetic is intended: array arithmetic wraps without a
    warning, where a NumPy scalar's would warn)."""
    return _mixed(x + _GOLDEN)


def fold64(h: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Fold a column of int64/uint64 values into running hashes."""
    z: np.ndarray = h ^ values.astype(np.int64, copy=False).view(np.uint64)
    z += _GOLDEN
    return _mixed(z)


def _mixed(z: np.ndarray) -> np.ndarray:
    """mix64's rounds, in place on a fresh array: a question hashes its walks in a few dozen calls on short arrays,
    where each temporary array costs as much as the arithmetic."""
    z ^= z >> _S30
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(a, b) rows as one sortable, exactly comparable array."""
    out = np.empty(len(a), [("a", np.int64), ("b", np.int64)])
    out["a"], out["b"] = a, b
    return out


def mirrored_copies(edges: pa.Table, relations: pa.Table) -> np.ndarray:
    """Which edges state a fact again through an explicit inverse relation: (b, r_inverse, a)
    where (a, r, b) is an edge too. Pairs are recognised by name (`kg.relations`) and confirmed
    edge by edge, so an inverse edge without its mirror is never dropped. No labels, no copies."""
    copies = np.zeros(edges.num_rows, bool)
    if "label" not in relations.column_names:
        return copies
    src, rel, dst = (edges.column(c).to_numpy() for c in ("src", "rel", "dst"))
    for base, inverse in inverse_relation_pairs(relations):
        forward = np.sort(_pairs(src[rel == base], dst[rel == base]))
        backward = np.flatnonzero(rel == inverse)
        mirror = _pairs(dst[backward], src[backward])
        copies[backward[positions(mirror, forward)[1]]] = True
    return copies


def mirrored_relations(edges: pa.Table, *, min_share: float) -> list[tuple[int, int]]:
    """(r, s), r < s, for two relations that state one relation both ways under names of their own ("parents" and
    "children"): at least `min_share` of each one's edges are the other's reversed. Self-loops say no direction and
    are left out. Edges are matched by a 64-bit hash of their ends: a collision costs a count of one."""
    src, rel, dst = (edges.column(c).to_numpy() for c in ("src", "rel", "dst"))
    looped = src == dst
    src, rel, dst = src[~looped], rel[~looped], dst[~looped]
    rel_ids, codes = np.unique(rel, return_inverse=True)
    n = len(rel_ids)
    start = np.zeros(len(src), np.uint64)
    forward, backward = fold64(fold64(start, src), dst), fold64(fold64(start, dst), src)
    order = np.argsort(forward)
    forward, forward_codes = forward[order], codes[order]
    lo, hi = np.searchsorted(forward, backward, "left"), np.searchsorted(forward, backward, "right")
    matches = hi - lo  # the edges each edge's reverse is: one per relation stating it
    edge = np.repeat(np.arange(len(backward)), matches)
    at = np.repeat(lo - (np.cumsum(matches) - matches), matches) + np.arange(int(matches.sum()))
    found, times = np.unique(codes[edge].astype(np.int64) * n + forward_codes[at], return_counts=True)
    edges_of = np.bincount(codes, minlength=n)
    return [(int(rel_ids[r]), int(rel_ids[s])) for (r, s), t in zip((divmod(int(k), n) for k in found), times.tolist())
            if r < s and t >= min_share * max(edges_of[r], edges_of[s])]


def category_objects(edges: pa.Table, *, min_fan_in: float) -> tuple[np.ndarray, np.ndarray]:
    """(relations, nodes), distinct pairs, each pair's relation a category (each of its objects shared by `min_fan_in`
    subjects on average: citizen_of's countries, not spouse's people) and its node one of that relation's objects: what
    the KG itself says a node is ("Eldonia" is what citizen_of reaches, a country, however its name reads)."""
    rel, dst = edges.column("rel").to_numpy(), edges.column("dst").to_numpy()
    rel_ids, codes = np.unique(rel, return_inverse=True)
    node_ids, nodes = np.unique(dst, return_inverse=True)
    if not len(rel_ids):
        return rel_ids, node_ids
    code, node = np.divmod(np.unique(codes.astype(np.int64) * len(node_ids) + nodes), len(node_ids))
    category = np.bincount(codes, minlength=len(rel_ids)) >= min_fan_in * np.maximum(np.bincount(code, minlength=len(rel_ids)), 1)
    kept = category[code]
    return rel_ids[code[kept]], node_ids[node[kept]]


def covered_ends(edges: pa.Table, *, min_share: float, min_fan_in: float) -> list[tuple[int, bool, int]]:
    """(r, r_backward, s) where at least `min_share` of the nodes a step along r reaches (its objects, or walked backward
    its subjects) s reaches forward too, and s names a category: each of its objects is shared by `min_fan_in`
    subjects on average (countries, genres; not spouses, whose objects are one person's each). What r reaches is of the
    kind s reaches: a club's `located_in` reaches the countries `plays_for_country` does."""
    src, rel, dst = (edges.column(c).to_numpy() for c in ("src", "rel", "dst"))
    rel_ids, codes = np.unique(rel, return_inverse=True)
    if not len(rel_ids):
        return []
    steps = 2 * len(rel_ids)  # a step is relation code * 2 + backward
    node = np.unique(np.concatenate([dst, src]), return_inverse=True)[1].astype(np.int64)  # ids may be any int64: positions
    node, step = np.divmod(np.unique(node * steps + np.concatenate([codes * 2, codes * 2 + 1])), steps)  # distinct, by node
    ends_of = np.bincount(step, minlength=steps)
    category = np.flatnonzero(np.bincount(codes, minlength=len(rel_ids)) >= min_fan_in * np.maximum(ends_of[::2], 1)) * 2
    column = np.full(steps, -1)
    column[category] = np.arange(len(category))
    # per (node, category step) entry, every entry of that node: the steps reaching what the category reaches, counted
    # steps x categories, not the steps x steps a KG of thousands of relations could not hold
    first, reached = np.searchsorted(node, node), np.bincount(node)[node]  # per entry, its node's first entry and count
    at = np.flatnonzero(column[step] >= 0)
    within = np.arange(int(reached[at].sum())) - np.repeat(np.cumsum(reached[at]) - reached[at], reached[at])  # 0..count-1
    others = np.repeat(first[at], reached[at]) + within
    both = np.bincount(step[others] * len(category) + np.repeat(column[step[at]], reached[at]), minlength=steps * len(category))
    both = both.reshape(steps, len(category))
    return [(int(rel_ids[r // 2]), bool(r % 2), int(rel_ids[s // 2])) for r in range(steps) for c, s in enumerate(category.tolist())
            if r != s and ends_of[r] and both[r, c] >= min_share * ends_of[r]]


def _canonical_order(u: np.ndarray, r: np.ndarray, inv: np.ndarray, v: np.ndarray, nodes: int, rels: int) -> np.ndarray:
    """The order of adjacency entries by node, then relation, direction, neighbour: one sort of the
    four packed into an int64 where they fit (20M entries of the 10M-edge KG: about 4x faster than
    lexsort's four passes). Entries are distinct, so either sort gives the same order."""
    node_bits, rel_bits = max(1, (nodes - 1).bit_length()), max(1, (rels - 1).bit_length())
    if 2 * node_bits + rel_bits + 1 > 63:
        return np.lexsort((v, inv, r, u))
    key = u.astype(np.int64) << (rel_bits + 1 + node_bits)
    key |= r.astype(np.int64) << (1 + node_bits)
    key |= inv.astype(np.int64) << node_bits
    key |= v
    return np.argsort(key)


def walk_edges(edges: pa.Table, relations: pa.Table, direction: str) -> pa.Table:
    """The edges walks traverse: under `both`, a fact stated again by an explicit inverse relation
    is walked once, as a backward step of its forward relation (walking `out` or `in`, the
    inverse copy is the only way back, so it stays)."""
    if direction != "both":
        return edges
    copies = mirrored_copies(edges, relations)
    return edges.filter(pa.array(~copies)) if copies.any() else edges


@dataclass
class Graph:
    """CSR adjacency in one traversal direction over node indices 0..N-1.

    node_ids are the entities' int64 ids, sorted, so index order is id order (likewise rel_ids).
    Entry e of node u: neighbour nbr[e], relation index rel[e], inverse[e] True for a backward step.
    Labels stay out: executors get ids only (4+4+1 bytes per adjacency entry), labels are joined
    where they are needed (walks.labels).
    """

    node_ids: np.ndarray
    rel_ids: np.ndarray
    indptr: np.ndarray
    nbr: np.ndarray
    rel: np.ndarray
    inverse: np.ndarray

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def num_entries(self) -> int:
        return len(self.nbr)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.node_ids, self.rel_ids, self.indptr, self.nbr, self.rel, self.inverse))

    @cached_property
    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def index_of(self, ids: np.ndarray) -> np.ndarray:
        """Node indices of entity ids (all must exist)."""
        idx = np.searchsorted(self.node_ids, ids)
        if idx.size and (idx.max(initial=0) >= self.num_nodes or not np.array_equal(self.node_ids[idx], ids)):
            raise KeyError("some ids are not nodes of this graph")
        return idx

    @classmethod
    def from_arrow(cls, edges: pa.Table, entities: pa.Table, relations: pa.Table, direction: str) -> Graph:
        """Build from the canonical tables (edges(src, rel, dst), entities(id), relations(id) and,
        for recognising explicit inverse relations, label): the edges of `walk_edges`."""
        edges = walk_edges(edges, relations, direction)
        node_ids = np.sort(entities.column("id").to_numpy())
        if len(node_ids) >= 2**31:
            raise KgwalkError(f"{len(node_ids):,} entities exceed the in-memory engine's int32 node index: set walks.engine=join")
        rel_ids = np.sort(relations.column("id").to_numpy())
        src = sorted_positions(node_ids, edges.column("src").to_numpy()).astype(np.int32)
        dst = sorted_positions(node_ids, edges.column("dst").to_numpy()).astype(np.int32)
        rel = sorted_positions(rel_ids, edges.column("rel").to_numpy()).astype(np.int32)
        parts = []
        if direction in ("out", "both"):
            parts.append((src, dst, rel, np.zeros(len(src), bool)))
        if direction in ("in", "both"):
            # Under `both` a self-loop is one fact: keep its forward entry only.
            keep = src != dst if direction == "both" else slice(None)
            parts.append((dst[keep], src[keep], rel[keep], np.ones(len(dst[keep]), bool)))
        u, v, r, inv = (np.concatenate(x) for x in zip(*parts))
        order = _canonical_order(u, r, inv, v, len(node_ids), len(rel_ids))
        u, v, r, inv = u[order], v[order], r[order], inv[order]
        indptr = np.zeros(len(node_ids) + 1, np.int64)
        np.cumsum(np.bincount(u, minlength=len(node_ids)), out=indptr[1:])
        return cls(
            node_ids=node_ids,
            rel_ids=rel_ids,
            indptr=indptr,
            nbr=v,
            rel=r,
            inverse=inv,
        )
