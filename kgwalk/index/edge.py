"""The embedded default backend: Qdrant's in-process engine (qdrant-edge-py), with generations.

`EdgeStore` composes four parts, one concern each:
- kgwalk.index.generations: every version of the index is a generation folder `g<NNNNNN>` under
  the store folder; the file CURRENT names the live one and is replaced atomically by `commit`.
  A reader opens the generation CURRENT names and keeps it; the previous generation is kept
  until the next commit, so a reader that opened it just before a commit still finishes. A
  generation's MANIFEST.json records each collection's `Layout`.
- kgwalk.index.layered: a refresh's collection without an HNSW graph (walks) is a shared base
  shard plus this generation's delta shard and masked base points, compacted past
  `compact_ratio`. Collections with an HNSW graph (nodes) are copied whole: they are small.
- kgwalk.index.node_sums: the exact node sums kept beside the node collection (KeepsNodeSums).
- kgwalk.index.qdrant_shards: creating, copying and loading qdrant-edge shards. Qdrant writes
  into every shard it loads, even to search it: a writer loads only the shards of the generation
  it writes; every other shard, and all of a reader's, is loaded from a private copy
  (`PrivateCopies`), so readers never write to the warehouse and can serve it read-only.

Bulk writes. Points are handed to Qdrant with their vectors as memoryview slices (a Python list
of floats costs ~4x more to build than Qdrant takes to store it), and each batch is applied on a
writer thread (Qdrant releases the GIL) while the next batch is prepared. A collection without
an HNSW graph is searched per root through its payload index; a base is sealed into immutable
segments that load from disk on demand (kgwalk.index.qdrant_shards), one every `seal_points`
points as it is written and the last at `finish`; a refresh's delta stays appendable.
"""

from __future__ import annotations

from collections.abc import Collection
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from kgwalk.config import IndexConf
from kgwalk.errors import KgwalkError
from kgwalk.index.base import EXACT_DATATYPES, ROOT_FIELD, Hit, Originals, as_stored, check_query_dim, point_ids, unit
from kgwalk.index.generations import Generations, Layout, write_atomically
from kgwalk.index.layered import NO_ROOT, LayeredCollection, carry_over, masked_path
from kgwalk.index.node_sums import NodeSumFiles
from kgwalk.index.qdrant_shards import PrivateCopies, copy_shard, create_shard, load_shard, seal
from kgwalk.index.root_map import RootChanges, RootMap, empty_root_map, root_map_paths

# A graph collection's HNSW graph is rebuilt once the points written since its last build pass
# this fraction of its points (at least _UNINDEXED_MIN's): until then they are scanned exactly.
_UNINDEXED_RATIO = 0.1
_UNINDEXED_MIN = 100_000


class EdgeStore:
    """Qdrant's in-process engine, one generation folder per version of the index (see the
    module's docstring). `compact_ratio`: a refresh merges a layered collection's delta into a
    new base once its delta and masked points pass this fraction of the base. `seal_points`: a
    base (a build's walks, a compaction's) is sealed in parts of this many points (index.seal_points)."""

    def __init__(self, folder: str | Path, compact_ratio: float = 0.2, vector_datatype: str = "float32", node_sums_min_walks: int = 1,
                 seal_points: int = IndexConf.seal_points) -> None:
        import qdrant_edge  # noqa: F401 - fail here, not mid-build, if it is missing

        self.folder = Path(folder)
        self.compact_ratio = compact_ratio
        self.vector_datatype = vector_datatype  # of collections this store creates
        self.seal_points = seal_points
        self._generations = Generations(self.folder)
        self._sums = NodeSumFiles(self.folder, compact_ratio, node_sums_min_walks)
        self._writer: ThreadPoolExecutor | None = None
        self._pending: Future[Any] | None = None  # the batch of points the writer thread is applying
        self._sealer: ThreadPoolExecutor | None = None
        self._sealing: dict[str, Future[Any]] = {}  # collection: its base being sealed (see finish)
        self._open: dict[str, LayeredCollection] = {}
        self._private = PrivateCopies()  # the shards this store reads but does not write
        self._written: dict[str, int] = {}  # collection: points upserted or deleted by this writer
        self._created: set[str] = set()  # collections this writer created (a build): indexed whole at finish
        self._unsealed: dict[str, int] = {}  # a base this writer writes: points written since its last part was sealed
        self._layouts: dict[str, Layout] | None = None
        self._root_maps: dict[str, RootMap] = {}  # graphless collections' maps, as the generation read keeps them
        self._root_changes: dict[str, RootChanges] = {}  # of graphless collections, applied to their root maps at commit
        self._carried_from: str | None = None  # the live generation a refresh's writer carried its collections over from
        self._generation: str | None = None  # the one this store reads, or writes after begin()
        self._writing = False
        self._reflects: dict[str, dict[str, Any] | None] = {}  # what the generation read was committed with, read once

    # -- generations ---------------------------------------------------------------------
    def live_generation(self) -> str | None:
        return self._generations.live()

    def _gen(self) -> str:
        if self._generation is None:
            self._generation = self.live_generation()
            if self._generation is None:
                raise KgwalkError(f"no index under {self.folder} (run `kgwalk index` first)")
        return self._generation

    def reflects(self) -> dict[str, Any] | None:
        """What the generation this store reads was committed with (the live one before the
        first read, and for a writer)."""
        if self._generation is not None and not self._writing:  # a committed generation's manifest never changes
            if self._generation not in self._reflects:
                self._reflects = {self._generation: (self._generations.manifest(self._generation) or {}).get("reflects")}
            return self._reflects[self._generation]
        gen = self.live_generation()
        return (self._generations.manifest(gen) or {}).get("reflects") if gen else None

    def _read_layouts(self, generation: str) -> dict[str, Layout]:
        manifest = self._generations.manifest(generation)
        if manifest is not None:
            return {name: Layout(**v) for name, v in manifest["collections"].items()}
        # A generation written before layouts were recorded: every collection is plain.
        return {p.name: self._infer_layout(f"{generation}/{p.name}") for p in (self.folder / generation).iterdir() if p.is_dir()}

    def _infer_layout(self, base: str) -> Layout:
        from qdrant_edge import ScrollRequest

        shard = self._open_shard(base)
        try:
            info = shard.info()
            records, _ = shard.scroll(ScrollRequest(limit=1, with_vector=True))
            dim = len(records[0].vector) if records else 0
            return Layout(dim=dim, graph=ROOT_FIELD not in info.payload_schema, base=base, base_points=info.points_count)
        finally:
            shard.close()

    def _open_shard(self, relative: str) -> Any:
        """A shard, by its folder relative to the store folder: loaded in place where this store
        writes it (its own new generation), else from a private copy (see the module's docstring)."""
        if self._writing and relative.startswith(f"{self._gen()}/"):
            return load_shard(self.folder / relative)
        return self._private.load(self.folder / relative)

    def layouts(self) -> dict[str, Layout]:
        """The collections of the generation this store reads (or writes), with their layout."""
        if self._layouts is None:
            self._layouts = self._read_layouts(self._gen())
        return self._layouts

    def begin(self, copy: bool = False, originals: Originals | None = None) -> None:
        self.close()
        live = self.live_generation()
        self._generation = self._generations.start_next()
        layouts: dict[str, Layout] = {}
        self._layouts, self._written, self._created, self._unsealed = layouts, {}, set(), {}
        self._root_changes, self._carried_from = {}, live if copy else None
        self._writing = True
        if copy and live:
            for name, layout in self._read_layouts(live).items():
                layouts[name] = self._carry_over(live, name, layout, originals)

    def _carry_over(self, live: str, name: str, layout: Layout, originals: Originals | None) -> Layout:
        """The live generation's collection `name` in the new generation, ready for writes."""
        gen = self._gen()
        if not layout.graph:
            return carry_over(self.folder, live, gen, name, layout, self.compact_ratio, self._open_shard, originals, self.seal_points)
        # searched globally by HNSW: copied whole; its node sums stay layered
        copy_shard(self.folder / live / name, self.folder / gen / name)
        self._sums.carry_delta(live, gen, name)
        return Layout(layout.dim, True, f"{gen}/{name}", layout.base_points, sums_base=layout.sums_base,
                      sums_base_rows=layout.sums_base_rows, datatype=layout.datatype, unindexed_points=layout.unindexed_points)

    def _wait(self, sealing: str | None = None) -> None:
        """Let the writer thread finish its batch (raising its error): before any other access;
        with `sealing`, that collection's sealing too ("*": every collection's)."""
        futures = [] if self._pending is None else [self._pending]
        futures += [self._sealing.pop(n) for n in list(self._sealing) if sealing in (n, "*")]
        self._pending = None
        errors = []
        for future in futures:  # every one, even after an error: a shard is not closed under a thread using it
            try:
                future.result()
            except Exception as e:  # noqa: PERF203 - at most a handful
                errors.append(e)
        if errors:
            raise errors[0]

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

    def shard_files(self, collections: Collection[str] | None = None) -> list[Path]:
        """Every file of the shards the live generation reads (a layered collection's base in an
        earlier generation's folder included), of `collections` (None: all), to read them into the
        page cache ahead of searches (kgwalk.serve.app.preload)."""
        gen = self._gen()
        layouts = {name: layout for name, layout in self.layouts().items() if collections is None or name in collections}
        folders = {self.folder / layout.base for layout in layouts.values()}
        folders |= {self.folder / gen / name for name in layouts}  # a layered collection's delta
        maps = [path for name, layout in layouts.items() if layout.root_map for path in root_map_paths(self.folder, gen, name).values()]
        return sorted([f for folder in folders if folder.is_dir() for f in folder.rglob("*") if f.is_file()] + maps)

    # -- writing -------------------------------------------------------------------------
    def _require_writing(self) -> None:
        if not self._writing:
            raise RuntimeError("call begin() before writing to the index")

    def create(self, collection: str, dim: int, graph: bool, hnsw_m: int) -> None:
        self._require_writing()
        self._close(collection)
        shard = create_shard(self.folder / self._gen() / collection, dim, "graph" if graph else "base", hnsw_m, self.vector_datatype)
        self.layouts()[collection] = Layout(dim, graph, f"{self._gen()}/{collection}", 0, datatype=self.vector_datatype, root_map=not graph)
        self._created.add(collection)
        self._unsealed.pop(collection, None)
        self._sums.forget(collection)
        self._open[collection] = LayeredCollection.plain(shard)

    def _collection(self, name: str) -> LayeredCollection:
        self._wait(sealing=name)
        if name not in self._open:
            layout = self.layouts().get(name)
            if layout is None:
                raise KgwalkError(f"no index collection {name!r} under {self.folder} (run `kgwalk index` first)")
            self._open[name] = LayeredCollection.load(self.folder, self._gen(), name, layout, self._open_shard, lazy_base=self._writing)
        return self._open[name]

    def upsert(self, collection: str, ids: np.ndarray, vectors: np.ndarray, payloads: list[dict[str, Any]], *,
               replaces: np.ndarray | None = None) -> None:
        from qdrant_edge import Point, UpdateOperation

        self._require_writing()
        # Made while the writer thread applies the previous batch: this is most of the Python time.
        # As given: Qdrant rounds to the collection's datatype as `stored` does (to nearest, ties to even), and a caller
        # that needs the stored values has them from `stored` (rounding here too cost a 1M-edge build 10 s).
        vectors = np.ascontiguousarray(vectors, np.float32)
        flat: Any = vectors.reshape(-1).data  # a memoryview
        dim = vectors.shape[1]
        c = self._collection(collection)
        layout = self.layouts()[collection]
        roots = np.array([p.get(ROOT_FIELD, NO_ROOT) for p in payloads], np.int64)
        kept: list[dict[str, Any] | None] = list(payloads)
        if layout.root_map:  # the roots go to the collection's RootMap, the points carry no payload
            self._root_changes.setdefault(collection, RootChanges()).add(ids, roots)
            kept = [None] * len(payloads)
        points = [Point(id=i, vector=flat[row * dim : (row + 1) * dim], payload=p) for row, (i, p) in enumerate(zip(point_ids(ids), kept))]
        if c.delta is not None:  # a walk point's root (a replaced point keeps its root)
            # a refresh's new walks are no points of the base: asking it for 140K of them at the 10M-edge KG took 11 s
            c.hide_in_base(ids, roots) if replaces is None else c.hide_in_base(ids[replaces], roots[replaces])
        self._written[collection] = self._written.get(collection, 0) + len(points)
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgwalk-index-writer")
        self._pending = self._writer.submit(_apply, c.writable, UpdateOperation.upsert_points(points), self._fills_part(collection, len(points)))

    def _fills_part(self, collection: str, points: int) -> bool:
        """Whether these points fill a part of a base this writer is writing (seal it after them)."""
        if collection not in self._created or self.layouts()[collection].graph:
            return False
        self._unsealed[collection] = self._unsealed.get(collection, 0) + points
        if self._unsealed[collection] < self.seal_points:
            return False
        self._unsealed[collection] = 0
        return True

    def stored(self, collection: str, vectors: np.ndarray) -> np.ndarray:
        return as_stored(vectors, self.layouts()[collection].datatype)

    def keeps_exactly(self, collection: str) -> bool:
        return self.layouts()[collection].datatype in EXACT_DATATYPES

    def delete(self, collection: str, ids: np.ndarray, roots: np.ndarray | None = None, *, present: bool = False) -> None:
        """`roots`: of `ids`, where the caller knows them (else read from the points). `present`:
        the caller knows every id is a point (a layered collection's base is then not asked)."""
        from qdrant_edge import UpdateOperation

        self._require_writing()
        if not len(ids):
            return
        c = self._collection(collection)
        if c.delta is not None:  # before the delta loses them: with `present`, it tells its points from the base's
            c.hide_in_base(ids, roots, present=present)
        gone: list[Any] = point_ids(ids)
        c.writable.update(UpdateOperation.delete_points(gone))
        if self.layouts()[collection].root_map:
            self._root_changes.setdefault(collection, RootChanges()).remove(ids)
        self._written[collection] = self._written.get(collection, 0) + len(ids)

    # -- node sums (kgwalk.index.node_sums) ------------------------------------------------
    def has_sums(self, collection: str) -> bool:
        return self.layouts()[collection].sums_base is not None

    def read_sums(self, collection: str, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fixed-point sums [len(roots), dim], walk counts) of these roots' node vectors in the
        generation this store reads (before this writer's own `write_sums`); zeros for roots
        without walks."""
        return self._sums.read(self._gen(), collection, self.layouts()[collection], roots)

    def write_sums(self, collection: str, roots: np.ndarray, sums: np.ndarray, walks: np.ndarray) -> None:
        """Set these roots' node sums (walks 0: the root has no node any more); kept at `commit`."""
        self._require_writing()
        self._sums.write(collection, roots, sums, walks)

    def keeps_sum(self, walks: np.ndarray) -> np.ndarray:
        return self._sums.keeps(walks)

    def finish(self, collection: str) -> None:
        """Make the collection durable; build its HNSW graph where one is due; seal a graphless
        collection this writer created (a base, see kgwalk.index.qdrant_shards). A refresh's few
        changed nodes land unindexed beside the copied graph and are searched exactly (a scan)
        until they pass `_UNINDEXED_RATIO` of the collection; then `optimize` gives them a graph
        of their own (the graph collection's optimizer settings, see shard_config)."""
        shard = self._collection(collection).writable  # after the writer thread's last batch
        layout = self.layouts()[collection]
        layout.unindexed_points += self._written.pop(collection, 0)
        if not layout.graph and collection in self._created:
            # Sealing a base holds no GIL and takes minutes at scale (7.5 us a point): it runs on its
            # own thread while the caller goes on (a build writes the node collection meanwhile)
            # and is waited for before the collection is touched again, and at commit.
            if self._sealer is None:
                self._sealer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgwalk-index-sealer")
            self._sealing[collection] = self._sealer.submit(seal, shard)
            layout.unindexed_points = 0
            return
        if not layout.graph or collection in self._created or layout.unindexed_points > _UNINDEXED_RATIO * max(layout.base_points, _UNINDEXED_MIN):
            shard.optimize()
            layout.unindexed_points = 0
        shard.flush()

    def commit(self, reflects: dict[str, Any] | None = None) -> None:
        self._require_writing()
        self._wait(sealing="*")
        gen = self._gen()
        layouts = self.layouts()
        for name, c in self._open.items():
            c.writable.flush()
            layout = layouts[name]
            if c.delta is None:
                layout.base_points = c.base.info().points_count
            else:
                layout.delta_points, layout.masked_points = c.delta.info().points_count, len(c.masked_ids)
                pairs = c.masked_pairs()
                write_atomically(masked_path(self.folder, gen, name), lambda f: np.save(f, pairs))
        self._sums.commit(gen, layouts)
        for name, layout in layouts.items():
            if layout.root_map:
                self._updated_root_map(name).save(self.folder, gen, name)
        self._generations.write_manifest(gen, layouts, reflects)
        self.close()
        self._generations.publish(gen)  # readers switch
        self._writing = False

    # -- reading -------------------------------------------------------------------------
    def follow_live(self) -> None:
        if not self._writing and self._generation is not None and self.live_generation() != self._generation:
            self.close()
            self._generation, self._layouts = None, None
            self._root_maps = {}

    def retrieve(self, collection: str, ids: np.ndarray, payloads: bool = True) -> tuple[np.ndarray, np.ndarray, list[dict[str, Any]]]:
        got, vectors, found = self._collection(collection).retrieve(ids, payloads)
        if payloads and self.layouts()[collection].root_map:  # a walk point's payload is its root, kept in the map
            found = [{ROOT_FIELD: int(r)} for r in self._root_map(collection).roots_of(got, NO_ROOT)]
        return got, vectors, found

    def search(self, collection: str, vector: np.ndarray, k: int, root: int | None = None) -> list[Hit]:
        from qdrant_edge import Query

        c = self._collection(collection)
        layout = self.layouts()[collection]
        check_query_dim(collection, layout.dim, vector)
        if not layout.root_map:
            return c.search(Query.Nearest(unit(vector)), k, root)
        root_map = self._root_map(collection)
        hits = c.search(Query.Nearest(unit(vector)), k, root, root_map.walks_of(int(root)) if root is not None else None)
        if root is None:  # a search across roots: each hit's payload is its root, as the map says
            for hit, r in zip(hits, root_map.roots_of(np.array([h.id for h in hits], np.int64), NO_ROOT)):
                hit.payload = {ROOT_FIELD: int(r)}
        return hits

    def _root_map(self, collection: str) -> RootMap:
        """The RootMap of a graphless collection in the generation this store reads (mapped once)."""
        if collection not in self._root_maps:
            self._root_maps[collection] = self._saved_root_map(self._gen(), collection)
        return self._root_maps[collection]

    def _saved_root_map(self, generation: str, collection: str) -> RootMap:
        found = RootMap.load(self.folder, generation, collection)
        if found is None:
            raise KgwalkError(f"the index generation {generation} lacks the root map of {collection}: run `kgwalk index`")
        return found

    def _updated_root_map(self, collection: str) -> RootMap:
        """What a writer's commit keeps: the map it started from (empty for a collection it
        created; else the live generation's) with its deletions and upserts, in their order."""
        current = empty_root_map() if collection in self._created or self._carried_from is None else self._saved_root_map(self._carried_from, collection)
        changes = self._root_changes.pop(collection, None)
        return current if changes is None else changes.applied_to(current)

    def count(self, collection: str) -> int:
        return self._collection(collection).count()

    def _close(self, collection: str) -> None:
        c = self._open.pop(collection, None)
        if c is not None:
            c.close()

    def close(self) -> None:
        try:
            self._wait(sealing="*")
        finally:
            for name in list(self._open):
                self._close(name)
            self._private.close()  # after the shards loaded from it
            for executor in (self._writer, self._sealer):
                if executor is not None:
                    executor.shutdown()
            self._writer = self._sealer = None


def _apply(shard: Any, update: Any, then_seal: bool) -> None:
    """One batch of writes, on the writer thread; sealing the part it fills."""
    shard.update(update)
    if then_seal:
        seal(shard)
