"""The vector index: walk points and node points built in full from walks, texts and vectors
(build), or brought to the current tables by applying their differences (refresh).

Refresh: upsert walk points of new walks and walks whose text changed (vector from `vectors`),
rewrite the payload of walks whose count or labels changed (vector kept), delete walks that are
gone. Node points: recompute the node vector of every root whose walk set or walk vectors
changed, with the same fixed-point sums a full build uses, so bit-identical: the edge backend
keeps those sums, so only the changed walks' vectors are added and subtracted; otherwise from all
the root's walks. Update relabelled nodes, delete nodes that have no walks any more.

The edge backend writes a copy of the live generation and switches to it at once; the server
backend writes in place in an order that never shows a walk without its node: nodes first,
then walks, then deletions of walks, then deletions of nodes.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.faults import crashpoint
from kgwalk.index.base import VectorStore
from kgwalk.index.build import PAYLOAD_COLUMNS, IndexResult, NodeSums, matching_vectors, node_payloads, walk_meta, walk_payloads, with_texts
from kgwalk.index.store import collection_names, index_version, open_store
from kgwalk.stages.base import Stage, Step, folder_bytes
from kgwalk.stages.diff import isin, mentions, relabelled, text_pairs
from kgwalk.stages.report import RefreshReport
from kgwalk.state import record, versions
from kgwalk.storage import open_table, read_table, read_version, table_files
from kgwalk.walks.labels import load_labels

_RETRIEVE_BATCH = 1024


def _table_vectors(cfg: Config, keys: pa.Table, rows: np.ndarray, since: int) -> np.ndarray:
    """Vectors of the walks at `rows` of `keys` (walk_id, text_id) from the vectors table: the files
    added since version `since` first (a refresh appends there), the whole table only for rows
    still missing."""
    import pyarrow.dataset as ds  # not at the top: it imports pandas, which the CLI (a query) would load for nothing

    if not len(rows):
        return np.zeros((0, 0), np.float32)
    part = keys.take(pa.array(rows))
    ids, text_ids = part.column("walk_id").to_numpy(), part.column("text_id").to_numpy()
    order = np.argsort(ids)
    ids, text_ids = ids[order], text_ids[order]
    taken = np.zeros(len(ids), bool)
    found: dict[int, np.ndarray] = {}
    table = open_table(cfg.table("vectors"))
    now_files = table_files(table)
    table.load_as_version(since)
    new_files = sorted(set(now_files) - set(table_files(table)))
    for files in (new_files, now_files):
        if taken.all():
            break
        wanted = pa.array(ids[~taken])
        for batch in ds.dataset(files, format="parquet").to_batches(filter=ds.field("walk_id").isin(wanted)):
            got, vecs = matching_vectors(ids, text_ids, batch, taken)
            found.update(zip(got.tolist(), vecs))
    if not taken.all():
        raise KgwalkError(f"vectors are missing for {int((~taken).sum()):,} walks: rerun `kgwalk embed` and `kgwalk index`")
    result = np.stack([found[i] for i in range(len(ids))])
    return result[np.argsort(order)]


def _index_vectors(store: VectorStore, collection: str, ids: np.ndarray) -> np.ndarray:
    """Vectors of walk points already in the index (bit-exact: our vectors are unit-norm, which
    Qdrant stores as given)."""
    parts = []
    for start in range(0, len(ids), _RETRIEVE_BATCH):
        chunk = ids[start : start + _RETRIEVE_BATCH]
        got, vecs, _ = store.retrieve(collection, chunk, payloads=False)
        if len(got) != len(chunk):
            raise KgwalkError(f"the index lacks {len(chunk) - len(got):,} walk points it should have: run `kgwalk index`")
        parts.append(vecs)
    return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def _rows_of(cfg: Config, table: str, columns: list[str], ids: np.ndarray) -> pa.Table:
    """The current rows of `table` whose walk_id is among `ids`."""
    import pyarrow.dataset as ds  # see _table_vectors

    dataset = open_table(cfg.table(table)).to_pyarrow_dataset()
    return dataset.to_table(columns=columns, filter=ds.field("walk_id").isin(pa.array(ids, pa.int64())))


def _build(step: Step) -> IndexResult:
    from kgwalk.index.build import build_index

    return build_index(step.cfg, versions(step.cfg, step.stage.inputs))


def _describe(cfg: Config, r: IndexResult) -> str:
    size = folder_bytes(cfg.root / "qdrant") if cfg.index.backend == "edge" else 0
    text = f"{r.walks:,} walk points, {r.nodes:,} node points"
    if r.entities_without_walks:
        text += f" ({r.entities_without_walks:,} entities have no walk and no node point)"
    return text + (f"; index {size / 2**20:,.1f} MiB" if size else "")


def _update(step: Step) -> None:
    """The index's own pending check: it records no settings and no base, and the live index
    says what it reflects (a refresh killed after the index commit has nothing left to write)."""
    cfg, report, inputs = step.cfg, step.report, step.stage.inputs
    done = step.state["index"].reflects
    now = versions(cfg, inputs)
    if all(done.get(t) == now[t] for t in inputs):
        report.skipped.append("index")
        return
    with closing(open_store(cfg)) as store:
        live = store.reflects()
        if live is not None and live not in (now, done):  # node sums are updated by difference: only from `done`
            raise KgwalkError(f"the live index reflects {live}, the state table says {done}: run `kgwalk index`")
        if live != now:
            _apply(cfg, store, done, now, report)
    if live == now:  # a refresh killed after the index commit, before recording it
        report.skipped.append("index")
    else:
        crashpoint("index.committed")
    record(cfg, "index", index_version(cfg), now)


def _apply(cfg: Config, store: VectorStore, done: dict[str, Any], now: dict[str, int], report: RefreshReport) -> None:
    """Write the differences between the index at `done` and the tables at `now`, and commit."""
    labels = load_labels(cfg)
    # Every walk's keys, but payloads (labels, texts) only for the points written: at 5.9M walks
    # the whole table's payloads would cost more than the refresh's own work.
    keys = with_texts(read_table(cfg.table("walks"), ["walk_id", "root", "count"]), read_table(cfg.table("texts"), ["walk_id", "text_id"]))
    old_walks = read_version(cfg.table("walks"), done["walks"], ["walk_id", "root", "count"]).sort_by("walk_id")
    old_texts = read_version(cfg.table("texts"), done["texts"], ["walk_id", "text_id"])
    ids, roots = keys.column("walk_id").to_numpy(), keys.column("root").to_numpy()
    old_ids = old_walks.column("walk_id").to_numpy()

    new_vector = ~isin(pa.array(text_pairs(keys)), text_pairs(old_texts))  # a new walk, or a new text
    pos = np.minimum(np.searchsorted(old_ids, ids), max(len(old_ids) - 1, 0))
    existed = old_ids[pos] == ids if len(old_ids) else np.zeros(len(ids), bool)
    recount = existed & (old_walks.column("count").to_numpy()[pos] != keys.column("count").to_numpy())
    new_entities, new_relations = (relabelled(cfg, t, done[t]) for t in ("entities", "relations"))
    relabel = np.zeros(len(ids), bool)
    if len(new_entities) or len(new_relations):
        relabel = mentions(read_table(cfg.table("walks"), ["walk_id", "nodes", "rels"]).sort_by("walk_id"), new_entities, new_relations)
    payload_only = (recount | relabel) & ~new_vector
    vanished = ~isin(old_walks.column("walk_id"), ids)
    gone = old_ids[vanished]
    node_roots = np.unique(np.concatenate([roots[new_vector], old_walks.column("root").to_numpy()[vanished], new_entities]))
    upsert_rows = np.flatnonzero(new_vector | payload_only)
    node_rows = np.flatnonzero(isin(pa.array(roots), node_roots))  # every walk of those roots
    meta = walk_meta(  # row i: the walk at upsert_rows[i] (both sorted by walk_id)
        _rows_of(cfg, "walks", PAYLOAD_COLUMNS, ids[upsert_rows]), _rows_of(cfg, "texts", ["walk_id", "text_id"], ids[upsert_rows])
    )

    nodes_c, walks_c = collection_names(cfg)
    store.begin(copy=True)
    # Node sums kept by the store are updated by the walks that changed; otherwise a node's sum
    # is recomputed from all its root's walks.
    incremental = store.has_sums(nodes_c)
    # One vector per row that needs one: from `vectors` where the text is new, else from the index.
    table_rows = np.flatnonzero(new_vector)
    index_rows = np.setdiff1d(upsert_rows if incremental else np.union1d(upsert_rows, node_rows), table_rows)
    from_table = store.stored(walks_c, _table_vectors(cfg, keys, table_rows, done["vectors"]))  # as a build rounds them
    from_index = _index_vectors(store, walks_c, ids[index_rows])
    rows = np.concatenate([table_rows, index_rows])
    vectors = np.concatenate([v for v in (from_table, from_index) if len(v)]) if len(rows) else np.zeros((0, 1), np.float32)
    order = np.argsort(rows)
    rows, vectors = rows[order], vectors[order]
    vector_of = lambda r: vectors[np.searchsorted(rows, r)]  # noqa: E731

    if incremental:
        old_sums, old_walks_per_root = store.read_sums(nodes_c, node_roots)
        sums = NodeSums(node_roots, old_sums.shape[1])
        sums.sums, sums.walks = old_sums, old_walks_per_root
        sums.add(roots[table_rows], vector_of(table_rows))
        # Previous vectors leave their nodes: of walks that are gone, and of walks with a new text.
        replaced = new_vector & existed
        left = np.concatenate([gone, ids[replaced]])
        left_roots = np.concatenate([old_walks.column("root").to_numpy()[vanished], roots[replaced]])
        sums.add(left_roots, _index_vectors(store, walks_c, left), sign=-1)
    else:
        sums = NodeSums(node_roots, vectors.shape[1])
        sums.add(roots[node_rows], vector_of(node_rows))
    if (sums.walks < 0).any():
        raise KgwalkError("the index's node sums disagree with its walks (was it written by another tool?): run `kgwalk index`")
    with_walks = np.flatnonzero(sums.walks > 0)
    live_roots, dead_roots = node_roots[with_walks], node_roots[sums.walks == 0]
    crashpoint("index.prepared")

    step = cfg.index.upsert_batch
    for start in range(0, len(with_walks), step):
        part = with_walks[start : start + step]
        store.upsert(nodes_c, node_roots[part], sums.node_vectors(part), node_payloads(node_roots[part], labels, sums.walks[part]))
    store.write_sums(nodes_c, node_roots, sums.sums, sums.walks)
    for start in range(0, len(upsert_rows), step):
        part = upsert_rows[start : start + step]
        store.upsert(walks_c, ids[part], vector_of(part), walk_payloads(meta.slice(start, len(part))))
        crashpoint("index.upserting")
    store.delete(walks_c, gone)
    store.delete(nodes_c, dead_roots)
    store.finish(walks_c)
    store.finish(nodes_c)
    report.walks_recounted = int(recount.sum())
    report.points_upserted = len(upsert_rows)
    report.points_deleted = len(gone)
    report.nodes_upserted = len(live_roots)
    report.nodes_deleted = len(dead_roots)
    crashpoint("index.before_commit")
    store.commit(now)


INDEX: Stage[IndexResult] = Stage(
    name="index", command="index", help="walk and node vectors -> Qdrant",
    inputs=("walks", "texts", "vectors", "entities", "relations"), build=_build, describe=_describe, update=_update,
    version=index_version,
    # a server keeps no generations: its version is shown only for the edge backend
    current=lambda cfg: index_version(cfg) if cfg.index.backend == "edge" else None,
)
