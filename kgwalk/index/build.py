"""The index stage: walk vectors + payloads into `<name>_walks`, node vectors (normalized mean of
each root's walk vectors) into `<name>_nodes`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from tqdm import tqdm

from kgwalk.config import Config
from kgwalk.embed.pipeline import arrow_to_vectors
from kgwalk.errors import KgwalkError
from kgwalk.index.store import collection_names, open_store
from kgwalk.storage import open_table, read_table
from kgwalk.verbalize.pipeline import load_labels

_PAYLOAD_COLUMNS = ["walk_id", "root", "kind", "count", "nodes", "rels", "inverse"]


@dataclass
class IndexResult:
    walks: int
    nodes: int
    entities_without_walks: int


def _add_rows(sums: np.ndarray, rows: np.ndarray, vectors: np.ndarray) -> None:
    """sums[rows[i]] += vectors[i], grouping equal rows first (far faster than np.add.at)."""
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
    sums[sorted_rows[starts]] += np.add.reduceat(vectors[order], starts, axis=0)


def build_index(cfg: Config, progress: bool = True) -> IndexResult:
    walks = read_table(cfg.table("walks"), _PAYLOAD_COLUMNS, what="walks").sort_by("walk_id")
    texts = read_table(cfg.table("texts"), ["walk_id", "text"], what="verbalize").sort_by("walk_id")
    if not walks.column("walk_id").equals(texts.column("walk_id")):
        raise KgwalkError(f"texts ({texts.num_rows:,}) do not match walks ({walks.num_rows:,}): rerun `kgwalk verbalize`")
    labels = load_labels(cfg)
    meta = labels.attach(walks).drop_columns(["rels"]).append_column("text", texts.column("text"))
    vectors = open_table(cfg.table("vectors"), what="embed").to_pyarrow_dataset()
    vector_rows = vectors.count_rows()
    if vector_rows != walks.num_rows:
        raise KgwalkError(f"vectors cover {vector_rows:,} of {walks.num_rows:,} walks: rerun `kgwalk embed`")
    entity_ids = labels.entity_ids
    meta_ids = meta.column("walk_id").to_numpy()

    store = open_store(cfg)
    nodes_c, walks_c = collection_names(cfg)
    sums: np.ndarray | None = None
    walk_counts = np.zeros(len(entity_ids), np.int64)
    step = cfg.index.upsert_batch
    bar = tqdm(total=walks.num_rows, desc="index walks", unit="walk", disable=not progress)
    for batch in vectors.to_batches(batch_size=step):
        ids = batch.column("walk_id").to_numpy()
        vecs = arrow_to_vectors(batch.column("vector"))
        rows = np.minimum(np.searchsorted(meta_ids, ids), len(meta_ids) - 1)
        if not np.array_equal(meta_ids[rows], ids):
            raise KgwalkError("vectors belong to walks that no longer exist: rerun `kgwalk embed`")
        if sums is None:
            dim = vecs.shape[1]
            sums = np.zeros((len(entity_ids), dim), np.float64)
            store.create(walks_c, dim, graph=False, hnsw_m=cfg.index.hnsw_m)
        part = meta.take(pa.array(rows))
        root_pos = np.searchsorted(entity_ids, part.column("root").to_numpy())
        _add_rows(sums, root_pos, vecs)
        walk_counts += np.bincount(root_pos, minlength=len(entity_ids))
        store.upsert(walks_c, ids, vecs, part.to_pylist())
        bar.update(len(ids))
    bar.close()
    if sums is None:
        raise KgwalkError("no walks to index: the walks table is empty")
    store.finish(walks_c)

    has_walks = np.flatnonzero(walk_counts)
    node_vecs = sums[has_walks]
    node_vecs /= np.maximum(np.linalg.norm(node_vecs, axis=1, keepdims=True), 1e-12)
    node_vecs = node_vecs.astype(np.float32)
    node_labels = labels.entity_labels(entity_ids[has_walks]).to_pylist()
    store.create(nodes_c, node_vecs.shape[1], graph=True, hnsw_m=cfg.index.hnsw_m)
    for start in tqdm(range(0, len(has_walks), step), desc="index nodes", disable=not progress):
        sl = slice(start, start + step)
        ids = entity_ids[has_walks[sl]]
        payloads = [
            {"id": int(i), "label": label, "walks": int(n)}
            for i, label, n in zip(ids, node_labels[sl], walk_counts[has_walks[sl]])
        ]
        store.upsert(nodes_c, ids, node_vecs[sl], payloads)
    store.finish(nodes_c)
    store.close()
    return IndexResult(walks=walks.num_rows, nodes=len(has_walks), entities_without_walks=len(entity_ids) - len(has_walks))
