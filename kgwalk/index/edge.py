"""The embedded default backend: Qdrant's in-process engine (qdrant-edge-py), with generations.

Every version of the index is a generation folder `g<NNNNNN>` under the store folder; the file
CURRENT names the live one and is replaced atomically by `commit`. A reader opens the generation
CURRENT names and keeps it; the previous generation is kept until the next commit, so a reader
that opened it just before a commit still finishes.

Layered collections. A refresh must not copy the live walks collection (12 GiB for 5.9M walks)
to change a fraction of a percent of it. So in a generation written by a refresh, a collection
without an HNSW graph (walks: always searched within one root) is layered: an immutable *base*
shard, shared with the generation that wrote it, plus this generation's *delta* shard (points
written since the base) and its *masked* base points (replaced or deleted since). Reads merge
them into exactly the points a plain collection would hold. Once delta and masked points pass
`compact_ratio` of the base, the next refresh merges them into a new base: one copy, amortised
over many refreshes. Collections with an HNSW graph (nodes) are copied whole: they are small.

Node sums. A node vector is the normalized sum of its root's walk vectors, in fixed point (see
kgwalk.index.build.NodeSums). The store keeps those exact sums beside the node collection, so a
refresh updates a node by adding its new walks' vectors and subtracting its vanished ones, and
need not read every walk of the root. They are layered too: a base file written by a build (or a
compaction), `<name>.sums.npy` with `<name>.sums.roots.npy`, plus a generation's
`<name>.sums-delta.npz` of the roots changed since.

A generation's MANIFEST.json records each collection's layout; `<name>.masked.npy` holds the
masked (id, root) pairs of a layered one.

Bulk writes. Points are handed to Qdrant with their vectors as memoryview slices (a Python list
of floats costs ~4x more to build than Qdrant takes to store it), and each batch is applied on a
writer thread (Qdrant releases the GIL) while the next batch is prepared. A collection without
an HNSW graph is never converted by the optimizer (indexing_threshold 0): its one appendable
segment is searched per root through the payload index just as fast (bench/results/index.md).
"""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgwalk.errors import KgwalkError
from kgwalk.index.base import (
    ROOT_FIELD,
    Hit,
    as_stored,
    check_query_dim,
    order_records,
    point_ids,
    signed_id,
    unit,
)

_MANIFEST = "MANIFEST.json"
_RETRIEVE_BATCH = 1024
_SCROLL_BATCH = 4096
_NO_ROOT = -1  # masked points whose payload has no root (only reachable by searches without one)
# A graph collection's HNSW graph is rebuilt once the points written since its last build pass
# this fraction of its points (at least _UNINDEXED_MIN's): until then they are scanned exactly.
_UNINDEXED_RATIO = 0.1
_UNINDEXED_MIN = 100_000


@dataclass
class Layout:
    """One collection of a generation. `base` is its shard folder relative to the store folder:
    this generation's own `<generation>/<name>` for a plain collection, an earlier generation's
    for a layered one, whose own folder then holds the delta."""

    dim: int
    graph: bool
    base: str
    base_points: int
    delta_points: int = 0
    masked_points: int = 0
    sums_base: str | None = None  # `<generation>/<name>` of the base node-sums files, if kept
    sums_base_rows: int = 0
    datatype: str = "float32"  # of the vectors (generations written before it was recorded: float32)
    unindexed_points: int = 0  # graph: points written since its HNSW graph was last built (see finish)


class _Collection:
    """The open shards of one collection and its masked base points (sorted by id)."""

    def __init__(self, base: Any, delta: Any | None, masked: np.ndarray) -> None:
        self.base, self.delta = base, delta
        order = np.argsort(masked[:, 0])
        self.masked_ids, self.masked_roots = masked[order, 0], masked[order, 1]
        self._by_root: dict[int, set[int]] | None = None

    @property
    def writable(self) -> Any:
        return self.delta if self.delta is not None else self.base

    def is_masked(self, ids: np.ndarray) -> np.ndarray:
        pos = np.minimum(np.searchsorted(self.masked_ids, ids), max(len(self.masked_ids) - 1, 0))
        return (self.masked_ids[pos] == ids) if len(self.masked_ids) else np.zeros(len(ids), bool)

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

    def close(self) -> None:
        for shard in (self.base, self.delta):
            if shard is not None:
                shard.close()


def _shard_config(dim: int, graph: bool, hnsw_m: int, datatype: str):
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


def _copy_shard(source: Path, target: Path) -> None:
    """A copy of a shard folder that readers may have open: Qdrant writes `.atomicwrite*` temporary
    files beside a file it replaces, even when loading a shard, and renames them away, so they are
    never part of the shard and may vanish while the copy runs."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".atomicwrite*"))


def _create_shard(path: Path, dim: int, graph: bool, hnsw_m: int, datatype: str):
    from qdrant_edge import EdgeShard, IntegerIndexParams, UpdateOperation

    shutil.rmtree(path, ignore_errors=True)
    shard = EdgeShard.create(str(path), _shard_config(dim, graph, hnsw_m, datatype))
    if not graph:  # matched by value only: no range index
        shard.update(UpdateOperation.create_field_index(ROOT_FIELD, IntegerIndexParams(lookup=True, range=False)))
    return shard


def _write_atomically(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class EdgeStore:
    """Qdrant's in-process engine, one generation folder per version of the index (see the
    module's docstring). `compact_ratio`: a refresh merges a layered collection's delta into a
    new base once its delta and masked points pass this fraction of the base."""

    def __init__(self, folder: str | Path, compact_ratio: float = 0.2, vector_datatype: str = "float32") -> None:
        import qdrant_edge  # noqa: F401 - fail here, not mid-build, if it is missing

        self.folder = Path(folder)
        self.compact_ratio = compact_ratio
        self.vector_datatype = vector_datatype  # of collections this store creates
        self._writer: ThreadPoolExecutor | None = None
        self._pending: Future | None = None  # the batch of points the writer thread is applying
        self._open: dict[str, _Collection] = {}
        self._written: dict[str, int] = {}  # collection: points upserted or deleted by this writer
        self._created: set[str] = set()  # collections this writer created (a build): indexed whole at finish
        self._sums: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # collection: (roots, [walks, sums...]) written
        self._layouts: dict[str, Layout] | None = None
        self._generation: str | None = None  # the one this store reads, or writes after begin()
        self._writing = False

    # -- generations ---------------------------------------------------------------------
    def live_generation(self) -> str | None:
        current = self.folder / "CURRENT"
        return json.loads(current.read_text())["generation"] if current.exists() else None

    def _gen(self) -> str:
        if self._generation is None:
            self._generation = self.live_generation()
            if self._generation is None:
                raise KgwalkError(f"no index under {self.folder} (run `kgwalk index` first)")
        return self._generation

    def _masked_path(self, generation: str, name: str) -> Path:
        return self.folder / generation / f"{name}.masked.npy"

    def _sums_delta_path(self, generation: str, name: str) -> Path:
        return self.folder / generation / f"{name}.sums-delta.npz"

    def _manifest(self, generation: str) -> dict[str, Any] | None:
        path = self.folder / generation / _MANIFEST
        return json.loads(path.read_text()) if path.exists() else None

    def reflects(self) -> dict[str, Any] | None:
        """What the generation this store reads was committed with (the live one before the
        first read, and for a writer)."""
        gen = self._generation if self._generation is not None and not self._writing else self.live_generation()
        return (self._manifest(gen) or {}).get("reflects") if gen else None

    def _read_layouts(self, generation: str) -> dict[str, Layout]:
        manifest = self._manifest(generation)
        if manifest is not None:
            return {name: Layout(**v) for name, v in manifest["collections"].items()}
        # A generation written before layouts were recorded: every collection is plain.
        return {p.name: self._infer_layout(f"{generation}/{p.name}") for p in (self.folder / generation).iterdir() if p.is_dir()}

    def _infer_layout(self, base: str) -> Layout:
        from qdrant_edge import EdgeShard, ScrollRequest

        shard = EdgeShard.load(str(self.folder / base))
        try:
            info = shard.info()
            records, _ = shard.scroll(ScrollRequest(limit=1, with_vector=True))
            dim = len(records[0].vector) if records else 0
            return Layout(dim=dim, graph=ROOT_FIELD not in info.payload_schema, base=base, base_points=info.points_count)
        finally:
            shard.close()

    def layouts(self) -> dict[str, Layout]:
        """The collections of the generation this store reads (or writes), with their layout."""
        if self._layouts is None:
            self._layouts = self._read_layouts(self._gen())
        return self._layouts

    def begin(self, copy: bool = False) -> None:
        self.close()
        live = self.live_generation()
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in self.folder.glob("g*"):  # leftovers of a writer that crashed before its commit
            if path.is_dir() and (live is None or path.name > live):
                shutil.rmtree(path)
        self._generation = f"g{int(live[1:]) + 1 if live else 1:06d}"
        (self.folder / self._generation).mkdir()
        self._layouts, self._written, self._created = {}, {}, set()
        self._writing = True
        if copy and live:
            for name, layout in self._read_layouts(live).items():
                self._layouts[name] = self._carry_over(live, name, layout)

    def _carry_over(self, live: str, name: str, layout: Layout) -> Layout:
        """The live generation's collection `name` in the new generation, ready for writes."""
        own, live_own = self.folder / self._gen() / name, self.folder / live / name
        if layout.graph:  # searched globally by HNSW: copied whole; its node sums stay layered
            _copy_shard(live_own, own)
            if self._sums_delta_path(live, name).exists():
                shutil.copy(self._sums_delta_path(live, name), self._sums_delta_path(self._gen(), name))
            return Layout(layout.dim, True, f"{self._gen()}/{name}", layout.base_points, sums_base=layout.sums_base,
                          sums_base_rows=layout.sums_base_rows, datatype=layout.datatype, unindexed_points=layout.unindexed_points)
        if layout.base == f"{live}/{name}":  # plain: it becomes the base, and a delta starts
            _create_shard(own, layout.dim, graph=False, hnsw_m=0, datatype=layout.datatype).close()
            _write_atomically(self._masked_path(self._gen(), name), lambda f: np.save(f, np.zeros((0, 2), np.int64)))
            return Layout(layout.dim, False, layout.base, layout.base_points, datatype=layout.datatype)
        changed = layout.delta_points + layout.masked_points
        if changed <= self.compact_ratio * max(layout.base_points, 1):
            _copy_shard(live_own, own)
            shutil.copy(self._masked_path(live, name), self._masked_path(self._gen(), name))
            return layout
        return self._compact(live, name, layout)

    def _compact(self, live: str, name: str, layout: Layout) -> Layout:
        """A new base: the live base copied, its masked points deleted, the delta's points added."""
        from qdrant_edge import EdgeShard, ScrollRequest, UpdateOperation

        own = self.folder / self._gen() / name
        _copy_shard(self.folder / layout.base, own)
        merged = EdgeShard.load(str(own))
        masked = np.load(self._masked_path(live, name))
        if len(masked):
            merged.update(UpdateOperation.delete_points(point_ids(masked[:, 0])))
        delta = EdgeShard.load(str(self.folder / live / name))
        offset = None
        while True:
            records, offset = delta.scroll(ScrollRequest(offset=offset, limit=_SCROLL_BATCH, with_payload=True, with_vector=True))
            if records:
                self._upsert_records(merged, records)
            if offset is None:
                break
        delta.close()
        merged.optimize()
        merged.flush()
        points = merged.info().points_count
        merged.close()
        return Layout(layout.dim, False, f"{self._gen()}/{name}", points, datatype=layout.datatype)

    @staticmethod
    def _upsert_records(shard: Any, records: list) -> None:
        from qdrant_edge import Point, UpdateOperation

        shard.update(UpdateOperation.upsert_points([Point(id=r.id, vector=r.vector, payload=r.payload) for r in records]))

    def _wait(self) -> None:
        """Let the writer thread finish its batch (raising its error): before any other access."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def describe(self) -> str:
        """One line on the live generation's collections, for `kgwalk status`."""
        parts = []
        for name, layout in self.layouts().items():
            if layout.base == f"{self._gen()}/{name}":
                parts.append(f"{name} {layout.base_points:,} points")
            else:
                changed = (layout.delta_points + layout.masked_points) / max(layout.base_points, 1)
                parts.append(f"{name} base {layout.base.split('/')[0]} ({layout.base_points:,} points) + delta {layout.delta_points:,}, "
                             f"masked {layout.masked_points:,} ({changed:.1%}; compacts past {self.compact_ratio:.0%})")
        return f"generation {self._gen()}: " + "; ".join(parts)

    # -- writing -------------------------------------------------------------------------
    def _require_writing(self) -> None:
        if not self._writing:
            raise RuntimeError("call begin() before writing to the index")

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        self._require_writing()
        self._close(collection)
        datatype = "float32" if graph else self.vector_datatype  # see kgwalk.index.store: nodes stay exact
        shard = _create_shard(self.folder / self._gen() / collection, dim, graph, hnsw_m, datatype)
        self.layouts()[collection] = Layout(dim, graph, f"{self._gen()}/{collection}", 0, datatype=datatype)
        self._created.add(collection)
        self._sums.pop(collection, None)
        self._open[collection] = _Collection(shard, None, np.zeros((0, 2), np.int64))

    def _collection(self, name: str) -> _Collection:
        self._wait()
        if name not in self._open:
            from qdrant_edge import EdgeShard

            layout = self.layouts().get(name)
            if layout is None:
                raise KgwalkError(f"no index collection {name!r} under {self.folder} (run `kgwalk index` first)")
            base = EdgeShard.load(str(self.folder / layout.base))
            own = f"{self._gen()}/{name}"
            if layout.base == own:
                self._open[name] = _Collection(base, None, np.zeros((0, 2), np.int64))
            else:
                masked = np.load(self._masked_path(self._gen(), name))
                self._open[name] = _Collection(base, EdgeShard.load(str(self.folder / own)), masked)
        return self._open[name]

    def _hide_in_base(self, c: _Collection, ids: np.ndarray, roots: np.ndarray | None) -> None:
        """Mask the base points among `ids` that are not masked yet: they are replaced or deleted.
        `roots` (of `ids`, where the caller knows them) spare reading the base points' payloads:
        on a base of millions of points that read costs more than the rest of a small refresh."""
        ids = np.asarray(ids, np.int64)
        ids, first = np.unique(ids, return_index=True)
        known = None if roots is None else np.asarray(roots, np.int64)[first]
        fresh = ~c.is_masked(ids)
        ids, known = ids[fresh], None if known is None else known[fresh]
        for start in range(0, len(ids), _RETRIEVE_BATCH):
            part = ids[start : start + _RETRIEVE_BATCH]
            records = c.base.retrieve(point_ids=point_ids(part), with_payload=known is None, with_vector=False)
            if not records:
                continue
            found = np.array([r.id for r in records], np.uint64).view(np.int64)
            if known is None:
                found_roots = np.array([(r.payload or {}).get(ROOT_FIELD, _NO_ROOT) for r in records], np.int64)
            else:  # `part` is sorted: each found id's root by position
                found_roots = known[start : start + _RETRIEVE_BATCH][np.searchsorted(part, found)]
            c.mask(found, found_roots)

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]]) -> None:
        from qdrant_edge import Point, UpdateOperation

        self._require_writing()
        # Made while the writer thread applies the previous batch: this is most of the Python time.
        vectors = np.ascontiguousarray(self.stored(collection, vectors))
        dim, flat = vectors.shape[1], memoryview(vectors.reshape(-1))
        points = [Point(id=i, vector=flat[row * dim : (row + 1) * dim], payload=p) for row, (i, p) in enumerate(zip(point_ids(ids), payloads))]
        c = self._collection(collection)
        if c.delta is not None:  # a walk point's root is its payload's (a replaced point keeps its root)
            self._hide_in_base(c, ids, np.array([p.get(ROOT_FIELD, _NO_ROOT) for p in payloads], np.int64))
        self._written[collection] = self._written.get(collection, 0) + len(points)
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgwalk-index-writer")
        self._pending = self._writer.submit(c.writable.update, UpdateOperation.upsert_points(points))

    def stored(self, collection: str, vectors: np.ndarray) -> np.ndarray:
        return as_stored(vectors, self.layouts()[collection].datatype)

    def delete(self, collection: str, ids: np.ndarray, roots: np.ndarray | None = None) -> None:
        """`roots`: of `ids`, where the caller knows them (else read from the points)."""
        from qdrant_edge import UpdateOperation

        self._require_writing()
        if not len(ids):
            return
        c = self._collection(collection)
        c.writable.update(UpdateOperation.delete_points(point_ids(ids)))
        self._written[collection] = self._written.get(collection, 0) + len(ids)
        if c.delta is not None:
            self._hide_in_base(c, ids, roots)

    # -- node sums -----------------------------------------------------------------------
    def has_sums(self, collection: str) -> bool:
        return self.layouts()[collection].sums_base is not None

    def _sums_delta(self, generation: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        path = self._sums_delta_path(generation, name)
        if not path.exists():
            return np.zeros(0, np.int64), np.zeros((0, 0), np.int64)
        with np.load(path) as f:
            return f["roots"], f["values"]

    def read_sums(self, collection: str, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fixed-point sums [len(roots), dim], walk counts) of these roots' node vectors in the
        generation this store reads (before this writer's own `write_sums`); zeros for roots
        without walks."""
        layout = self.layouts()[collection]
        roots = np.asarray(roots, np.int64)
        values = np.zeros((len(roots), layout.dim + 1), np.int64)  # walks, then the sums
        base_roots = np.load(self.folder / f"{layout.sums_base}.sums.roots.npy")
        base = np.load(self.folder / f"{layout.sums_base}.sums.npy", mmap_mode="r")
        for known, table in ((base_roots, base), self._sums_delta(self._gen(), collection)):  # the delta wins
            if len(known):
                pos = np.minimum(np.searchsorted(known, roots), len(known) - 1)
                hit = np.flatnonzero(known[pos] == roots)
                order = np.argsort(pos[hit])  # rows in file order: sequential reads of the mmap
                values[hit[order]] = table[pos[hit][order]]
        return values[:, 1:], values[:, 0]

    def write_sums(self, collection: str, roots: np.ndarray, sums: np.ndarray, walks: np.ndarray) -> None:
        """Set these roots' node sums (walks 0: the root has no node any more); kept at `commit`."""
        self._require_writing()
        rows = np.concatenate([np.asarray(walks, np.int64)[:, None], sums], axis=1)
        old_roots, old_rows = self._sums.get(collection, (np.zeros(0, np.int64), np.zeros((0, rows.shape[1]), np.int64)))
        roots, rows = np.concatenate([roots, old_roots]), np.concatenate([rows, old_rows])
        roots, first = np.unique(roots, return_index=True)  # the latest write of a root wins
        self._sums[collection] = roots, rows[first]

    def _commit_sums(self, name: str, layout: Layout) -> None:
        """The roots written in this generation join its delta, or a new base once the delta
        passes `compact_ratio` of the base (always, for a build's new collection)."""
        roots, rows = self._sums.pop(name)
        delta_roots, delta_rows = self._sums_delta(self._gen(), name)
        if len(delta_roots):
            keep = ~np.isin(delta_roots, roots)
            roots, rows = np.concatenate([roots, delta_roots[keep]]), np.concatenate([rows, delta_rows[keep]])
        order = np.argsort(roots)
        roots, rows = roots[order], rows[order]
        if layout.sums_base is not None and len(roots) <= self.compact_ratio * max(layout.sums_base_rows, 1):
            _write_atomically(self._sums_delta_path(self._gen(), name), lambda f: np.savez(f, roots=roots, values=rows))
            return
        if layout.sums_base is not None:  # fold the base in: the delta's rows win
            base_roots = np.load(self.folder / f"{layout.sums_base}.sums.roots.npy")
            keep = ~np.isin(base_roots, roots)
            base = np.load(self.folder / f"{layout.sums_base}.sums.npy", mmap_mode="r")
            roots, rows = np.concatenate([roots, base_roots[keep]]), np.concatenate([rows, base[keep]])
            order = np.argsort(roots)
            roots, rows = roots[order], rows[order]
        alive = rows[:, 0] > 0
        prefix = self.folder / self._gen() / name
        _write_atomically(Path(f"{prefix}.sums.roots.npy"), lambda f: np.save(f, roots[alive]))
        _write_atomically(Path(f"{prefix}.sums.npy"), lambda f: np.save(f, rows[alive]))
        self._sums_delta_path(self._gen(), name).unlink(missing_ok=True)
        layout.sums_base, layout.sums_base_rows = f"{self._gen()}/{name}", int(alive.sum())

    def finish(self, collection: str) -> None:
        """Make the collection durable; build its HNSW graph where one is due. A refresh's few
        changed nodes land unindexed beside the copied graph and are searched exactly (a scan);
        rebuilding the graph for them cost 12 s of a 0.1% refresh of a 390K-node index, so it
        waits until the unindexed points pass `_UNINDEXED_RATIO` of the collection."""
        shard = self._collection(collection).writable  # after the writer thread's last batch
        layout = self.layouts()[collection]
        layout.unindexed_points += self._written.pop(collection, 0)
        if not layout.graph or collection in self._created or layout.unindexed_points > _UNINDEXED_RATIO * max(layout.base_points, _UNINDEXED_MIN):
            shard.optimize()
            layout.unindexed_points = 0
        shard.flush()

    def commit(self, reflects: dict[str, Any] | None = None) -> None:
        self._require_writing()
        self._wait()
        gen = self.folder / self._gen()
        layouts = self.layouts()
        for name, c in self._open.items():
            c.writable.flush()
            layout = layouts[name]
            if c.delta is None:
                layout.base_points = c.base.info().points_count
            else:
                layout.delta_points, layout.masked_points = c.delta.info().points_count, len(c.masked_ids)
                _write_atomically(self._masked_path(self._gen(), name), lambda f, c=c: np.save(f, c.masked_pairs()))
        for name in list(self._sums):
            self._commit_sums(name, layouts[name])
        manifest = {"collections": {n: asdict(v) for n, v in layouts.items()}, "reflects": reflects}
        _write_atomically(gen / _MANIFEST, lambda f: f.write(json.dumps(manifest, indent=1).encode()))
        self.close()
        previous = self.live_generation()
        _write_atomically(self.folder / "CURRENT", lambda f: f.write(json.dumps({"generation": self._generation}).encode()))  # readers switch
        self._drop_unreferenced(keep={self._gen(), previous})
        self._writing = False

    def _drop_unreferenced(self, keep: set[str | None]) -> None:
        """Delete old generations, except the shards that a kept generation uses as its base."""
        used = set()
        for gen in keep:  # a generation without a manifest has only plain collections: nothing outside it
            manifest = self._manifest(gen) if gen else None
            if manifest is not None:
                for v in manifest["collections"].values():
                    used.add(v["base"])
                    if v.get("sums_base"):
                        used |= {f"{v['sums_base']}.sums.npy", f"{v['sums_base']}.sums.roots.npy"}
        for folder in self.folder.glob("g*"):
            if not folder.is_dir() or folder.name in keep:
                continue
            for path in folder.iterdir():
                if f"{folder.name}/{path.name}" not in used:
                    shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
            if not any(folder.iterdir()):
                folder.rmdir()

    # -- reading -------------------------------------------------------------------------
    def follow_live(self) -> None:
        if not self._writing and self._generation is not None and self.live_generation() != self._generation:
            self.close()
            self._generation, self._layouts = None, None

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        c = self._collection(collection)
        ids = np.asarray(ids, np.int64)

        def records(shard: Any, wanted: np.ndarray) -> list[tuple]:
            return [(r.id, r.vector, r.payload) for r in shard.retrieve(point_ids=point_ids(wanted), with_payload=payloads, with_vector=True)]

        found = records(c.writable, ids)
        if c.delta is not None:
            rest = ids[~np.isin(ids, np.array([r[0] for r in found], np.uint64).view(np.int64)) & ~c.is_masked(ids)]
            if len(rest):
                found += records(c.base, rest)
        return order_records(ids, found)

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        from qdrant_edge import (
            FieldCondition,
            Filter,
            HasIdCondition,
            MatchValue,
            Query,
            QueryRequest,
        )

        c = self._collection(collection)
        check_query_dim(collection, self.layouts()[collection].dim, vector)
        must = None if root is None else [FieldCondition(key=ROOT_FIELD, match=MatchValue(value=int(root)))]
        query = Query.Nearest(unit(vector))

        def hits(shard: Any, must_not: list | None) -> list[Hit]:
            flt = Filter(must=must, must_not=must_not) if must or must_not else None
            return [Hit(signed_id(p.id), float(p.score), dict(p.payload or {}))
                    for p in shard.query(QueryRequest(limit=k, query=query, filter=flt, with_payload=True))]

        if c.delta is None:
            return hits(c.base, None)
        masked = c.masked_of(root)
        merged = hits(c.delta, None) + hits(c.base, [HasIdCondition(point_ids=masked)] if masked else None)
        return sorted(merged, key=lambda h: -h.score)[:k]

    def count(self, collection: str) -> int:
        from qdrant_edge import CountRequest

        c = self._collection(collection)
        total = int(c.base.count(CountRequest(exact=True)))
        if c.delta is not None:
            total += int(c.delta.count(CountRequest(exact=True))) - len(c.masked_ids)
        return total

    def _close(self, collection: str) -> None:
        c = self._open.pop(collection, None)
        if c is not None:
            c.close()

    def close(self) -> None:
        try:
            self._wait()
        finally:
            for name in list(self._open):
                self._close(name)
            if self._writer is not None:
                self._writer.shutdown()
                self._writer = None
