"""The qdrant-edge adapter: creating, copying and loading one shard folder, and bulk upserts.
Every use of the qdrant_edge package's shard lifecycle is here; kgwalk.index.edge composes it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Literal

from kgwalk.index.base import ROOT_FIELD


ShardKind = Literal["graph", "base", "delta"]


def shard_config(dim: int, kind: ShardKind, hnsw_m: int, datatype: str) -> Any:
    """`graph`: searched globally through an HNSW graph (nodes). `base` and `delta`: no graph,
    searched within one root through the root's payload index (walks). A base is written once
    (a build, a compaction), and `optimize` then seals it into an immutable segment whose id map,
    root index and vectors stay on disk and are mapped on demand: loading the 7M-point base of a
    1M-edge KG took 13.6 s while Qdrant rebuilt them in memory, and every refresh and every cold
    query loads it. A delta (a refresh's writes) is never converted: it grows by small writes."""
    from qdrant_edge import (
        Distance,
        EdgeConfig,
        EdgeOptimizersConfig,
        EdgeVectorParams,
        HnswIndexConfig,
        Memory,
        VectorStorageDatatype,
    )

    graph = kind == "graph"
    hnsw = HnswIndexConfig(m=hnsw_m if graph else 0, ef_construct=100, full_scan_threshold=10000)
    memory = None if graph else Memory.Cold
    if datatype == "float16":  # dot product: Qdrant keeps the vectors as given (see kgwalk.index.store)
        vectors = EdgeVectorParams(size=dim, distance=Distance.Dot, datatype=VectorStorageDatatype.Float16, memory=memory)
    else:
        vectors = EdgeVectorParams(size=dim, distance=Distance.Cosine, memory=memory)
    if graph:
        # A refresh's changed nodes get a graph of their own (a new segment, merged once there
        # are more than 8) instead of the whole graph being rebuilt for them, and the points they
        # replace stay marked deleted in the old graphs until half of a segment is (Qdrant's
        # defaults: 2 segments on 2 cores, 8 from 16 cores; vacuum at 0.2). Over 48 successive
        # 0.1%-refresh-sized updates of the 1M-edge KG's 389K nodes: 3.7 s a refresh against
        # 5.6 s with Qdrant's defaults, recall@10 -0.08 to +0.04 of theirs, search p50 +0.2-1.2
        # ms; the build's `optimize` 84 s against 76 s (bench/results/node_updates.md).
        optimizers = EdgeOptimizersConfig(default_segment_number=8, deleted_threshold=0.5)
    else:  # indexing_threshold in KB: 1 converts every segment on `optimize`, 0 never does
        optimizers = EdgeOptimizersConfig(indexing_threshold=1 if kind == "base" else 0)
    # No WAL: a generation that was not committed is thrown away, never recovered.
    return EdgeConfig(vectors=vectors, hnsw_config=hnsw, optimizers=optimizers, wal_enabled=False,
                      payload_memory=memory, id_tracker_memory=memory)


def copy_shard(source: Path, target: Path) -> None:
    """A copy of a shard folder that readers may have open: Qdrant writes `.atomicwrite*` temporary
    files beside a file it replaces, even when loading a shard, and renames them away, so they are
    never part of the shard and may vanish while the copy runs."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".atomicwrite*"))


def create_shard(path: Path, dim: int, kind: ShardKind, hnsw_m: int, datatype: str) -> Any:
    from qdrant_edge import EdgeShard, IntegerIndexParams, Memory, UpdateOperation

    shutil.rmtree(path, ignore_errors=True)
    shard = EdgeShard.create(str(path), shard_config(dim, kind, hnsw_m, datatype))
    if kind != "graph":  # matched by value only: no range index; on disk once sealed
        shard.update(UpdateOperation.create_field_index(ROOT_FIELD, IntegerIndexParams(lookup=True, range=False, memory=Memory.Cold)))
    return shard


def load_shard(path: Path, config: Any = None) -> Any:
    """`config` (a `shard_config`) replaces the one the shard was created with, e.g. to seal a
    copy of a base written before bases were sealed."""
    from qdrant_edge import EdgeShard

    return EdgeShard.load(str(path), config)


def upsert_records(shard: Any, records: list[Any]) -> None:
    """Write records read from another shard (id, vector, payload) into `shard`."""
    from qdrant_edge import Point, UpdateOperation

    shard.update(UpdateOperation.upsert_points([Point(id=r.id, vector=r.vector, payload=r.payload) for r in records]))
