"""What both vector-store backends share: the reader and writer interfaces (`VectorStore` is
both), the optional node-sums capability, their `Hit`, and how our
signed int64 ids and float vectors map onto Qdrant points (kgwalk.index.store documents the
backends)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from kgwalk.errors import KgwalkError

ROOT_FIELD = "root"
Originals = Callable[[np.ndarray], np.ndarray]  # walk point ids -> their unrounded vectors, in that order


@dataclass
class Hit:
    id: int  # signed, as in our tables (kgwalk.kg.ids), from either backend
    score: float
    payload: dict[str, Any]


EXACT_DATATYPES = frozenset({"float32", "float16"})  # a collection of these gives back what `as_stored` makes


def as_stored(vectors: np.ndarray, datatype: str) -> np.ndarray:
    """`vectors` (float32) as node sums take them: as a collection of an exact datatype keeps
    them, bit for bit; as given for TurboQuant codes (turbo8, turbo4), which only Qdrant decodes,
    so node sums add the unrounded vectors and a refresh takes away the same (see
    kgwalk.index.walk_vectors)."""
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


def root_payload(root: int) -> dict[str, Any]:
    """The payload of a point found by a search within `root`: a walk point carries its root
    alone (kgwalk.index.build), so such a search reads no payloads, which on a sealed base are
    read from disk (a fresh process's first searches paid for it)."""
    return {ROOT_FIELD: int(root)}


def signed_id(point_id: int) -> int:
    """Our signed int64 id of a Qdrant point id (unsigned): every `Hit.id` is one."""
    return int(np.array(point_id, np.uint64).view(np.int64))


def point_ids(ids: np.ndarray) -> list[int]:
    """Qdrant ids are unsigned: our signed int64 ids map to uint64 bit-for-bit."""
    return np.asarray(ids, np.int64).view(np.uint64).tolist()


class VectorReader(Protocol):
    """What the query side calls: search and read points of the live version."""

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        """The `k` points most similar to `vector`, best first; with `root`, among that root's
        points only, and their payload is `{root: root}` without being read (see `root_payload`)."""

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """(ids found, their vectors, payloads), in the order of `ids`; missing ids are skipped.
        `payloads=False` leaves them empty: reading them costs more than the vectors."""

    def reflects(self) -> dict[str, Any] | None:
        """What the live version was committed with, if the store keeps it."""

    def follow_live(self) -> None:
        """A reader moves to the live version if a newer one was committed since it opened. Call
        it between queries, never within one, so that one query reads one version."""

    def count(self, collection: str) -> int: ...

    def close(self) -> None: ...


class VectorWriter(Protocol):
    """What the index stage calls: `begin`, then create/upsert/delete/finish, then `commit`
    (a refresh also reads back the vectors it replaces, with `retrieve`)."""

    def begin(self, copy: bool = False, originals: Originals | None = None) -> None:
        """Start a new version of the index: empty (a build) or holding the live one's points
        (a refresh). Readers keep seeing the live version until `commit`. `originals` gives
        the unrounded vectors of walk points by id, for a store that writes points it holds
        again and keeps only codes of them (a compaction of TurboQuant codes: decoded and
        coded again, a vector moves by a rounding)."""

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        """An empty collection in the new version; `graph=False`: no HNSW, payload index on root."""

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]], *,
               replaces: np.ndarray | None = None) -> None:
        """Write these points. `replaces` (aligned with `ids`), where the caller knows it: which of them
        may be points already; the others are new (a layered store then need not look for them in its
        base). None: any of them may be."""

    def stored(self, collection: str, vectors: np.ndarray) -> np.ndarray:
        """`vectors` as node sums take them (`as_stored`): where `keeps_exactly`, as `collection`
        keeps them and `retrieve` returns them."""

    def keeps_exactly(self, collection: str) -> bool:
        """Whether `retrieve` gives back `stored`'s vectors bit for bit (not TurboQuant codes)."""

    def delete(self, collection: str, ids: np.ndarray, roots: np.ndarray | None = None, *, present: bool = False) -> None:
        """Delete these points; `roots` (their roots, where the caller knows them) spare a
        store that must know them, to mask a layered base, reading them back. `present`: the
        caller knows every id is a point (a layered store need not look for them in its base)."""

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]: ...

    def finish(self, collection: str) -> None:
        """Build indexes where due and make the collection durable."""

    def commit(self, reflects: dict[str, Any] | None = None) -> None:
        """Make the new version live for readers, every collection at once; `reflects` (the
        input versions it was made from) is kept with it where the store keeps versions."""

    def reflects(self) -> dict[str, Any] | None: ...

    def close(self) -> None: ...


class VectorStore(VectorReader, VectorWriter, Protocol):
    """A backend: both interfaces (`open_store` returns one)."""


@runtime_checkable
class KeepsNodeSums(Protocol):
    """An optional capability of a store: the exact node sums (kgwalk.index.build.NodeSums) of
    a node collection, kept with each version, so that a refresh updates node vectors from the
    walks that changed alone. A store without it has its node vectors recomputed from all the
    walks of each changed root."""

    def has_sums(self, collection: str) -> bool:
        """Whether the live version of this node collection has its sums (an index written
        before they were kept has not)."""

    def read_sums(self, collection: str, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fixed-point sums, walk counts) of these roots; zeros for roots without walks."""

    def write_sums(self, collection: str, roots: np.ndarray, sums: np.ndarray, walks: np.ndarray) -> None:
        """Keep these roots' node sums with the new version (a store may keep only those of roots with
        many walks: `read_sums` then gives the others 0 walks, and a refresh sums their walks)."""

    def keeps_sum(self, walks: np.ndarray) -> np.ndarray:
        """Which of roots with these walk counts keep their sum (the others' `write_sums` rows
        only say they have none): a build hands over only those."""


def order_records(ids: np.ndarray, records: list[tuple[int, list[float], dict[str, Any]]]):
    """Records (point id, vector, payload) back in the order of `ids` (signed), missing ones dropped."""
    by_id = {signed_id(r[0]): r for r in records}
    found = [int(i) for i in ids if int(i) in by_id]
    if not found:  # e.g. a question names entities that have no node point (no walks)
        return np.empty(0, np.int64), np.empty((0, 0), np.float32), []
    vectors = np.array([by_id[i][1] for i in found], np.float32).reshape(len(found), -1)
    return np.array(found, np.int64), vectors, [dict(by_id[i][2] or {}) for i in found]
