"""The vector index: walk points and node points built in full from walks, texts and vectors
(build), or brought to the current tables by applying their differences (refresh).

Refresh: upsert the walk points of walks with a new text (a new walk, or a new text of a walk;
vector from `vectors`, or embedded here: kgwalk.index.walk_vectors), delete walks that are gone; a new count or label leaves a walk point as
it is (it carries its vector and root alone). Node points: recompute the node vector of every
root whose walk set or walk vectors changed, with the same fixed-point sums a full build uses,
so bit-identical: the edge backend keeps the sums of roots with many walks
(index.node_sums_min_walks), so only their changed walks' vectors are added and subtracted; any
other root's from all its walks. Update relabelled nodes, delete nodes that have no walks any more.

The edge backend writes a copy of the live generation and switches to it at once; the server
backend writes in place in an order that never shows a walk without its node: nodes first,
then walks, then deletions of walks, then deletions of nodes.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any

import numpy as np

from kgwalk.config import Config
from kgwalk.embed.settings import stores_vectors
from kgwalk.errors import KgwalkError
from kgwalk.faults import crashpoint
from kgwalk.index.base import KeepsNodeSums, VectorStore
from kgwalk.index.build import IndexResult, NodeSums, node_payloads, walk_payloads
from kgwalk.index.store import collection_names, index_version, open_store
from kgwalk.index.walk_vectors import texts_vectors, vectors_at
from kgwalk.stages.base import Stage, Step, folder_bytes
from kgwalk.stages.diff import isin, new_text_pairs, relabelled, walks_diff
from kgwalk.stages.report import RefreshReport
from kgwalk.state import record, versions
from kgwalk.storage import read_table
from kgwalk.walks.labels import load_labels

_RETRIEVE_BATCH = 1024


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


def _summed_vectors(cfg: Config, store: VectorStore, collection: str, ids: np.ndarray, texts_version: int) -> np.ndarray:
    """The vectors the node sums hold for these walk points, which had their texts of version
    `texts_version`: read from the index where it keeps them exactly, else (TurboQuant codes)
    from where the build took them (kgwalk.index.walk_vectors)."""
    if store.keeps_exactly(collection):
        return _index_vectors(store, collection, ids)
    return store.stored(collection, vectors_at(cfg, ids, texts_version))


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
            _apply(cfg, store, done, now, report, step.shared)
    if live == now:  # a refresh killed after the index commit, before recording it
        report.skipped.append("index")
    else:
        crashpoint("index.committed")
    record(cfg, "index", index_version(cfg), now)


def _apply(cfg: Config, store: VectorStore, done: dict[str, Any], now: dict[str, int], report: RefreshReport, shared: dict[str, Any]) -> None:
    """Write the differences between the index at `done` and the tables at `now`, and commit.

    A walk point is its vector and its root (the walk id, a content hash, fixes the root), so
    only a new text gives a walk a new point: a new count or a new label leaves it as it is.
    Whole-table work is a few hash joins over key columns (walk_id, root, text_id); every
    other read touches only the changed walks."""
    labels = load_labels(cfg)
    walks = read_table(cfg.table("walks"), ["walk_id", "root"])
    ids, roots = walks.column("walk_id").to_numpy(), walks.column("root").to_numpy()

    # The walks with a new text (a new walk, or a new text of a walk): their points are written.
    fresh = new_text_pairs(cfg, done["texts"], shared).sort_by("walk_id")
    fresh_ids = fresh.column("walk_id").to_numpy()
    fresh_rows = np.flatnonzero(isin(walks.column("walk_id"), fresh_ids))
    fresh_rows = fresh_rows[np.argsort(ids[fresh_rows])]  # walk rows in the order of `fresh`
    if not np.array_equal(ids[fresh_rows], fresh_ids):
        raise KgwalkError(f"{len(fresh_ids) - len(fresh_rows):,} new texts have no walk among the {walks.num_rows:,} walks: rerun `kgwalk verbalize`")
    fresh_roots = roots[fresh_rows]
    # Previous vectors leave their nodes: of walks that are gone, and of walks with a new text
    # (those that are not new walks: a walk keeps its id, so its root).
    diff = walks_diff(cfg, done["walks"], shared)
    gone, gone_roots = diff.removed.column("walk_id").to_numpy(), diff.removed.column("root").to_numpy()
    replaced = ~isin(fresh_ids, diff.added.column("walk_id").to_numpy())
    new_entities = relabelled(cfg, "entities", done["entities"])  # node payloads carry labels
    node_roots = np.unique(np.concatenate([fresh_roots, gone_roots, new_entities]))

    nodes_c, walks_c = collection_names(cfg)
    store.begin(copy=True, originals=lambda ids: vectors_at(cfg, ids, done["texts"]))  # the live index's walks had texts of done["texts"]
    fresh_vectors = store.stored(walks_c, texts_vectors(cfg, fresh, done["vectors"]))  # as a build rounds them
    # A root whose exact sum the store keeps (one with many walks) is updated by the walks that changed; any other
    # root's sum is made again from all its walks: the fresh ones' vectors from above, the rest's as the build took them.
    kept_sums, kept_walks = np.zeros((len(node_roots), 0), np.int64), np.zeros(len(node_roots), np.int64)
    if isinstance(store, KeepsNodeSums) and store.has_sums(nodes_c):
        kept_sums, kept_walks = store.read_sums(nodes_c, node_roots)
    leaving, leaving_roots = np.concatenate([gone, fresh_ids[replaced]]), np.concatenate([gone_roots, fresh_roots[replaced]])
    summed = isin(leaving_roots, node_roots[kept_walks > 0])
    leaving, leaving_roots = leaving[summed], leaving_roots[summed]
    resummed = np.flatnonzero(isin(walks.column("root"), node_roots[kept_walks == 0]))
    resummed = resummed[~isin(ids[resummed], fresh_ids)]
    read = _summed_vectors(cfg, store, walks_c, np.concatenate([leaving, ids[resummed]]), done["texts"])  # one pass over the texts
    leaving_vectors, resummed_vectors = read[: len(leaving)], read[len(leaving) :]
    sums = NodeSums(node_roots, max(kept_sums.shape[1], fresh_vectors.shape[1], read.shape[1], 1))
    if kept_sums.shape[1]:
        sums.sums, sums.walks = kept_sums, kept_walks
    sums.add(fresh_roots, fresh_vectors)
    sums.add(leaving_roots, leaving_vectors, sign=-1)
    sums.add(roots[resummed], resummed_vectors)
    if (sums.walks < 0).any():
        raise KgwalkError("the index's node sums disagree with its walks (was it written by another tool?): run `kgwalk index`")
    with_walks = np.flatnonzero(sums.walks > 0)
    live_roots, dead_roots = node_roots[with_walks], node_roots[sums.walks == 0]
    crashpoint("index.prepared")

    step = cfg.index.upsert_batch
    for start in range(0, len(with_walks), step):
        part = with_walks[start : start + step]
        store.upsert(nodes_c, node_roots[part], sums.node_vectors(part), node_payloads(node_roots[part], labels, sums.walks[part]))
    if isinstance(store, KeepsNodeSums):  # the store keeps those of roots with many walks
        store.write_sums(nodes_c, node_roots, sums.sums, sums.walks)
    for start in range(0, len(fresh_ids), step):
        end = start + step
        store.upsert(walks_c, fresh_ids[start:end], fresh_vectors[start:end], walk_payloads(fresh_roots[start:end]), replaces=replaced[start:end])
        crashpoint("index.upserting")
    store.delete(walks_c, gone, gone_roots, present=True)  # the live index holds exactly the walks of done["walks"]
    store.delete(nodes_c, dead_roots)
    store.finish(walks_c)
    store.finish(nodes_c)
    if not stores_vectors(cfg.embed, cfg.index.backend):  # the vectors step left them to this one
        report.embedded = len(fresh_ids)
    report.points_upserted = len(fresh_ids)
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
