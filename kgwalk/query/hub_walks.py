"""Hub walks: the walks of the roots a question's walk search cannot remake in time, made once per walks version
with their vectors and kept on disk (query.hub_walks=cache).

Scoring a top node's walks from the graph (query.walk_search=graph) remakes and embeds them per question: a few
hundred sentences for most nodes. A hub has a walk per adjacency entry: the 10M-edge synthetic KG has 560 roots past
query.walk_search_max_degree with 4.3M walks ("Mironia" 54K, "Drama" 107K). Their walk points in the index are read
one by one (qdrant-edge: about 25 us a point warm, so 1.3 s for Mironia, and 14 s with its pages on disk): the
slowest 2.5% of the 10M questions, all about a country (bench/results/query_scale_10m_hub_walks.md).

So the hubs' walks are made once from the graph, as walks_of makes them, and embedded: float32 vectors (1 KB a
walk, 4.4 GB at 10M edges; float16 would halve it, but converting 107K rows back cost 66 ms a question against 7 ms
for the product itself) beside the walks' ids and steps, rows in (root, walk id) order. A question scores a cached
hub's rows by one matrix product and shows the best ones' sentences, made again: the same walks, scores and order as
remaking them per question.

They are kept in the user's cache, since a reader never writes to the warehouse (kgwalk serve may read it
read-only): under a folder per warehouse walks table, an entry named by everything the walks and vectors are made
from (the record and KG tables' versions, the walk settings, the phrases, the model, the degree bound). An entry is
written to a temporary folder and renamed, under a file lock (one process makes it, the others wait and load it);
publishing one removes the warehouse's older entries (a reader still mapping one keeps its files until it closes
them).
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from pathlib import Path

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.index.records import WalkRecords
from kgwalk.query.steps import path_keys, walk_ends, with_every_path, with_joint_ends
from kgwalk.storage import user_cache

FORMAT = 1  # what an entry holds; a change names new entries
_CHUNK_WALKS = 200_000  # hub walks made, embedded and written at a time (about 250 MB of vectors and sentences)
_ENCODE_BATCH = 8192
Encode = Callable[[pa.Table], np.ndarray]  # walks (records.made) to their vectors: kgwalk.query.walk_sums.walk_encoder


def cache_entry(cfg: Config, records: WalkRecords, model: str, max_degree: int, root: Path | None = None) -> Path:
    """The folder of the hub walks of the walks `records` holds (synced, graph source)."""
    walks_table = str(Path(cfg.table("walks")).resolve())
    made_from = {"format": FORMAT, "records": records.versions, "kg": records.made_from, "walks": dataclasses.asdict(cfg.walks),
                 "phrases": cfg.verbalize.phrases, "model": model, "max_degree": max_degree}
    digest = lambda value: hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]  # noqa: E731
    return (root or user_cache("hub-walks")) / digest(walks_table) / digest(made_from)


class HubWalks:
    """A cache entry, mapped: the walks (WALK_FIELDS and root) in (root, walk id) order, their vectors row for row,
    and where each hub's rows start."""

    def __init__(self, folder: Path) -> None:
        meta = json.loads((folder / "meta.json").read_text())
        self.folder = folder
        self.walks = pa.ipc.open_file(pa.memory_map(str(folder / "walks.arrow"))).read_all()
        self.vectors = np.memmap(folder / "vectors.f32", np.float32, "r", shape=(meta["rows"], meta["dim"])) if meta["rows"] else np.zeros((0, meta["dim"]), np.float32)
        self.roots = np.load(folder / "roots.npy")
        self.starts = np.load(folder / "starts.npy")
        self._walk_ids = self.walks.column("walk_id").to_numpy()
        # each row's relation path as a number and its end node, made here on the loading thread, not on the first question
        # that needs them (0.3 s each for 4.3M walks at 10M edges); batch by batch, as the file holds them
        batches = [pa.Table.from_batches([b]) for b in self.walks.to_batches()]
        self.paths = np.concatenate([np.zeros(0, np.uint64), *map(path_keys, batches)])
        self.ends = np.concatenate([np.zeros(0, np.int64), *map(walk_ends, batches)])

    def covers(self, roots: list[int]) -> bool:
        at = np.searchsorted(self.roots, roots)
        return bool(len(roots)) and bool(np.all(at < len(self.roots))) and bool(np.array_equal(self.roots[np.minimum(at, len(self.roots) - 1)], roots))

    def best(self, q: np.ndarray, roots: dict[int, list[int]], fetch: dict[int, int], joint_ends: np.ndarray | None = None, *,
             every_path: Collection[int] = ()) -> tuple[pa.Table, np.ndarray]:
        """The rows best_walks would choose among each node's roots' walks (each covered), as walks (WALK_FIELDS and
        root) with their cosines: per node its fetch[node] best, ties to the lower walk id, the best of each relation
        path they lack (`with_every_path`, of every one for the nodes in `every_path`) and the best to each of
        `joint_ends` they do not reach (`with_joint_ends`)."""
        chosen = []
        for node, of_node in roots.items():
            at = np.searchsorted(self.roots, of_node)
            rows = np.concatenate([np.arange(self.starts[i], self.starts[i + 1]) for i in at])
            scores = self.vectors[rows] @ q
            order = rows[np.lexsort((self._walk_ids[rows], -scores))]
            best = with_every_path(self.paths, order, fetch[node], every=node in every_path)
            if joint_ends is not None and len(joint_ends):
                best = with_joint_ends(self.ends, order, best, joint_ends, fetch[node])
            chosen.append(best)
        rows = np.unique(np.concatenate([np.zeros(0, np.int64), *chosen]))
        # row slices, not take: Arrow's take over the mapped file's 22 record batches cost 26-31 ms at 10M edges
        # (it resolves the indices against every chunk), 20 slices 0.2 ms
        walks = pa.concat_tables([self.walks.slice(int(row), 1) for row in rows]) if len(rows) else self.walks.slice(0, 0)
        return walks.combine_chunks(), self.vectors[rows] @ q


def load_or_make(entry: Path, records: WalkRecords, hubs: np.ndarray, encode: Encode) -> HubWalks:
    """The entry's hub walks: loaded, or made now (see the module's docstring) and published."""
    found = _load(entry)
    if found is not None:
        return found
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
        found = _load(entry)  # another process may have made it while we waited
        if found is not None:
            return found
        started = time.perf_counter()
        print(f"[kgwalk] caching the walks of {len(hubs):,} hubs (once per walks version) in {entry}", file=sys.stderr, flush=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{entry.name}.", suffix=".tmp", dir=entry.parent))
        try:
            rows = _make(tmp, records, hubs, encode)
            shutil.rmtree(entry, ignore_errors=True)  # there but unreadable
            tmp.rename(entry)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for older in entry.parent.iterdir():
            if older.is_dir() and older != entry:
                shutil.rmtree(older, ignore_errors=True)
        print(f"[kgwalk] cached {rows:,} hub walks in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    loaded = _load(entry)
    if loaded is None:
        raise OSError(f"the hub walks just cached in {entry} do not load")
    return loaded


def _load(entry: Path) -> HubWalks | None:
    try:
        return HubWalks(entry)
    except (OSError, ValueError, KeyError, pa.ArrowInvalid):
        return None


def _make(folder: Path, records: WalkRecords, hubs: np.ndarray, encode: Encode) -> int:
    """Write the hubs' walks, made a chunk of hubs at a time; returns their number."""
    degrees = records.degrees(hubs.tolist())
    assert degrees is not None
    chunk_of = np.cumsum(degrees) // _CHUNK_WALKS
    parts, rows, dim = [], 0, 0
    with open(folder / "vectors.f32", "wb") as vectors:
        for chunk in np.unique(chunk_of):
            walks = records.made(hubs[chunk_of == chunk].tolist())
            assert walks is not None
            walks = walks.sort_by([("root", "ascending"), ("walk_id", "ascending")])
            for start in range(0, walks.num_rows, _ENCODE_BATCH):
                batch = np.ascontiguousarray(encode(walks.slice(start, _ENCODE_BATCH)), np.float32)
                dim = batch.shape[1]
                vectors.write(batch.tobytes())
            parts.append(walks)
            rows += walks.num_rows
    table = pa.concat_tables(parts) if parts else records.made([])
    assert table is not None
    with pa.OSFile(str(folder / "walks.arrow"), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    root_of = table.column("root").to_numpy() if rows else np.zeros(0, np.int64)
    roots, starts = np.unique(root_of, return_index=True)
    np.save(folder / "roots.npy", roots)
    np.save(folder / "starts.npy", np.append(starts, rows).astype(np.int64))
    (folder / "meta.json").write_text(json.dumps({"rows": rows, "dim": dim, "hubs": len(hubs)}))
    return rows
