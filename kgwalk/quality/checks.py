"""Per-row check columns that the quality gates validate, derived with NumPy/Arrow, and their
summaries.

GX then sees small scalar columns (a walk's step count, whether it passes through a hub) next to
the row's id, instead of list columns and long strings. For the big tables (walks, texts) the
check rows are computed where the rows are made (Spark tasks, the Ray stage's driver loop) and
folded into a summary: one row per distinct combination of check values, with its row count and
two example ids. Row-wise expectations depend on a row's values only, so validating the summary
and weighting by the counts gives the same verdict as validating every row (`gate.py`), for a
fraction of the cost. Everything here is pure: Arrow in, Arrow out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.kg.ids import positions

TEXT_SOURCES = ("template", "llm", "cache", "fallback")


def sorted_ids(ids: pa.Array | pa.ChunkedArray | np.ndarray) -> np.ndarray:
    values = ids.to_numpy() if not isinstance(ids, np.ndarray) else ids
    return np.sort(np.asarray(values, np.int64))


class IdIndex:
    """Position of each id in a sorted id array, by open addressing: ids are 64-bit hashes, so
    their low bits are a slot. A lookup is a few vectorized gathers, several times faster than
    `searchsorted` over hundreds of thousands of ids (the walks gate looks up every node)."""

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids
        size = 1 << max(4, int(2 * max(len(ids), 1) - 1).bit_length())  # load factor <= 1/2
        self.mask = np.int64(size - 1)
        self.slot_of = np.full(size, -1, np.int32)  # slot -> position in ids, -1 empty
        pending, slots = np.arange(len(ids)), ids & self.mask
        while pending.size:  # place what lands on a free slot (first claimant wins), probe on
            free = self.slot_of[slots] == -1
            taken, first = np.unique(slots[free], return_index=True)
            self.slot_of[taken] = pending[free][first]
            placed = np.zeros(len(pending), bool)
            placed[np.flatnonzero(free)[first]] = True
            pending, slots = pending[~placed], (slots[~placed] + 1) & self.mask

    def lookup(self, values: np.ndarray) -> np.ndarray:
        """Positions of `values` in the ids; -1 where absent."""
        out = np.full(len(values), -1, np.int64)
        active, slots = np.arange(len(values)), values & self.mask
        while active.size:
            at = self.slot_of[slots]
            hit = at >= 0
            hit[hit] = self.ids[at[hit]] == values[active[hit]]
            out[active[hit]] = at[hit]
            go_on = (at >= 0) & ~hit
            active, slots = active[go_on], (slots[go_on] + 1) & self.mask
        return out


def label_lengths(labels: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """Characters of a label without surrounding whitespace; null counts as 0 (empty). Chunk by
    chunk: trimming copies the strings, and a chunk's copy is freed before the next is made (the
    7M sentences of the 1M-edge KG at once: 2.3-2.6 s, mostly fresh memory; by chunk 0.4-0.5 s)."""
    if isinstance(labels, pa.ChunkedArray):
        parts = [label_lengths(chunk) for chunk in labels.chunks]
        return pa.chunked_array(parts, parts[0].type if parts else pa.int32())
    return pc.fill_null(pc.utf8_length(pc.utf8_trim_whitespace(labels)), 0)


def multiplicity(*columns: np.ndarray) -> np.ndarray:
    """For each row, how many rows share its values in `columns` (1 everywhere = unique): turns
    uniqueness into a row-wise check, so it can be summarized like the others. Several columns
    are hashed into one key first (one sort instead of a lexsort); only if that key repeats are
    the rows compared exactly, so a hash collision can never fake a duplicate."""
    if not len(columns[0]):
        return np.zeros(0, np.int64)
    if len(columns) > 1:
        from kgwalk.walks.graph import fold64

        key = np.zeros(len(columns[0]), np.uint64)
        for c in columns:
            key = fold64(key, c)
        by_key = multiplicity(key)
        if (by_key == 1).all():
            return by_key
    order = np.lexsort(columns[::-1])
    starts = np.ones(len(order), bool)
    starts[1:] = np.any([c[order][1:] != c[order][:-1] for c in columns], axis=0)
    run = np.cumsum(starts) - 1
    counts = np.bincount(run)
    out = np.empty(len(order), np.int64)
    out[order] = counts[run]
    return out


def ingest_checks(entities: pa.Table, relations: pa.Table, edges: pa.Table, records_read: int, rejected: int) -> dict[str, pa.Table]:
    """The check rows of one ingest: entities and relations (by key), edges (by head id), and a
    one-row table of the rejected-record ratio."""

    def labelled(t: pa.Table) -> pa.Table:
        ids = t.column("id")
        return pa.table(
            {
                "key": t.column("key"), "has_id": pc.is_valid(ids),
                "id_count": multiplicity(pc.fill_null(ids, 0).to_numpy()), "label_length": label_lengths(t.column("label")),
            }
        )

    relations_checked = labelled(relations).append_column("label", relations.column("label"))  # few: the vocabulary check reads them
    src, rel, dst = (edges.column(c) for c in ("src", "rel", "dst"))

    def known(ends: pa.ChunkedArray, ids: pa.ChunkedArray) -> pa.Array:
        return pc.is_in(ends, value_set=ids.combine_chunks().drop_null())  # a hash lookup: faster than searchsorted here

    return {
        "entities": labelled(entities),
        "relations": relations_checked,
        "edges": pa.table(
            {
                "src": src, "src_known": known(src, entities.column("id")), "rel_known": known(rel, relations.column("id")),
                "dst_known": known(dst, entities.column("id")), "triple_count": multiplicity(*(c.to_numpy() for c in (src, rel, dst))),
            }
        ),
        "ingest": pa.table(
            {"records_read": [records_read], "rejected": [rejected], "rejected_ratio": [rejected / records_read if records_read else 0.0]}
        ),
    }


@dataclass(frozen=True)
class WalkReference:
    """What a walk is checked against: the KG's entities, which of them are hubs under the walk
    direction, and its relations. Small (16 bytes an entity), so Spark broadcasts it."""

    entities: IdIndex
    hub: np.ndarray  # aligned with entities.ids (sorted)
    relations: IdIndex

    @classmethod
    def from_tables(cls, edges: pa.Table, entities: pa.Table, relations: pa.Table, direction: str, hub_degree: int | None) -> WalkReference:
        """Degrees counted from `edges` as adjacency entries, the walkers' rule: out-edges, in-edges,
        or both (a self-loop once under `both`). Recounted here, not taken from the walk engine,
        so a fault in the engine's graph cannot hide from its own gate; only the edges walks
        traverse count (`walk_edges`: a fact an explicit inverse relation states again, once)."""
        from kgwalk.walks.graph import walk_edges

        edges = walk_edges(edges, relations, direction)
        ids = sorted_ids(entities.column("id"))
        src, dst = edges.column("src").to_numpy(), edges.column("dst").to_numpy()
        counted = {"out": [src], "in": [dst], "both": [src, dst[src != dst]]}[direction]
        degree = np.zeros(len(ids), np.int64)
        for ends in counted:
            at, found = positions(ends, ids)
            degree += np.bincount(at[found], minlength=len(ids))
        hub = np.zeros(len(ids), bool) if hub_degree is None else degree > hub_degree
        return cls(IdIndex(ids), hub, IdIndex(sorted_ids(relations.column("id"))))


def walk_checks(walks: pa.RecordBatch | pa.Table, ref: WalkReference) -> pa.RecordBatch:
    """One row per walk: its id, step count, whether its arrays agree (nodes = steps + 1,
    relations = directions = steps) and start at its root, whether every node and relation is
    known, and whether it passes through a hub (an inner node above the hub degree)."""
    n = walks.num_rows
    nodes, rels, inverse = (walks.column(c) for c in ("nodes", "rels", "inverse"))
    if isinstance(nodes, pa.ChunkedArray):
        nodes, rels, inverse = (c.combine_chunks() for c in (nodes, rels, inverse))
    steps = walks.column("steps").to_numpy(zero_copy_only=False).astype(np.int64)
    node_counts = pc.fill_null(pc.list_value_length(nodes), 0).to_numpy()
    rel_counts = pc.fill_null(pc.list_value_length(rels), 0).to_numpy()
    inverse_counts = pc.fill_null(pc.list_value_length(inverse), 0).to_numpy()

    flat_nodes = pc.list_flatten(nodes).to_numpy(zero_copy_only=False)
    row = np.repeat(np.arange(n), node_counts)
    at = ref.entities.lookup(flat_nodes)
    found = at >= 0
    offsets = np.concatenate([[0], np.cumsum(node_counts)])
    place = np.arange(len(flat_nodes)) - offsets[row]
    inner = (place > 0) & (place < node_counts[row] - 1)
    through_hub = np.bincount(row, weights=inner & found & ref.hub[at], minlength=n) > 0
    nodes_known = np.bincount(row, weights=~found, minlength=n) == 0

    flat_rels = pc.list_flatten(rels).to_numpy(zero_copy_only=False)
    rels_known = np.bincount(np.repeat(np.arange(n), rel_counts), weights=ref.relations.lookup(flat_rels) < 0, minlength=n) == 0

    has_nodes = node_counts > 0
    first, first_known = np.zeros(n, np.int64), np.zeros(n, bool)
    first[has_nodes], first_known[has_nodes] = flat_nodes[offsets[:-1][has_nodes]], found[offsets[:-1][has_nodes]]
    roots = walks.column("root").to_numpy(zero_copy_only=False)
    root_ok = has_nodes & (first == roots) & first_known  # the root is the first node, looked up above
    shape_ok = (node_counts == steps + 1) & (rel_counts == steps) & (inverse_counts == steps)
    return pa.RecordBatch.from_pydict(
        {
            "walk_id": pa.array(walks.column("walk_id").to_numpy(zero_copy_only=False), pa.int64()),
            "steps": pa.array(steps),
            "shape_ok": pa.array(shape_ok),
            "root_ok": pa.array(root_ok),
            "nodes_known": pa.array(nodes_known),
            "rels_known": pa.array(rels_known),
            "through_hub": pa.array(through_hub),
        }
    )


WALK_CHECKS_SCHEMA = pa.schema(
    [("walk_id", pa.int64()), ("steps", pa.int64()), ("shape_ok", pa.bool_()), ("root_ok", pa.bool_()),
     ("nodes_known", pa.bool_()), ("rels_known", pa.bool_()), ("through_hub", pa.bool_())]
)


def text_checks(texts: pa.RecordBatch | pa.Table) -> pa.Table:
    """One row per sentence: its walk id (and whether it has one), length without surrounding
    whitespace, and source."""
    walk_id = texts.column("walk_id")
    return pa.table(
        {"walk_id": walk_id, "has_walk_id": pc.is_valid(walk_id), "text_length": label_lengths(texts.column("text")), "source": texts.column("source")}
    )


ROWS, FIRST, LAST = "rows", "example_min", "example_max"


def summarize(checks: pa.RecordBatch | pa.Table, id_column: str) -> pa.Table:
    """Check rows -> one row per distinct combination of check values: `rows`, and the smallest
    and largest id among them as examples."""
    table = pa.table(checks) if isinstance(checks, pa.RecordBatch) else checks
    keys = [c for c in table.column_names if c != id_column]
    grouped = table.group_by(keys, use_threads=False).aggregate([([], "count_all"), (id_column, "min"), (id_column, "max")])
    return grouped.rename_columns(keys + [ROWS, FIRST, LAST])


def merge_summaries(summaries: list[pa.Table]) -> pa.Table:
    """Summaries of parts -> the summary of the whole."""
    table = pa.concat_tables(summaries)
    keys = [c for c in table.column_names if c not in (ROWS, FIRST, LAST)]
    merged = table.group_by(keys, use_threads=False).aggregate([(ROWS, "sum"), (FIRST, "min"), (LAST, "max")])
    return merged.rename_columns(keys + [ROWS, FIRST, LAST])
