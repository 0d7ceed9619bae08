"""Layered collections. A refresh must not copy the live walks collection (12 GiB for 5.9M walks)
to change a fraction of a percent of it. So in a generation written by a refresh, a collection
without an HNSW graph (walks: always searched within one root) is layered: an immutable *base*
shard, shared with the generation that wrote it, plus this generation's *delta* shard (points
written since the base) and its *masked* base points (replaced or deleted since), kept as
(id, root) pairs in `<name>.masked.npy`. Reads merge them into exactly the points a plain
collection would hold. Once delta and masked points pass `compact_ratio` of the base, the next
refresh merges them into a new base: one copy, amortised over many refreshes. A plain collection
is the same with no delta and no masked points."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from kgwalk.errors import KgwalkError
from kgwalk.index.base import EXACT_DATATYPES, ROOT_FIELD, Hit, Originals, order_records, point_ids, root_payload, signed_id
from kgwalk.index.generations import Layout, write_atomically
from kgwalk.index.qdrant_shards import copy_shard, create_shard, load_shard, seal, shard_config, upsert_records
from kgwalk.kg.ids import positions

_RETRIEVE_BATCH = 1024
_SCROLL_BATCH = 4096
NO_ROOT = -1  # masked points whose payload has no root (only reachable by searches without one)
OpenShard = Callable[[str], Any]  # a shard, by its folder relative to the store folder (kgwalk.index.edge)


def masked_path(folder: Path, generation: str, name: str) -> Path:
    return folder / generation / f"{name}.masked.npy"


def _no_masked() -> np.ndarray:
    return np.zeros((0, 2), np.int64)


def _held(shard: Any, ids: np.ndarray, *, with_payload: bool = False) -> Iterator[tuple[int, list[Any]]]:
    """Per batch of `ids`, where it starts and the records of it `shard` holds (no vectors)."""
    for start in range(0, len(ids), _RETRIEVE_BATCH):
        yield start, shard.retrieve(point_ids=point_ids(ids[start : start + _RETRIEVE_BATCH]), with_payload=with_payload, with_vector=False)


class LayeredCollection:
    """The open shards of one collection and its masked base points (sorted by id)."""

    def __init__(self, base: Any | None, delta: Any | None, masked: np.ndarray, open_base: Callable[[], Any] | None = None) -> None:
        self._base, self._open_base, self.delta = base, open_base, delta
        order = np.argsort(masked[:, 0])
        self.masked_ids, self.masked_roots = masked[order, 0], masked[order, 1]
        self._by_root: dict[int, set[int]] | None = None

    @classmethod
    def plain(cls, shard: Any) -> LayeredCollection:
        return cls(shard, None, _no_masked())

    @classmethod
    def load(cls, folder: Path, generation: str, name: str, layout: Layout, open_shard: OpenShard, *,
             lazy_base: bool = False) -> LayeredCollection:
        """Collection `name` of `generation`, as `layout` records it; `open_shard` loads a shard
        by its folder relative to `folder` (for writing, or from a private copy). `lazy_base`: a
        layered collection opens its base when it is first read (a refresh that only adds and
        deletes points need not: opening the 10M-edge KG's 64M-point base took 20 s)."""
        own = f"{generation}/{name}"
        if layout.base == own:
            return cls.plain(open_shard(layout.base))
        masked = np.load(masked_path(folder, generation, name))
        if lazy_base:
            return cls(None, open_shard(own), masked, open_base=lambda: open_shard(layout.base))
        return cls(open_shard(layout.base), open_shard(own), masked)

    @property
    def base(self) -> Any:
        if self._base is None:
            assert self._open_base is not None
            self._base = self._open_base()
        return self._base

    @property
    def writable(self) -> Any:
        return self.delta if self.delta is not None else self.base

    def is_masked(self, ids: np.ndarray) -> np.ndarray:
        return positions(ids, self.masked_ids)[1]

    def mask(self, ids: np.ndarray, roots: np.ndarray) -> None:
        ids, roots = np.concatenate([self.masked_ids, ids]), np.concatenate([self.masked_roots, roots])
        order = np.argsort(ids)
        self.masked_ids, self.masked_roots = ids[order], roots[order]
        self._by_root = None

    def masked_of(self, root: int | None) -> set[int]:
        """Point ids (Qdrant's unsigned form) of the masked base points a search must skip."""
        if root is None:
            return set(point_ids(self.masked_ids))
        if self._by_root is None:
            self._by_root = {}
            for r, i in zip(self.masked_roots.tolist(), point_ids(self.masked_ids)):
                self._by_root.setdefault(r, set()).add(i)
        return self._by_root.get(int(root), set())

    def masked_pairs(self) -> np.ndarray:
        return np.stack([self.masked_ids, self.masked_roots], axis=1)

    def hide_in_base(self, ids: np.ndarray, roots: np.ndarray | None, *, present: bool = False) -> None:
        """Mask the base points among `ids` that are not masked yet: they are replaced or deleted.
        `roots` (of `ids`, where the caller knows them) spare reading the base points' payloads:
        on a base of millions of points that read costs more than the rest of a small refresh.
        `present` (with `roots`): every id is a point of the collection, so those the delta lacks
        are base points, and the base is not asked (call it before the delta loses them)."""
        ids = np.asarray(ids, np.int64)
        ids, first = np.unique(ids, return_index=True)
        known = None if roots is None else np.asarray(roots, np.int64)[first]
        fresh = ~self.is_masked(ids)
        ids, known = ids[fresh], None if known is None else known[fresh]
        if not len(ids):  # nothing new to mask: a lazy base stays closed
            return
        if present and known is not None and self.delta is not None:
            in_delta = np.isin(ids, np.array([r.id for _, records in _held(self.delta, ids) for r in records], np.uint64).view(np.int64))
            self.mask(ids[~in_delta], known[~in_delta])
            return
        for start, records in _held(self.base, ids, with_payload=known is None):
            if not records:
                continue
            found = np.array([r.id for r in records], np.uint64).view(np.int64)
            if known is None:
                found_roots = np.array([(r.payload or {}).get(ROOT_FIELD, NO_ROOT) for r in records], np.int64)
            else:  # `ids` is sorted: each found id's root by position in its batch
                found_roots = known[start : start + _RETRIEVE_BATCH][np.searchsorted(ids[start : start + _RETRIEVE_BATCH], found)]
            self.mask(found, found_roots)

    def retrieve(self, ids: np.ndarray, payloads: bool) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        ids = np.asarray(ids, np.int64)

        def records(shard: Any, wanted: np.ndarray) -> list[tuple[Any, ...]]:
            return [(r.id, r.vector, r.payload) for r in shard.retrieve(point_ids=point_ids(wanted), with_payload=payloads, with_vector=True)]

        found = records(self.writable, ids)
        if self.delta is not None:
            rest = ids[~np.isin(ids, np.array([r[0] for r in found], np.uint64).view(np.int64)) & ~self.is_masked(ids)]
            if len(rest):
                found += records(self.base, rest)
        return order_records(ids, found)

    def search(self, query: Any, k: int, root: int | None, among: np.ndarray | None = None) -> list[Hit]:
        """The `k` best points for a qdrant-edge `query`, within `root`'s points if given: those
        whose payload names it, or the ids `among` (its walks, from a RootMap)."""
        from qdrant_edge import FieldCondition, Filter, HasIdCondition, MatchValue, QueryRequest

        must: list[Any] | None = None
        if among is not None:
            if not len(among):
                return []
            must = [HasIdCondition(point_ids=set(point_ids(among)))]
        elif root is not None:
            must = [FieldCondition(key=ROOT_FIELD, match=MatchValue(value=int(root)))]

        def hits(shard: Any, must_not: list[Any] | None) -> list[Hit]:
            flt = Filter(must=must, must_not=must_not) if must or must_not else None
            found = shard.query(QueryRequest(limit=k, query=query, filter=flt, with_payload=root is None))
            return [Hit(signed_id(p.id), float(p.score), dict(p.payload or {}) if root is None else root_payload(root)) for p in found]

        if self.delta is None:
            return hits(self.base, None)
        masked: set[Any] = self.masked_of(root)
        merged = hits(self.delta, None) + hits(self.base, [HasIdCondition(point_ids=masked)] if masked else None)
        return sorted(merged, key=lambda h: -h.score)[:k]

    def count(self) -> int:
        from qdrant_edge import CountRequest

        total = int(self.base.count(CountRequest(exact=True)))
        if self.delta is not None:
            total += int(self.delta.count(CountRequest(exact=True))) - len(self.masked_ids)
        return total

    def close(self) -> None:
        for shard in (self._base, self.delta):
            if shard is not None:
                shard.close()


def carry_over(folder: Path, live: str, generation: str, name: str, layout: Layout, compact_ratio: float, open_shard: OpenShard,
               originals: Originals | None, seal_points: int) -> Layout:
    """The live generation's graphless collection `name` in `generation`, ready for writes:
    a plain one becomes the base of a new delta; a layered one keeps its base (its delta and
    masked points copied) until they pass `compact_ratio` of it, then is compacted (the live
    delta read through `open_shard`; TurboQuant codes written from `originals`)."""
    own, live_own = folder / generation / name, folder / live / name
    if layout.base == f"{live}/{name}":
        create_shard(own, layout.dim, "delta", hnsw_m=0, datatype=layout.datatype, root_index=not layout.root_map).close()
        write_atomically(masked_path(folder, generation, name), lambda f: np.save(f, _no_masked()))
        return Layout(layout.dim, False, layout.base, layout.base_points, datatype=layout.datatype, root_map=layout.root_map)
    changed = layout.delta_points + layout.masked_points
    if changed <= compact_ratio * max(layout.base_points, 1):
        copy_shard(live_own, own)
        shutil.copy(masked_path(folder, live, name), masked_path(folder, generation, name))
        return layout
    return _compact(folder, live, generation, name, layout, open_shard, originals, seal_points)


def _compact(folder: Path, live: str, generation: str, name: str, layout: Layout, open_shard: OpenShard, originals: Originals | None,
             seal_points: int) -> Layout:
    """A new base: the live base copied, its masked points deleted, the delta's points added
    (sealed every `seal_points` of them, as a build's base is).
    Points are written again from their vectors as read, where the datatype gives them back
    exactly; TurboQuant codes from `originals`, so that the codes are those a build writes."""
    coded = layout.datatype not in EXACT_DATATYPES
    if coded and originals is None:
        raise KgwalkError(f"compacting {name}: its TurboQuant codes must be written from the unrounded vectors, which were not given")
    from qdrant_edge import ScrollRequest, UpdateOperation

    own = folder / generation / name
    copy_shard(folder / layout.base, own)
    merged = load_shard(own, shard_config(layout.dim, "base", 0, layout.datatype))  # sealed by optimize(), like a build's
    masked = np.load(masked_path(folder, live, name))
    if len(masked):
        gone: list[Any] = point_ids(masked[:, 0])
        merged.update(UpdateOperation.delete_points(gone))
    delta = open_shard(f"{live}/{name}")
    offset, unsealed = None, 0
    while True:
        records, offset = delta.scroll(ScrollRequest(offset=offset, limit=_SCROLL_BATCH, with_payload=True, with_vector=True))
        if records:
            vectors = originals(np.array([signed_id(r.id) for r in records], np.int64)) if coded and originals else None
            upsert_records(merged, records, vectors)
            unsealed += len(records)
            if unsealed >= seal_points:
                seal(merged)
                unsealed = 0
        if offset is None:
            break
    delta.close()
    seal(merged)
    points = merged.info().points_count
    merged.close()
    return Layout(layout.dim, False, f"{generation}/{name}", points, datatype=layout.datatype, root_map=layout.root_map)
