"""WalkBlock -> Arrow: ids, label tokens and a content id per walk."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kgwalk.walks.graph import Graph, fold64, mix64
from kgwalk.walks.walkers import WalkBlock

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
        ("node_labels", pa.list_(pa.string())),
        ("rel_labels", pa.list_(pa.string())),
    ]
)
_KIND_SEED = {"bfs": 0x5BF5, "random": 0x4A4D}
_INVERSE_BIT = np.int64(0x2545F4914F6CDD1D)


def walk_ids(kind: str, node_ids: np.ndarray, rel_ids: np.ndarray, inverse: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Content ids over padded id matrices; positions past a walk's length never enter its hash,
    so the id of a walk does not depend on how wide the matrix around it was."""
    h = fold64(np.full(len(steps), _KIND_SEED[kind], np.uint64), steps.astype(np.int64))
    h = fold64(h, node_ids[:, 0])
    for t in range(rel_ids.shape[1]):
        live = steps > t
        step = rel_ids[:, t] ^ np.where(inverse[:, t], _INVERSE_BIT, np.int64(0))
        nxt = fold64(fold64(h, step), node_ids[:, t + 1])
        h = np.where(live, nxt, h)
    return mix64(h).view(np.int64)


def _lists(values: pa.Array, lengths: np.ndarray) -> pa.ListArray:
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def block_to_arrow(graph: Graph, block: WalkBlock) -> pa.Table:
    steps = block.steps.astype(np.int64)
    width = block.rels.shape[1]
    node_mask = np.arange(width + 1)[None, :] <= steps[:, None]
    rel_mask = np.arange(width)[None, :] < steps[:, None]
    flat_nodes = block.nodes[node_mask]  # row-major: each walk's nodes in order
    flat_rels = block.rels[rel_mask]
    node_ids = np.where(block.nodes >= 0, graph.node_ids[np.maximum(block.nodes, 0)], 0)
    rel_ids = np.where(block.rels >= 0, graph.rel_ids[np.maximum(block.rels, 0)], 0)
    return pa.table(
        {
            "walk_id": walk_ids(block.kind, node_ids, rel_ids, block.inverse, steps),
            "root": graph.node_ids[block.nodes[:, 0]],
            "kind": pa.array([block.kind] * len(block), pa.string()),
            "steps": block.steps,
            "count": block.count,
            "nodes": _lists(pa.array(graph.node_ids[flat_nodes]), steps + 1),
            "rels": _lists(pa.array(graph.rel_ids[flat_rels]), steps),
            "inverse": _lists(pa.array(block.inverse[rel_mask]), steps),
            "node_labels": _lists(graph.node_labels.take(pa.array(flat_nodes)), steps + 1),
            "rel_labels": _lists(graph.rel_labels.take(pa.array(flat_rels)), steps),
        },
        schema=WALKS_SCHEMA,
    )
