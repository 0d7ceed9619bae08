"""One vector-store interface, two Qdrant backends.

`EdgeStore` (kgwalk.index.edge): Qdrant's in-process engine (qdrant-edge-py), one generation
folder per version of the index; the embedded default. `ServerStore`: qdrant-client against a
Qdrant server (or its local mode, which speaks the same API and is what the tests use).

Collections are made for Walk&Retrieve's two searches: nodes get an HNSW graph; walks are
always searched within one root, so they get a payload index on `root` and no HNSW graph.

Walk vectors are stored as float32 (cosine) or float16 (index.vector_datatype). A float16
collection keeps exactly the vectors `stored` returns (unit vectors rounded to float16, scored by
dot product with the query rounded alike: Qdrant's cosine would renormalize them), so node sums
built from `stored` vectors match what a refresh reads back. Node collections (one point per
entity, a few percent of the bytes) stay float32: node vectors stay exact unit vectors.
"""

from __future__ import annotations

import os
import random
import time
import uuid
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kgwalk.config import Config
from kgwalk.errors import KgwalkError

ROOT_FIELD = "root"
VECTOR_DATATYPES = ("float32", "float16")


@dataclass
class Hit:
    id: int
    score: float
    payload: dict[str, Any]


def as_stored(vectors: np.ndarray, datatype: str) -> np.ndarray:
    """`vectors` (float32) as a collection of this datatype keeps them, bit for bit."""
    vectors = np.asarray(vectors, np.float32)
    return vectors.astype(np.float16).astype(np.float32) if datatype == "float16" else vectors


def unit(vector: np.ndarray) -> list[float]:
    """A query vector scaled to unit length: float16 collections score by dot product."""
    v = np.asarray(vector, np.float64)
    return (v / max(float(np.linalg.norm(v)), 1e-300)).astype(np.float32).tolist()


def check_query_dim(collection: str, dim: int, vector: np.ndarray) -> None:
    """A query vector of another size than the collection's comes from another embedder than the
    one that built the index: say so in one line rather than let Qdrant fail in its words."""
    if len(vector) != dim:
        raise KgwalkError(f"the index's {collection!r} vectors have {dim} dimensions, the question's {len(vector)}: "
                          "query with the embed.model the KG was built with, or rebuild its vectors and index "
                          "with this one (kgwalk embed, then kgwalk index)")


def point_ids(ids: np.ndarray) -> list[int]:
    """Qdrant ids are unsigned: our signed int64 ids map to uint64 bit-for-bit."""
    return np.asarray(ids, np.int64).view(np.uint64).tolist()


class VectorStore(Protocol):
    """Writers call `begin`, then create/upsert/delete/finish, then `commit`; readers just search."""

    def begin(self, copy: bool = False) -> None:
        """Start a new version of the index: empty (a build) or holding the live one's points
        (a refresh). Readers keep seeing the live version until `commit`."""

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        """An empty collection in the new version; `graph=False`: no HNSW, payload index on root."""

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]]) -> None: ...

    def stored(self, collection: str, vectors: np.ndarray) -> np.ndarray:
        """`vectors` exactly as `collection` keeps them (and `retrieve` returns them)."""

    def delete(self, collection: str, ids: np.ndarray) -> None: ...

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """(ids found, their vectors, payloads), in the order of `ids`; missing ids are skipped.
        `payloads=False` leaves them empty: reading them costs more than the vectors."""

    def has_sums(self, collection: str) -> bool:
        """Whether the store keeps the exact node sums (kgwalk.index.build.NodeSums) of the live
        version of this node collection, so that a refresh can update node vectors from the
        walks that changed alone."""

    def read_sums(self, collection: str, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fixed-point sums, walk counts) of these roots; zeros for roots without walks."""

    def write_sums(self, collection: str, roots: np.ndarray, sums: np.ndarray, walks: np.ndarray) -> None:
        """Keep these roots' node sums with the new version (a store that keeps none ignores them)."""

    def finish(self, collection: str) -> None:
        """Build indexes and make the collection durable."""

    def commit(self, reflects: dict[str, Any] | None = None) -> None:
        """Make the new version live for readers, every collection at once; `reflects` (the
        input versions it was made from) is kept with it where the store keeps versions."""

    def reflects(self) -> dict[str, Any] | None:
        """What the live version was committed with, if the store keeps it."""

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]: ...

    def follow_live(self) -> None:
        """A reader moves to the live version if a newer one was committed since it opened. Call
        it between queries, never within one, so that one query reads one version."""

    def count(self, collection: str) -> int: ...

    def close(self) -> None: ...


def order_records(ids: np.ndarray, records: list[tuple[int, list[float], dict[str, Any]]]):
    """Records (point id, vector, payload) back in the order of `ids` (signed), missing ones dropped."""
    by_id = {int(np.array(r[0], np.uint64).view(np.int64)): r for r in records}
    found = [int(i) for i in ids if int(i) in by_id]
    if not found:  # e.g. a question names entities that have no node point (no walks)
        return np.empty(0, np.int64), np.empty((0, 0), np.float32), []
    vectors = np.array([by_id[i][1] for i in found], np.float32).reshape(len(found), -1)
    return np.array(found, np.int64), vectors, [dict(by_id[i][2] or {}) for i in found]


class ServerStore:
    """A Qdrant server through qdrant-client; `location` may also be ':memory:' or a folder
    (qdrant-client's local mode: same API, for small tests only).

    A collection name is an alias. A build fills fresh physical collections and `commit`
    switches every alias in one request (Qdrant applies it atomically). A refresh
    (`begin(copy=True)`) updates the live collections in place: Qdrant has no cheap clone, so
    readers see each point change as it lands; refresh orders its writes so that a walk is never
    visible without its node.
    """

    def __init__(self, location: str, api_key: str | None = None, max_retries: int = 5, retry_backoff_s: float = 0.5,
                 vector_datatype: str = "float32") -> None:
        from qdrant_client import QdrantClient

        if location.startswith(("http://", "https://")):
            self.client = QdrantClient(url=location, api_key=api_key, timeout=60)
        elif location == ":memory:":
            self.client = QdrantClient(location=":memory:")
        else:
            self.client = QdrantClient(path=location)
        self.location, self.max_retries, self.retry_backoff_s = location, max_retries, retry_backoff_s
        self.vector_datatype = vector_datatype  # of walk collections this store creates
        self._datatypes: dict[str, str] = {}
        self._dims: dict[str, int] = {}  # per physical collection: a new one after each rebuild
        self._building: dict[str, str] = {}
        self._in_place = False

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        """One request, retried with exponential backoff and jitter on what may pass (connection
        errors, timeouts, 429, 5xx); then one clear error. Nothing is switched until `commit`,
        and refresh upserts are idempotent, so rerunning the command resumes."""
        from qdrant_client.http.exceptions import (
            ResponseHandlingException,
            UnexpectedResponse,
        )

        for attempt in range(self.max_retries + 1):
            try:
                return fn()
            except (ResponseHandlingException, UnexpectedResponse) as e:
                status = getattr(e, "status_code", None)
                if status is not None and status != 429 and status < 500:
                    raise KgwalkError(f"Qdrant at {self.location} refused {what}: HTTP {status} {getattr(e, 'reason_phrase', '')}".rstrip()) from None
                reason = f"HTTP {status}" if status is not None else str(getattr(e, "source", e)) or type(e).__name__
                if attempt == self.max_retries:
                    raise KgwalkError(
                        f"Qdrant at {self.location} failed {what} {attempt + 1} times ({reason}); the live index is "
                        "unchanged: rerun the command when the server is back (index.max_retries)"
                    ) from None
                time.sleep(self.retry_backoff_s * 2**attempt * random.uniform(0.5, 1.5))

    def _live(self, alias: str) -> str | None:
        """The physical collection behind an alias, if any."""
        for a in self._call("reading aliases", self.client.get_aliases).aliases:
            if a.alias_name == alias:
                return a.collection_name
        return None

    def begin(self, copy: bool = False) -> None:
        self._building.clear()
        self._in_place = copy

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        from qdrant_client import models

        if self._in_place:
            raise RuntimeError("a refresh updates collections in place; it cannot create one")
        self._drop_unfinished(collection)
        physical = f"{collection}__{uuid.uuid4().hex[:12]}"
        self._call(f"creating {physical}", lambda: self.client.create_collection(
            physical,
            vectors_config=models.VectorParams(size=dim, distance=models.Distance.DOT, datatype=models.Datatype.FLOAT16)
            if self.vector_datatype == "float16" and not graph else models.VectorParams(size=dim, distance=models.Distance.COSINE),
            hnsw_config=models.HnswConfigDiff(m=hnsw_m if graph else 0),
        ))
        if not graph:
            with warnings.catch_warnings():  # local mode says payload indexes are no-ops there
                warnings.simplefilter("ignore", UserWarning)
                self._call(f"indexing {physical}", lambda: self.client.create_payload_index(physical, ROOT_FIELD, models.PayloadSchemaType.INTEGER))
        self._building[collection] = physical
        self._datatypes[collection] = "float16" if self.vector_datatype == "float16" and not graph else "float32"

    def _drop_unfinished(self, collection: str) -> None:
        """Physical collections of an earlier build of `collection` that never went live (it
        failed or was killed before `commit`); the writer lock means no build is filling them."""
        live = self._live(collection)
        names = [c.name for c in self._call("listing collections", self.client.get_collections).collections]
        for name in names:
            if name.startswith(f"{collection}__") and name != live:
                self._call(f"dropping {name}", lambda name=name: self.client.delete_collection(name))

    def _target(self, collection: str) -> str:
        return self._building.get(collection, collection)

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        from qdrant_client import models

        batch = models.Batch(ids=point_ids(ids), vectors=self.stored(collection, vectors).tolist(), payloads=payloads)
        self._call(f"upserting {len(ids):,} points", lambda: self.client.upsert(self._target(collection), points=batch, wait=True))

    def stored(self, collection: str, vectors: np.ndarray) -> np.ndarray:
        if collection not in self._datatypes:  # as the collection was created, by this build or an earlier one
            params = self._call("reading a collection", lambda: self.client.get_collection(self._target(collection))).config.params.vectors
            self._datatypes[collection] = "float16" if getattr(params, "datatype", None) == "float16" else "float32"
        return as_stored(vectors, self._datatypes[collection])

    def delete(self, collection: str, ids: np.ndarray) -> None:
        from qdrant_client import models

        if len(ids):
            selector = models.PointIdsList(points=point_ids(ids))
            self._call(f"deleting {len(ids):,} points", lambda: self.client.delete(self._target(collection), points_selector=selector, wait=True))

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        records = self._call("retrieving points", lambda: self.client.retrieve(self._target(collection), ids=point_ids(ids), with_payload=payloads, with_vectors=True))
        return order_records(ids, [(r.id, r.vector, r.payload) for r in records])

    def has_sums(self, collection: str) -> bool:
        return False  # a refresh recomputes node vectors from all walks of the roots it changes

    def read_sums(self, collection: str, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError("the server backend keeps no node sums")

    def write_sums(self, collection: str, roots: np.ndarray, sums: np.ndarray, walks: np.ndarray) -> None:
        pass

    def finish(self, collection: str) -> None:
        pass  # upserts wait for acknowledgement; the server builds its indexes itself

    def reflects(self) -> dict[str, Any] | None:
        return None  # points change in place; a refresh there is idempotent without it

    def follow_live(self) -> None:
        pass  # collection names are aliases: the server switches them

    def commit(self, reflects: dict[str, Any] | None = None) -> None:
        from qdrant_client import models

        switch, old = [], []
        for alias, physical in self._building.items():
            live = self._live(alias)
            if live:
                switch.append(models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias)))
                old.append(live)
            switch.append(models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=physical, alias_name=alias)))
        if switch:
            self._call("switching aliases", lambda: self.client.update_collection_aliases(change_aliases_operations=switch))
        for name in old:
            self._call(f"dropping {name}", lambda name=name: self.client.delete_collection(name))
        self._building.clear()
        self._in_place = False

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        from qdrant_client import models

        live = self._live(collection)
        if live is None:
            raise KgwalkError(f"no index collection {collection!r} on the Qdrant server (run `kgwalk index` first)")
        if live not in self._dims:
            self._dims[live] = self.client.get_collection(live).config.params.vectors.size
        check_query_dim(collection, self._dims[live], vector)
        flt = None
        if root is not None:
            flt = models.Filter(must=[models.FieldCondition(key=ROOT_FIELD, match=models.MatchValue(value=int(root)))])
        result = self.client.query_points(
            collection, query=unit(vector), limit=k, query_filter=flt, with_payload=True
        )
        return [Hit(int(np.uint64(p.id).view(np.int64)), float(p.score), dict(p.payload or {})) for p in result.points]  # our signed ids

    def count(self, collection: str) -> int:
        return int(self.client.count(collection, exact=True).count)

    def close(self) -> None:
        self.client.close()


def open_store(cfg: Config) -> VectorStore:
    if cfg.index.vector_datatype not in VECTOR_DATATYPES:
        raise KgwalkError(f"index.vector_datatype must be one of {VECTOR_DATATYPES}, got {cfg.index.vector_datatype!r}")
    if cfg.index.backend == "edge":
        from kgwalk.index.edge import EdgeStore

        return EdgeStore(cfg.root / "qdrant", cfg.index.compact_ratio, cfg.index.vector_datatype)
    if cfg.index.backend == "server":
        if not cfg.index.url:
            raise KgwalkError("index.url must be set for the server backend, e.g. http://localhost:6333 (conf/cluster.yaml takes it from QDRANT_URL)")
        return ServerStore(cfg.index.url, os.environ.get(cfg.index.api_key_env), cfg.index.max_retries, cfg.index.retry_backoff_s,
                           cfg.index.vector_datatype)
    raise KgwalkError(f"index.backend must be 'edge' or 'server', got {cfg.index.backend!r}")


def collection_names(cfg: Config) -> tuple[str, str]:
    """(nodes, walks) collection names."""
    return f"{cfg.name}_nodes", f"{cfg.name}_walks"


def index_version(cfg: Config) -> int:
    """The live index's version: its generation number (edge); 0 for a server, which keeps none."""
    if cfg.index.backend != "edge":
        return 0
    from kgwalk.index.edge import EdgeStore

    live = EdgeStore(cfg.root / "qdrant").live_generation()
    return int(live[1:]) if live else 0
