"""The qdrant-edge adapter: creating, copying and loading one shard folder, and bulk upserts.
Every use of the qdrant_edge package's shard lifecycle is here; kgwalk.index.edge composes it."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from kgwalk.index.base import ROOT_FIELD


def shard_config(dim: int, graph: bool, hnsw_m: int, datatype: str) -> Any:
    from qdrant_edge import (
        Distance,
        EdgeConfig,
        EdgeOptimizersConfig,
        EdgeVectorParams,
        HnswIndexConfig,
        VectorStorageDatatype,
    )

    hnsw = HnswIndexConfig(m=hnsw_m if graph else 0, ef_construct=100, full_scan_threshold=10000)
    if datatype == "float16":  # dot product: Qdrant keeps the vectors as given (see kgwalk.index.store)
        vectors = EdgeVectorParams(size=dim, distance=Distance.Dot, datatype=VectorStorageDatatype.Float16)
    else:
        vectors = EdgeVectorParams(size=dim, distance=Distance.Cosine)
    optimizers = None if graph else EdgeOptimizersConfig(indexing_threshold=0)  # nothing to index: no conversion
    # No WAL: a generation that was not committed is thrown away, never recovered.
    return EdgeConfig(vectors=vectors, hnsw_config=hnsw, optimizers=optimizers, wal_enabled=False)


def copy_shard(source: Path, target: Path) -> None:
    """A copy of a shard folder that readers may have open: Qdrant writes `.atomicwrite*` temporary
    files beside a file it replaces, even when loading a shard, and renames them away, so they are
    never part of the shard and may vanish while the copy runs."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".atomicwrite*"))


def create_shard(path: Path, dim: int, graph: bool, hnsw_m: int, datatype: str) -> Any:
    from qdrant_edge import EdgeShard, IntegerIndexParams, UpdateOperation

    shutil.rmtree(path, ignore_errors=True)
    shard = EdgeShard.create(str(path), shard_config(dim, graph, hnsw_m, datatype))
    if not graph:  # matched by value only: no range index
        shard.update(UpdateOperation.create_field_index(ROOT_FIELD, IntegerIndexParams(lookup=True, range=False)))
    return shard


def load_shard(path: Path) -> Any:
    from qdrant_edge import EdgeShard

    return EdgeShard.load(str(path))


def upsert_records(shard: Any, records: list[Any]) -> None:
    """Write records read from another shard (id, vector, payload) into `shard`."""
    from qdrant_edge import Point, UpdateOperation

    shard.update(UpdateOperation.upsert_points([Point(id=r.id, vector=r.vector, payload=r.payload) for r in records]))
