"""One vector-store interface, two Qdrant backends.

`EdgeStore` (kgwalk.index.edge): Qdrant's in-process engine (qdrant-edge-py), one generation
folder per version of the index; the embedded default. `ServerStore`: qdrant-client against a
Qdrant server (or its local mode, which speaks the same API and is what the tests use).

Collections are made for Walk&Retrieve's two searches: nodes get an HNSW graph; walks are
always searched within one root, so they get a payload index on `root` and no HNSW graph.

Walk vectors are stored as float32 (cosine), float16, or (edge only) TurboQuant codes, turbo8 or
turbo4 (index.vector_datatype), scored by dot product with the unit query: Qdrant's cosine would
renormalize them. A float16 collection keeps exactly the vectors `stored` returns (unit vectors
rounded to float16), so node sums built from `stored` vectors match what a refresh reads back; a
TurboQuant collection's codes are decoded by Qdrant alone, so its node sums are built from the
unrounded vectors and a refresh takes away the same, from where the build took them. Node
collections take the same datatype: node vectors are computed from the exact sums (never read
back to be summed), and float32 nodes were 69 B of the 1M-edge KG's 559 B a walk.
"""

from __future__ import annotations

import functools
import os
import random
import time
import uuid
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from kgwalk.config import Config, IndexConf
from kgwalk.errors import KgwalkError
from kgwalk.index.base import ROOT_FIELD, Hit, Originals, VectorStore, as_stored, check_query_dim, order_records, point_ids, root_payload, signed_id, unit


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
        self.vector_datatype = vector_datatype  # of the collections this store creates
        self._datatypes: dict[str, str] = {}
        self._dims: dict[str, int] = {}  # per physical collection: a new one after each rebuild
        self._aliases: dict[str, str] | None = None  # alias: physical collection, as a reader last read them
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
        return self._read_aliases().get(alias)

    def _read_aliases(self) -> dict[str, str]:
        return {a.alias_name: a.collection_name for a in self._call("reading aliases", self.client.get_aliases).aliases}

    def begin(self, copy: bool = False, originals: Originals | None = None) -> None:  # a server keeps float vectors: no originals needed
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
            if self.vector_datatype == "float16" else models.VectorParams(size=dim, distance=models.Distance.COSINE),
            hnsw_config=models.HnswConfigDiff(m=hnsw_m if graph else 0),
        ))
        if not graph:
            with warnings.catch_warnings():  # local mode says payload indexes are no-ops there
                warnings.simplefilter("ignore", UserWarning)
                self._call(f"indexing {physical}", lambda: self.client.create_payload_index(physical, ROOT_FIELD, models.PayloadSchemaType.INTEGER))
        self._building[collection] = physical
        self._datatypes[collection] = self.vector_datatype

    def _drop_unfinished(self, collection: str) -> None:
        """Physical collections of an earlier build of `collection` that never went live (it
        failed or was killed before `commit`); the writer lock means no build is filling them."""
        live = self._live(collection)
        names = [c.name for c in self._call("listing collections", self.client.get_collections).collections]
        for name in names:
            if name.startswith(f"{collection}__") and name != live:
                self._call(f"dropping {name}", functools.partial(self.client.delete_collection, name))

    def _target(self, collection: str) -> str:
        return self._building.get(collection, collection)

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]], *,
               replaces: np.ndarray | None = None) -> None:
        from qdrant_client import models

        batch = models.Batch(ids=point_ids(ids), vectors=self.stored(collection, vectors).tolist(), payloads=payloads)
        self._call(f"upserting {len(ids):,} points", lambda: self.client.upsert(self._target(collection), points=batch, wait=True))

    def stored(self, collection: str, vectors: np.ndarray) -> np.ndarray:
        if collection not in self._datatypes:  # as the collection was created, by this build or an earlier one
            params = self._call("reading a collection", lambda: self.client.get_collection(self._target(collection))).config.params.vectors
            self._datatypes[collection] = "float16" if getattr(params, "datatype", None) == "float16" else "float32"
        return as_stored(vectors, self._datatypes[collection])

    def keeps_exactly(self, collection: str) -> bool:
        return True  # a server's collections are float32 or float16 (config refuses TurboQuant codes there)

    def delete(self, collection: str, ids: np.ndarray, roots: np.ndarray | None = None, *, present: bool = False) -> None:
        from qdrant_client import models

        if len(ids):
            selector = models.PointIdsList(points=point_ids(ids))
            self._call(f"deleting {len(ids):,} points", lambda: self.client.delete(self._target(collection), points_selector=selector, wait=True))

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        records = self._call("retrieving points", lambda: self.client.retrieve(self._target(collection), ids=point_ids(ids), with_payload=payloads, with_vectors=True))
        return order_records(ids, [(r.id, r.vector, r.payload) for r in records])

    def finish(self, collection: str) -> None:
        pass  # upserts wait for acknowledgement; the server builds its indexes itself

    def reflects(self) -> dict[str, Any] | None:
        return None  # points change in place; a refresh there is idempotent without it

    def follow_live(self) -> None:
        """Collection names are aliases the server switches: a reader reads where they point once
        per query (the first search after this), not once per search."""
        self._aliases = None

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
            self._call(f"dropping {name}", functools.partial(self.client.delete_collection, name))
        self._building.clear()
        self._in_place = False
        self._aliases = None

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        from qdrant_client import models

        if self._aliases is None or collection not in self._aliases:  # a miss is read again: it may have been built since
            self._aliases = self._read_aliases()
        live = self._aliases.get(collection)
        if live is None:
            raise KgwalkError(f"no index collection {collection!r} on the Qdrant server (run `kgwalk index` first)")
        if live not in self._dims:
            self._dims[live] = self._call("reading a collection", lambda: self.client.get_collection(live)).config.params.vectors.size
        check_query_dim(collection, self._dims[live], vector)
        flt = None
        if root is not None:
            flt = models.Filter(must=[models.FieldCondition(key=ROOT_FIELD, match=models.MatchValue(value=int(root)))])
        result = self._call("searching", lambda: self.client.query_points(
            collection, query=unit(vector), limit=k, query_filter=flt, with_payload=root is None
        ))
        return [Hit(signed_id(p.id), float(p.score), dict(p.payload or {}) if root is None else root_payload(root)) for p in result.points]

    def count(self, collection: str) -> int:
        return int(self._call("counting points", lambda: self.client.count(collection, exact=True)).count)

    def close(self) -> None:
        self.client.close()


def walk_datatype(conf: IndexConf) -> str:
    """index.vector_datatype, auto resolved: TurboQuant 8-bit codes in the edge engine, float16 on a server."""
    if conf.vector_datatype == "auto":
        return "turbo8" if conf.backend == "edge" else "float16"
    if conf.backend == "server" and conf.vector_datatype.startswith("turbo"):
        raise KgwalkError(f"index.vector_datatype={conf.vector_datatype} is for the edge backend; a server stores float16 or float32")
    return conf.vector_datatype


def open_store(cfg: Config) -> VectorStore:
    """The store index.backend names (edge or server, checked as the config loads)."""
    datatype = walk_datatype(cfg.index)
    if cfg.index.backend == "edge":
        from kgwalk.index.edge import EdgeStore

        return EdgeStore(cfg.root / "qdrant", cfg.index.compact_ratio, datatype, cfg.index.node_sums_min_walks, cfg.index.seal_points)
    if not cfg.index.url:
        raise KgwalkError("index.url must be set for the server backend, e.g. http://localhost:6333 (conf/cluster.yaml takes it from QDRANT_URL)")
    return ServerStore(cfg.index.url, os.environ.get(cfg.index.api_key_env), cfg.index.max_retries, cfg.index.retry_backoff_s, datatype)


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
