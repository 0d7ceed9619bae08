"""The qdrant-edge adapter: creating, copying and loading one shard folder, opening one for
reading only, and bulk upserts. Every use of the qdrant_edge package's shard lifecycle is here;
kgwalk.index.edge composes it."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal

import numpy as np

from kgwalk.errors import KgwalkError
from kgwalk.index.base import ROOT_FIELD
from kgwalk.storage import link_refusal


ShardKind = Literal["graph", "base", "delta"]
# Qdrant merges a shard's segments past this many: a base's sealed parts (index.seal_points) never
# reach it (a 100M-edge KG's 640M walks are 160 parts of the default 4M points).
_BASE_SEGMENTS = 1024


def shard_config(dim: int, kind: ShardKind, hnsw_m: int, datatype: str) -> Any:
    """`graph`: searched globally through an HNSW graph (nodes). `base` and `delta`: no graph,
    searched within one root through the root's payload index (walks). A base is written once
    (a build, a compaction), and `seal` makes it, part by part, immutable segments whose id map,
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
    coded = {"float16": VectorStorageDatatype.Float16, "turbo8": VectorStorageDatatype.Turbo8,
             "turbo4": VectorStorageDatatype.Turbo4}  # type: ignore[attr-defined]  # qdrant-edge 0.9's stub omits it
    if datatype in coded:  # dot product of unit vectors: Qdrant keeps them as given, or their codes (see kgwalk.index.store)
        vectors = EdgeVectorParams(size=dim, distance=Distance.Dot, datatype=coded[datatype], memory=memory)
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
    elif kind == "base":  # indexing_threshold in KB: 1 converts every segment on `optimize`
        # Written in parts, each sealed as it fills (`seal`): never merged back into one segment,
        # which would hold every point's memory at once again.
        optimizers = EdgeOptimizersConfig(indexing_threshold=1, default_segment_number=_BASE_SEGMENTS)
    else:  # 0: never converted
        optimizers = EdgeOptimizersConfig(indexing_threshold=0)
    # No WAL: a generation that was not committed is thrown away, never recovered.
    return EdgeConfig(vectors=vectors, hnsw_config=hnsw, optimizers=optimizers, wal_enabled=False,
                      payload_memory=memory, id_tracker_memory=memory)


def copy_shard(source: Path, target: Path) -> None:
    """A copy of a shard folder that readers may have open: Qdrant writes `.atomicwrite*` temporary
    files beside a file it replaces, even when loading a shard, and renames them away, so they are
    never part of the shard and may vanish while the copy runs."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".atomicwrite*"))


def create_shard(path: Path, dim: int, kind: ShardKind, hnsw_m: int, datatype: str, root_index: bool = False) -> Any:
    """`root_index`: a graphless shard whose points carry their root as a payload (an index
    built before kgwalk.index.root_map) indexes it."""
    from qdrant_edge import EdgeShard, IntegerIndexParams, Memory, UpdateOperation

    shutil.rmtree(path, ignore_errors=True)
    shard = EdgeShard.create(str(path), shard_config(dim, kind, hnsw_m, datatype))
    if kind != "graph" and root_index:  # matched by value only: no range index; on disk once sealed
        shard.update(UpdateOperation.create_field_index(ROOT_FIELD, IntegerIndexParams(lookup=True, range=False, memory=Memory.Cold)))
    return shard


def seal(shard: Any) -> None:
    """Convert a base's writable segment into an immutable one on disk, and free the memory it
    held: Qdrant lets go of it at `flush`, not at `optimize`."""
    shard.optimize()
    shard.flush()


def load_shard(path: Path, config: Any = None) -> Any:
    """`config` (a `shard_config`) replaces the one the shard was created with, e.g. to seal a
    copy of a base written before bases were sealed."""
    from qdrant_edge import EdgeShard

    return EdgeShard.load(str(path), config)


def upsert_records(shard: Any, records: list[Any], vectors: np.ndarray | None = None) -> None:
    """Write records read from another shard (id, vector, payload) into `shard`; with
    `vectors` (a row per record) in place of theirs."""
    from qdrant_edge import Point, UpdateOperation

    rows = [r.vector for r in records] if vectors is None else [v.tolist() for v in np.asarray(vectors, np.float32)]
    shard.update(UpdateOperation.upsert_points([Point(id=r.id, vector=v, payload=r.payload) for r, v in zip(records, rows)]))


# -- reading a shard without writing to it ------------------------------------------------------
# qdrant-edge 0.9 has no read-only open (its Rust crate's ReadOnlyEdgeShard is not in the Python
# package): loading a shard to search it rewrites its config files and opens its flags, trackers
# and payload pages for writing (one `kgwalk query` rewrote 18 files of the live generation, and
# failed on a read-only mount). So a reader loads a private copy: the files Qdrant maps read-only
# (the bulk of a sealed segment: vectors, HNSW links, id maps, the root index) are linked to the
# originals, every other file is copied, holes kept (Qdrant preallocates 32 MiB page files).
READ_ONLY_FILES = frozenset({"matrix.dat", "links.bin", "links_compressed.bin", "graph.bin", "id_tracker.e2i",
                             "id_tracker.i2e", "point_to_values.bin", "values_to_points.bin"})
# A sealed segment's TurboQuant codes (index.vector_datatype turbo8, turbo4: matrix.dat's counterpart), which Qdrant
# opens for writing but never writes: linked where the original is writable, copied on a read-only mount. Copied
# every time, they were 16.6 GB of the 10M-edge KG's walks base per reader and per refresh.
UNWRITTEN_FILES = frozenset({"tq_vectors.dat"})
_SCRATCH_PREFIX = "kgwalk-index-"
_COPY_CHUNK = 1 << 20


class PrivateCopies:
    """Shards opened for reading: each loaded from a private copy in a scratch folder of this
    process (in $TMPDIR), removed by `close` (after the shards are closed) or, if the process was
    killed, by the next process that makes one."""

    def __init__(self) -> None:
        self._scratch: Path | None = None
        self._copies = 0

    def load(self, path: Path) -> Any:
        if self._scratch is None:
            self._scratch = _new_scratch()
        self._copies += 1
        copy = self._scratch / f"{self._copies}-{path.name}"
        private_copy(path, copy)
        return load_shard(copy)

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def _new_scratch() -> Path:
    """A scratch folder named after this process; those of processes gone are removed first."""
    for stale in Path(tempfile.gettempdir()).glob(f"{_SCRATCH_PREFIX}*-*"):
        pid = stale.name[len(_SCRATCH_PREFIX):].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{os.getpid()}-"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def private_copy(source: Path, target: Path) -> None:
    """`source` (a shard folder) as `target` for Qdrant to load and write to: folders made,
    READ_ONLY_FILES (and UNWRITTEN_FILES where writable) linked to the originals, every other file copied. A link in `source` is
    refused, never followed; Qdrant's temporary `.atomicwrite*` entries are left out."""
    target.mkdir()
    with os.scandir(source) as entries:
        for entry in entries:
            if entry.name.startswith(".atomicwrite"):
                continue
            if entry.is_symlink():
                raise KgwalkError(link_refusal(Path(entry.path)))
            if entry.is_dir():
                private_copy(Path(entry.path), target / entry.name)
            elif entry.name in READ_ONLY_FILES or (entry.name in UNWRITTEN_FILES and os.access(entry.path, os.W_OK)):
                os.symlink(Path(entry.path).absolute(), target / entry.name)
            else:
                _copy_keeping_holes(Path(entry.path), target / entry.name)


def _copy_keeping_holes(source: Path, target: Path) -> None:
    """Copy a file's data extents only (SEEK_DATA/SEEK_HOLE), leaving its holes holes; in the
    kernel where it can (copy_file_range: a reflink, no bytes copied, on btrfs and XFS when
    $TMPDIR is on the warehouse's filesystem)."""
    with open(source, "rb", buffering=0) as src, open(target, "wb", buffering=0) as dst:
        fd, size = src.fileno(), os.fstat(src.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
                end = os.lseek(fd, start, os.SEEK_HOLE)
            except OSError as e:
                if e.errno == errno.ENXIO:
                    break  # only a hole is left
                start, end = offset, size  # a filesystem that cannot tell: all of it is data
            _copy_range(fd, dst.fileno(), start, end)
            offset = end
        dst.truncate(size)


def _copy_range(source: int, target: int, start: int, end: int) -> None:
    at = start
    while at < end:
        try:
            copied = os.copy_file_range(source, target, end - at, at, at)
        except OSError:  # EXDEV (across filesystems), ENOSYS, EOPNOTSUPP: through this process instead
            copied = os.pwrite(target, os.pread(source, min(_COPY_CHUNK, end - at), at), at)
        if copied == 0:
            break  # the file shrank meanwhile
        at += copied
