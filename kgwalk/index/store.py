"""One vector-store interface, two Qdrant backends.

`EdgeStore`: Qdrant's in-process engine (qdrant-edge-py), one shard folder per collection; the
embedded default. `ServerStore`: qdrant-client against a Qdrant server (or its local mode,
which speaks the same API and is what the tests use).

Collections are made for Walk&Retrieve's two searches: nodes get an HNSW graph; walks are
always searched within one root, so they get a payload index on `root` and no HNSW graph.
"""

from __future__ import annotations

import os
import shutil
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kgwalk.config import Config
from kgwalk.errors import KgwalkError

ROOT_FIELD = "root"


@dataclass
class Hit:
    id: int
    score: float
    payload: dict[str, Any]


def point_ids(ids: np.ndarray) -> list[int]:
    """Qdrant ids are unsigned: our signed int64 ids map to uint64 bit-for-bit."""
    return np.asarray(ids, np.int64).view(np.uint64).tolist()


class VectorStore(Protocol):
    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        """(Re)create an empty collection; `graph=False`: no HNSW, payload index on root instead."""

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]]) -> None: ...

    def finish(self, collection: str) -> None:
        """Build indexes and make the collection durable and visible to readers."""

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]: ...

    def count(self, collection: str) -> int: ...

    def close(self) -> None: ...


class EdgeStore:
    """Qdrant's in-process engine. A collection is built in a side folder and swapped in by
    `finish`, so readers of an existing index never see a half-built one."""

    def __init__(self, folder: str | Path) -> None:
        import qdrant_edge  # noqa: F401 - fail here, not mid-build, if it is missing

        self.folder = Path(folder)
        self._shards: dict[str, Any] = {}
        self._building: set[str] = set()

    def _path(self, collection: str, building: bool = False) -> Path:
        return self.folder / (collection + (".building" if building else ""))

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        from qdrant_edge import Distance, EdgeConfig, EdgeShard, EdgeVectorParams, HnswIndexConfig, PayloadSchemaType, UpdateOperation

        path = self._path(collection, building=True)
        shutil.rmtree(path, ignore_errors=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        hnsw = HnswIndexConfig(m=hnsw_m if graph else 0, ef_construct=100, full_scan_threshold=10000)
        shard = EdgeShard.create(
            str(path),
            # No WAL: a collection is rebuilt from Delta and flushed before it is swapped in.
            EdgeConfig(vectors=EdgeVectorParams(size=dim, distance=Distance.Cosine), hnsw_config=hnsw, wal_enabled=False),
        )
        if not graph:
            shard.update(UpdateOperation.create_field_index(ROOT_FIELD, PayloadSchemaType.Integer))
        self._close(collection)
        self._shards[collection] = shard
        self._building.add(collection)

    def _shard(self, collection: str):
        if collection not in self._shards:
            from qdrant_edge import EdgeShard

            path = self._path(collection)
            if not path.exists():
                raise KgwalkError(f"no index collection {collection!r} under {self.folder} (run `kgwalk index` first)")
            self._shards[collection] = EdgeShard.load(str(path))
        return self._shards[collection]

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        from qdrant_edge import Point, UpdateOperation

        points = [Point(id=i, vector=v, payload=p) for i, v, p in zip(point_ids(ids), vectors.tolist(), payloads)]
        self._shard(collection).update(UpdateOperation.upsert_points(points))

    def finish(self, collection: str) -> None:
        shard = self._shard(collection)
        shard.optimize()
        shard.flush()
        if collection in self._building:
            shard.close()
            del self._shards[collection]
            final, tmp = self._path(collection), self._path(collection, building=True)
            old = final.with_name(final.name + ".old")
            if final.exists():
                os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
            self._building.discard(collection)

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        from qdrant_edge import FieldCondition, Filter, MatchValue, Query, QueryRequest

        flt = None if root is None else Filter(must=[FieldCondition(key=ROOT_FIELD, match=MatchValue(value=int(root)))])
        request = QueryRequest(limit=k, query=Query.Nearest(np.asarray(vector, np.float32).tolist()), filter=flt, with_payload=True)
        return [Hit(int(p.id), float(p.score), dict(p.payload or {})) for p in self._shard(collection).query(request)]

    def count(self, collection: str) -> int:
        from qdrant_edge import CountRequest

        return int(self._shard(collection).count(CountRequest(exact=True)))

    def _close(self, collection: str) -> None:
        shard = self._shards.pop(collection, None)
        if shard is not None:
            shard.close()

    def close(self) -> None:
        for name in list(self._shards):
            self._close(name)


class ServerStore:
    """A Qdrant server through qdrant-client; `location` may also be ':memory:' or a folder
    (qdrant-client's local mode: same API, for small tests only).

    A collection name is an alias: each rebuild fills a fresh physical collection, then one
    atomic alias switch makes it live, so readers never see a half-built collection.
    """

    def __init__(self, location: str, api_key: str | None = None) -> None:
        from qdrant_client import QdrantClient

        if location.startswith(("http://", "https://")):
            self.client = QdrantClient(url=location, api_key=api_key, timeout=60)
        elif location == ":memory:":
            self.client = QdrantClient(location=":memory:")
        else:
            self.client = QdrantClient(path=location)
        self._building: dict[str, str] = {}

    def _live(self, alias: str) -> str | None:
        """The physical collection behind an alias, if any."""
        for a in self.client.get_aliases().aliases:
            if a.alias_name == alias:
                return a.collection_name
        return None

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        from qdrant_client import models

        physical = f"{collection}__{uuid.uuid4().hex[:12]}"
        self.client.create_collection(
            physical,
            vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
            hnsw_config=models.HnswConfigDiff(m=hnsw_m if graph else 0),
        )
        if not graph:
            with warnings.catch_warnings():  # local mode says payload indexes are no-ops there
                warnings.simplefilter("ignore", UserWarning)
                self.client.create_payload_index(physical, ROOT_FIELD, models.PayloadSchemaType.INTEGER)
        self._building[collection] = physical

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        from qdrant_client import models

        self.client.upsert(
            self._building.get(collection, collection),
            points=models.Batch(ids=point_ids(ids), vectors=vectors.tolist(), payloads=payloads),
            wait=True,
        )

    def finish(self, collection: str) -> None:
        from qdrant_client import models

        physical = self._building.pop(collection, None)
        if physical is None:
            return  # nothing was rebuilt; upserts were acknowledged already
        old = self._live(collection)
        switch = [models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=physical, alias_name=collection))]
        if old:
            switch.insert(0, models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=collection)))
        self.client.update_collection_aliases(change_aliases_operations=switch)
        if old:
            self.client.delete_collection(old)

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        from qdrant_client import models

        if self._live(collection) is None:
            raise KgwalkError(f"no index collection {collection!r} on the Qdrant server (run `kgwalk index` first)")
        flt = None
        if root is not None:
            flt = models.Filter(must=[models.FieldCondition(key=ROOT_FIELD, match=models.MatchValue(value=int(root)))])
        result = self.client.query_points(
            collection, query=np.asarray(vector, np.float32).tolist(), limit=k, query_filter=flt, with_payload=True
        )
        return [Hit(int(p.id), float(p.score), dict(p.payload or {})) for p in result.points]

    def count(self, collection: str) -> int:
        return int(self.client.count(collection, exact=True).count)

    def close(self) -> None:
        self.client.close()


def open_store(cfg: Config) -> VectorStore:
    if cfg.index.backend == "edge":
        return EdgeStore(cfg.root / "qdrant")
    if cfg.index.backend == "server":
        if not cfg.index.url:
            raise KgwalkError("index.url must be set for the server backend (e.g. http://localhost:6333)")
        return ServerStore(cfg.index.url, os.environ.get(cfg.index.api_key_env))
    raise KgwalkError(f"index.backend must be 'edge' or 'server', got {cfg.index.backend!r}")


def collection_names(cfg: Config) -> tuple[str, str]:
    """(nodes, walks) collection names."""
    return f"{cfg.name}_nodes", f"{cfg.name}_walks"
