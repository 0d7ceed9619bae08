"""The index stage: walk vectors + payloads into `<name>_walks`, node vectors (normalized mean of
each root's walk vectors) into `<name>_nodes`.

A walk point carries its vector, its walk id as the point id, and the root a search filters by as
its one payload field (a second field cost ~10% of the stage for nothing a reader uses). What
a hit shows (kind, text, nodes, relations and their labels) stays in the Delta tables, which
kgwalk.index.records reads at the versions the index reflects: a payload of Python lists and
strings cost Qdrant more to take in than the vector, and doubled the index on disk.
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from tqdm import tqdm

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.index.base import ROOT_FIELD, KeepsNodeSums
from kgwalk.index.store import collection_names, open_store
from kgwalk.index.walk_vectors import all_vectors, matching_vectors, vector_dim
from kgwalk.log import terminal
from kgwalk.storage import read_table
from kgwalk.walks.labels import LabelLookup, load_labels

PAYLOAD_COLUMNS = ["walk_id", "root"]
_FIXED_POINT = 2.0**40  # unit-vector components as int64 multiples of 2^-40: exact, order-free sums


@dataclass
class IndexResult:
    walks: int
    nodes: int
    entities_without_walks: int


class NodeSums:
    """Per-root sums of walk vectors for node vectors (the normalized mean of a root's walks).

    Sums are kept in fixed point, so they are exact and independent of the order walks arrive
    in: a refresh that recomputes a few roots gets bit-identical node vectors to a full build.
    """

    def __init__(self, root_ids: np.ndarray, dim: int) -> None:
        self.root_ids = np.asarray(root_ids, np.int64)  # sorted
        self.sums = np.zeros((len(self.root_ids), dim), np.int64)
        self.walks = np.zeros(len(self.root_ids), np.int64)

    def add(self, roots: np.ndarray, vectors: np.ndarray, sign: int = 1) -> None:
        """Add walks' vectors to their roots' sums (sign -1: take walks away, exactly)."""
        if not len(roots):
            return
        rows = np.searchsorted(self.root_ids, roots)
        order = np.argsort(rows, kind="stable")
        sorted_rows = rows[order]
        starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
        ordered = vectors[order] if vectors.dtype == np.float32 else vectors[order].astype(np.float64)
        # float32 stays float32: scaling by 2^40 is exact there, so rint sees the value float64 would, without the copy
        fixed = np.rint(ordered * ordered.dtype.type(_FIXED_POINT)).astype(np.int64)
        self.sums[sorted_rows[starts]] += sign * np.add.reduceat(fixed, starts, axis=0)
        self.walks += sign * np.bincount(rows, minlength=len(self.root_ids))

    def node_vectors(self, rows: np.ndarray) -> np.ndarray:
        v = self.sums[rows].astype(np.float64)
        v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-300)
        return v.astype(np.float32)


def with_texts(walks: pa.Table, texts: pa.Table) -> pa.Table:
    """`walks` sorted by walk_id with the columns of `texts` (but walk_id) appended; `texts` must
    hold exactly the walks' ids."""
    walks, texts = walks.sort_by("walk_id"), texts.sort_by("walk_id")
    if not walks.column("walk_id").equals(texts.column("walk_id")):
        raise KgwalkError(f"texts ({texts.num_rows:,}) do not match walks ({walks.num_rows:,}): rerun `kgwalk verbalize`")
    for name in texts.column_names:
        if name != "walk_id":
            walks = walks.append_column(name, texts.column(name))
    return walks


def walk_meta(walks: pa.Table, texts: pa.Table) -> pa.Table:
    """What a walk point carries, one row per walk sorted by walk_id: the payload columns plus
    text_id (to match vectors)."""
    return with_texts(walks.select(PAYLOAD_COLUMNS), texts.select(["walk_id", "text_id"]))


def walk_payloads(roots: np.ndarray) -> list[dict]:
    return [{ROOT_FIELD: r} for r in roots.tolist()]


def node_payloads(ids: np.ndarray, labels: LabelLookup, walk_counts: np.ndarray) -> list[dict]:
    names = labels.entity_labels(ids).to_pylist()
    return [{"id": int(i), "label": label, "walks": int(n)} for i, label, n in zip(ids, names, walk_counts)]


def root_ranges(root_ids: np.ndarray, dim: int, memory_mib: int) -> list[np.ndarray]:
    """`root_ids` (sorted) in consecutive ranges whose node sums fit `memory_mib` (index.sums_memory_mib)."""
    per_range = max(1, (memory_mib << 20) // ((dim + 1) * 8))
    return [root_ids[at : at + per_range] for at in range(0, len(root_ids), per_range)] or [root_ids]


def build_index(cfg: Config, reflects: dict[str, int], progress: bool = True) -> IndexResult:
    """Every walk point and node point, in new collections switched live at the end; the live
    index records `reflects`, the versions of the tables it was built from (read before them).

    A node vector needs all its root's walks, which arrive in the texts' order, not by root: the
    node sums of every root are held until the stream ends. Where they would pass
    index.sums_memory_mib, the roots are taken in ranges, one pass over the texts (or vectors) per
    range, each embedding only its own walks' texts; node points are written in root order either way."""
    labels = load_labels(cfg)
    meta = walk_meta(read_table(cfg.table("walks"), PAYLOAD_COLUMNS, what="walks"), read_table(cfg.table("texts"), ["walk_id", "text_id"], what="verbalize"))
    if not meta.num_rows:
        raise KgwalkError("no walks to index: the walks table is empty")
    meta_ids = meta.column("walk_id").to_numpy()
    meta_roots = meta.column("root").to_numpy()
    meta_text_ids = meta.column("text_id").to_numpy()
    taken = np.zeros(len(meta_ids), bool)
    dim = vector_dim(cfg)
    ranges = root_ranges(labels.entity_ids, dim, cfg.index.sums_memory_mib)

    with closing(open_store(cfg)) as store:
        store.begin()
        nodes_c, walks_c = collection_names(cfg)
        store.create(walks_c, dim, graph=False, hnsw_m=cfg.index.hnsw_m)
        store.create(nodes_c, dim, graph=True, hnsw_m=cfg.index.hnsw_m)
        bar = tqdm(total=meta.num_rows, desc="index walks", unit="walk", disable=not progress, file=terminal())
        nodes = 0
        for n, roots in enumerate(ranges):
            sums = NodeSums(roots, dim)
            in_range = meta_ids[(meta_roots >= roots[0]) & (meta_roots <= roots[-1])] if len(ranges) > 1 else None
            batches = (read.slice(at, cfg.index.upsert_batch) for read in all_vectors(cfg, in_range) for at in range(0, read.num_rows, cfg.index.upsert_batch))
            for batch in batches:
                rows, vecs = matching_vectors(meta_ids, meta_text_ids, batch, taken)
                if not len(rows):
                    continue
                if vecs.shape[1] != dim:
                    raise KgwalkError(f"vectors of {vecs.shape[1]} dimensions, the model's are {dim}: rerun `kgwalk embed`")
                vecs = store.stored(walks_c, vecs)  # node sums add what a refresh will read back
                sums.add(meta_roots[rows], vecs)
                store.upsert(walks_c, meta_ids[rows], vecs, walk_payloads(meta_roots[rows]))
                bar.update(len(rows))
            if n == len(ranges) - 1:
                bar.close()
                if not taken.all():
                    raise KgwalkError(f"vectors cover {int(taken.sum()):,} of {len(taken):,} walks: rerun `kgwalk embed`")
                store.finish(walks_c)  # the walks' base seals on its own thread while the last nodes are written
            nodes += write_nodes(store, nodes_c, sums, labels, cfg.index.upsert_batch, progress)
        walks = meta.num_rows
        # the commit builds the walks' root map from every write (kgwalk.index.root_map.RootChanges):
        # at 10M edges it needs the 1.5 GB of walk metadata and the node sums' GBs these held
        del meta, meta_ids, meta_roots, meta_text_ids, taken, sums
        store.finish(nodes_c)
        store.commit(reflects)
    entities = len(labels.entity_ids)
    return IndexResult(walks=walks, nodes=nodes, entities_without_walks=entities - nodes)


def write_nodes(store, nodes_c: str, sums: NodeSums, labels: LabelLookup, step: int, progress: bool) -> int:
    """The node points of the roots of `sums` that have walks, and the sums the store keeps; how many."""
    has_walks = np.flatnonzero(sums.walks)
    for start in tqdm(range(0, len(has_walks), step), desc="index nodes", disable=not progress, file=terminal()):
        rows = has_walks[start : start + step]
        ids = sums.root_ids[rows]
        store.upsert(nodes_c, ids, sums.node_vectors(rows), node_payloads(ids, labels, sums.walks[rows]))
    if isinstance(store, KeepsNodeSums):
        kept = has_walks[store.keeps_sum(sums.walks[has_walks])]
        store.write_sums(nodes_c, sums.root_ids[kept], sums.sums[kept], sums.walks[kept])
    return len(has_walks)
