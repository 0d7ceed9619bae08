"""Walks as Arrow: ids only (labels are joined where needed, see walks.labels), a content id
per walk, and the per-root finishing rules both engines share (maximal BFS, per-root cap)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.walks.graph import Graph, fold64, mix64
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.walkers import WalkBlock, rank_within_groups

WALKS_SCHEMA = pa.schema(
    [
        ("walk_id", pa.int64()),  # content id: hash of kind, node ids, relation ids, directions
        ("root", pa.int64()),
        ("kind", pa.string()),
        ("steps", pa.int8()),
        ("count", pa.int32()),  # multiplicity (random walks are deduplicated per root)
        ("nodes", pa.list_(pa.int64())),
        ("rels", pa.list_(pa.int64())),
        ("inverse", pa.list_(pa.bool_())),
    ]
)
_KIND_SEED = {"bfs": 0x5BF5, "random": 0x4A4D}
_INVERSE_BIT = np.int64(0x2545F4914F6CDD1D)


def walk_ids(kind: str, node_ids: np.ndarray, rel_ids: np.ndarray, inverse: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Content ids over padded id matrices. Positions past a walk's `steps` never enter its hash,
    so passing steps - 1 gives the id of the walk's prefix."""
    h = fold64(np.full(len(steps), _KIND_SEED[kind], np.uint64), steps.astype(np.int64))
    h = fold64(h, node_ids[:, 0])
    for t in range(rel_ids.shape[1]):
        live = steps > t
        step = rel_ids[:, t] ^ np.where(inverse[:, t], _INVERSE_BIT, np.int64(0))
        nxt = fold64(fold64(h, step), node_ids[:, t + 1])
        h = np.where(live, nxt, h)
    return mix64(h).view(np.int64)


def list_array(values: pa.Array, lengths: np.ndarray) -> pa.ListArray:
    """A list column from flat values and per-row lengths."""
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def padded(lists: pa.Array | pa.ChunkedArray, width: int, fill: int | bool) -> np.ndarray:
    """A list column as a (rows, width) matrix, short lists padded with `fill`."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks()
    lengths = lists.value_lengths().to_numpy(zero_copy_only=False)
    values = lists.flatten().to_numpy(zero_copy_only=False)
    out = np.full((len(lengths), width), fill, values.dtype if len(values) else type(fill))
    out[np.arange(width)[None, :] < lengths[:, None]] = values  # row-major: each list in order
    return out


def block_to_arrow(graph: Graph, block: WalkBlock) -> pa.Table:
    steps = block.steps.astype(np.int64)
    width = block.rels.shape[1]
    node_mask = np.arange(width + 1)[None, :] <= steps[:, None]
    rel_mask = np.arange(width)[None, :] < steps[:, None]
    node_ids = np.where(block.nodes >= 0, graph.node_ids[np.maximum(block.nodes, 0)], 0)
    rel_ids = np.where(block.rels >= 0, graph.rel_ids[np.maximum(block.rels, 0)], 0)
    return pa.table(
        {
            "walk_id": walk_ids(block.kind, node_ids, rel_ids, block.inverse, steps),
            "root": node_ids[:, 0],
            "kind": pa.repeat(pa.scalar(block.kind, pa.string()), len(block)),  # a list of the kind per walk: 40 us a question's walks
            "steps": block.steps,
            "count": block.count,
            "nodes": list_array(pa.array(node_ids[node_mask]), steps + 1),
            "rels": list_array(pa.array(rel_ids[rel_mask]), steps),
            "inverse": list_array(pa.array(block.inverse[rel_mask]), steps),
        },
        schema=WALKS_SCHEMA,
    )


def _padded_walks(walks: pa.Table | pa.RecordBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(nodes, rels, inverse, steps) of id-list walk columns as padded matrices."""
    steps = walks.column("steps").to_numpy().astype(np.int64)
    width = int(steps.max(initial=0))
    return (
        padded(walks.column("nodes"), width + 1, 0),
        padded(walks.column("rels"), width, 0),
        padded(walks.column("inverse"), width, False),
        steps,
    )


def walk_ids_of(walks: pa.Table | pa.RecordBatch, kind: str) -> np.ndarray:
    """Content ids of walks given as id lists (what the join engine produces)."""
    nodes, rels, inverse, steps = _padded_walks(walks)
    return walk_ids(kind, nodes, rels, inverse, steps)


def prefix_ids(walks: pa.Table | pa.RecordBatch, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(ids, valid): ids[:, k-1] is the content id of each walk's first k steps, valid where the
    walk is longer than k (a proper prefix)."""
    nodes, rels, inverse, steps = _padded_walks(walks)
    width = max(rels.shape[1] - 1, 0)
    ids = np.zeros((len(steps), width), np.int64)
    for k in range(1, width + 1):
        ids[:, k - 1] = walk_ids(kind, nodes, rels, inverse, np.minimum(steps, k))
    return ids, np.arange(1, width + 1)[None, :] < steps[:, None]


def keep_maximal(walks: pa.Table, kind: str) -> pa.Table:
    """Only walks no other walk in `walks` extends (BFS `maximal`): a walk that is a prefix of a
    longer one says nothing the longer one does not. Prefixes of every length count, since caps
    may have dropped the walks in between. Content ids include the root, so any set of roots works."""
    ids, valid = prefix_ids(walks, kind)
    return walks.filter(pc.invert(pc.is_in(walks.column("walk_id"), pa.array(ids[valid]))))


def cap_per_root(walks: pa.Table, kind: str, max_per_root: int | None) -> pa.Table:
    """Each root's first `max_per_root` walks: BFS in emission order (shortest first, then
    canonical); random walks most frequent first, ties by walk_id."""
    if max_per_root is None or not walks.num_rows:
        return walks
    if kind == "random":
        walks = walks.sort_by([("root", "ascending"), ("count", "descending"), ("walk_id", "ascending")])
    rank = rank_within_groups(walks.column("root").to_numpy())
    return walks.filter(pa.array(rank < max_per_root))


def finish(walks: pa.Table, kind: str, spec: WalkSpec) -> pa.Table:
    """Per-root rules applied after walking, the same in every engine: the cap first, then (BFS
    `maximal`) prefix removal, so a dropped prefix is always said by a kept walk."""
    walks = cap_per_root(walks, kind, spec.max_per_root)
    if kind == "bfs" and spec.bfs_mode == "maximal":
        walks = keep_maximal(walks, kind)
    return walks
