"""`kgwalk refresh`: apply a change set (or a new snapshot) and bring walks, texts, vectors and
the index up to date by recomputing only what the change reaches.

Each step diffs its input between the version its output reflects (state table) and the
current one, and applies only the difference; its output commit carries the same facts as
metadata. So a refresh killed anywhere is completed by running the same command again: steps
that landed are recognised and skipped, the others redo the same deterministic work.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.faults import crashpoint
from kgwalk.kg.readers import input_file, read_kg
from kgwalk.log import log
from kgwalk.refresh.affected import affected_roots
from kgwalk.refresh.changes import KgTables, KgUpdate, apply_changes, snapshot_update
from kgwalk.refresh.diff import isin, mentions, relabelled, text_pairs
from kgwalk.refresh.report import RefreshReport
from kgwalk.stages import settings_fingerprints
from kgwalk.state import DERIVED_INPUTS, KG_TABLES, TableState, read_state, record, versions, writer_lock
from kgwalk.storage import commit_metadata, read_table, read_version, table_version, write_table
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA

def _log(message: str) -> None:
    log(f"refresh: {message}")


def _pending(cfg: Config, state: dict[str, TableState], table: str, report: RefreshReport) -> dict[str, Any] | None:
    """What the step's output will reflect, or None when there is nothing to do: its inputs did
    not change, or a crashed run already committed it (its commit metadata says so)."""
    inputs = DERIVED_INPUTS[table]
    done = state[table].reflects
    now = versions(cfg, inputs)
    if all(done[t] == now[t] for t in inputs):
        report.skipped.append(table)
        return None
    reflects = {**now, "settings": done["settings"], "base": state[table].version}
    if commit_metadata(cfg.table(table)) == reflects:
        record(cfg, table, table_version(cfg.table(table)), reflects)
        return None
    return reflects


def _change_id(path: str, snapshot: bool) -> str:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:24]
    return f"{'snapshot' if snapshot else 'changes'}:{digest}"


def _applied(cfg: Config, change_id: str) -> int | None:
    """The edges version this change input was applied in, if it is the latest change, so that a
    retry of the same run (cron, a crash) is a no-op. Only the latest counts: a change set whose
    content equals an older one that a later change undid is a new change. Skipping it when it is
    the latest is exact, since applying a change set or snapshot twice in a row equals applying it
    once (adds of present and removals of absent edges change nothing)."""
    if commit_metadata(cfg.table("edges")).get("change") == change_id:
        return table_version(cfg.table("edges"))
    return None


def apply_kg(cfg: Config, path: str, fmt: str, snapshot: bool) -> KgUpdate | None:
    """Step 1: the change input -> new versions of entities, relations, edges (edges last: its
    commit, tagged with the change id, is what marks the change as applied)."""
    change_id = _change_id(path, snapshot)
    version = _applied(cfg, change_id)
    if version is not None:
        _log(f"{path} was applied already (edges version {version}); bringing the corpus up to date")
        return None
    read = read_kg(path, fmt, cfg.ingest.max_label_length, with_op=not snapshot)
    old = KgTables(*(read_table(cfg.table(t), what="ingest") for t in ("entities", "relations", "edges")))
    update = (snapshot_update if snapshot else apply_changes)(old, read, str(path))
    if not update.tables.edges.num_rows:
        raise KgwalkError(f"{path}: the change would leave the KG without edges; refusing")
    if cfg.quality.gates:
        from kgwalk.quality import gate_kg

        t = update.tables
        gate_kg(cfg, t.entities, t.relations, t.edges, len(read.triples) + len(read.rejected), update.rejected.num_rows)
    # `base` tells this run's commits from an earlier application of the same content
    meta = {"change": change_id, "base": table_version(cfg.table("edges"))}
    if update.rejected.num_rows and commit_metadata(cfg.table("rejected")) != meta:
        write_table(cfg.table("rejected"), update.rejected, mode="append", metadata=meta)
    write_table(cfg.table("entities"), update.tables.entities, metadata=meta)
    write_table(cfg.table("relations"), update.tables.relations, metadata=meta)
    crashpoint("kg.labels_written")
    write_table(cfg.table("edges"), update.tables.edges, metadata=meta)
    for table, v in versions(cfg, KG_TABLES).items():
        record(cfg, table, v, meta)
    return update


def walk_roots(cfg: Config, graph, roots: np.ndarray, spec: WalkSpec, spark=None) -> pa.Table:
    """Walks of the given roots: the in-memory engine in this process, or spread over Spark
    tasks (spark-submit jobs/refresh_walks.py) for big change sets."""
    from kgwalk.walks.engine import generate_walks

    if spark is None:
        tables = list(generate_walks(graph, roots, spec, cfg.walks.roots_per_batch, cfg.walks.max_paths_per_batch))
        return pa.concat_tables(tables) if tables else WALKS_SCHEMA.empty_table()
    from kgwalk.walks.spark_job import walk_roots_on_spark

    return walk_roots_on_spark(cfg, spark, graph, roots, spec)


def refresh_walks(cfg: Config, state: dict[str, TableState], report: RefreshReport, spark=None) -> None:
    """Step 2: recompute the walks of every root the edge changes can reach, keep the rest."""
    from kgwalk.walks.graph import Graph

    reflects = _pending(cfg, state, "walks", report)
    if reflects is None:
        return
    done, base = state["walks"].reflects, state["walks"].version
    spec = WalkSpec.from_conf(cfg.walks)
    old_edges = read_version(cfg.table("edges"), done["edges"], ["src", "rel", "dst"])
    columns = {"edges": ["src", "rel", "dst"], "entities": ["id"], "relations": ["id", "label"]}  # labels name explicit inverses
    new = {t: read_table(cfg.table(t), columns[t]) for t in KG_TABLES}
    old_relations = read_version(cfg.table("relations"), done["relations"], ["id", "label"])
    relations = pa.concat_tables([old_relations, new["relations"]]).group_by(["id", "label"]).aggregate([])
    roots = affected_roots(old_edges, new["edges"], spec, relations)
    graph = Graph.from_arrow(new["edges"], new["entities"], new["relations"], cfg.walks.direction)
    walk_now = roots[isin(roots, graph.node_ids)]  # affected roots that are still entities
    fresh = walk_roots(cfg, graph, walk_now, spec, spark)
    old = read_version(cfg.table("walks"), base)
    touched = isin(old.column("root"), roots)
    before = old.filter(pa.array(touched))
    walks = pa.concat_tables([old.filter(pa.array(~touched)), fresh.cast(WALKS_SCHEMA)])
    if cfg.quality.gates:
        from kgwalk.quality import gate_walks

        gate_walks(cfg, walks)
    crashpoint("walks.computed")
    version = write_table(cfg.table("walks"), walks, metadata=reflects)
    crashpoint("walks.written")
    record(cfg, "walks", version, reflects)
    report.affected_roots = len(roots)
    report.walks_recomputed = fresh.num_rows
    old_ids, new_ids = before.column("walk_id").to_numpy(), fresh.column("walk_id").to_numpy()
    report.walks_added = int((~np.isin(new_ids, old_ids)).sum())
    report.walks_removed = int((~np.isin(old_ids, new_ids)).sum())


def refresh_texts(cfg: Config, state: dict[str, TableState], report: RefreshReport) -> None:
    """Step 3: verbalize the walks that are new or mention a relabelled entity or relation."""
    from kgwalk.verbalize.pipeline import TEXTS_SCHEMA, WALK_COLUMNS, Verbalization, open_cache
    from kgwalk.walks.labels import load_labels

    reflects = _pending(cfg, state, "texts", report)
    if reflects is None:
        return
    done, base = state["texts"].reflects, state["texts"].version
    walks = read_table(cfg.table("walks"), WALK_COLUMNS)
    old_ids = read_version(cfg.table("walks"), done["walks"], ["walk_id"]).column("walk_id").to_numpy()
    redo = ~isin(walks.column("walk_id"), old_ids)
    redo |= mentions(walks, relabelled(cfg, "entities", done["entities"]), relabelled(cfg, "relations", done["relations"]))
    todo = walks.filter(pa.array(redo))
    cache, sink = open_cache(cfg)
    parts: list[pa.Table] = []
    if todo.num_rows:  # a verbalizer (an LLM's: a model) is built only when there is work
        verbalization = Verbalization(cfg.verbalize, load_labels(cfg), cache)
        batch = cfg.verbalize.batch_size
        parts = [sink(verbalization(todo.slice(i, batch))) for i in range(0, todo.num_rows, batch)]
    sink.flush()
    old = read_version(cfg.table("texts"), base)
    keep = isin(old.column("walk_id"), walks.column("walk_id").to_numpy()) & ~isin(old.column("walk_id"), todo.column("walk_id").to_numpy())
    texts = pa.concat_tables([old.filter(pa.array(keep)), *parts])
    if cfg.quality.gates:
        from kgwalk.quality import gate_texts, summarize, text_checks

        gate_texts(cfg, [summarize(text_checks(texts), "walk_id")])
    version = write_table(cfg.table("texts"), texts.cast(TEXTS_SCHEMA), metadata=reflects)
    crashpoint("texts.written")
    record(cfg, "texts", version, reflects)
    report.verbalized = todo.num_rows


def refresh_vectors(cfg: Config, state: dict[str, TableState], report: RefreshReport) -> None:
    """Step 4: embed texts that are new (a new walk, or a walk whose text changed) and append
    their vectors. Vectors of walks that are gone stay until compaction (vectors are matched to
    texts by walk_id and text_id, so they are never used)."""
    from kgwalk.embed.pipeline import VECTORS_SCHEMA, block_rows, embed_batch, embedder_from_conf

    reflects = _pending(cfg, state, "vectors", report)
    if reflects is None:
        return
    done = state["vectors"].reflects
    texts = read_table(cfg.table("texts"), ["walk_id", "text", "text_id"])
    old = read_version(cfg.table("texts"), done["texts"], ["walk_id", "text_id"])
    todo = texts.filter(pa.array(~isin(pa.array(text_pairs(texts)), text_pairs(old))))
    if todo.num_rows:
        embedder = embedder_from_conf(cfg.embed)
        step = block_rows(cfg.embed)
        vectors = pa.concat_tables([embed_batch(embedder, todo.slice(i, step)) for i in range(0, todo.num_rows, step)])
        crashpoint("vectors.embedded")
        version = write_table(cfg.table("vectors"), vectors.cast(VECTORS_SCHEMA), mode="append", metadata=reflects)
    else:
        version = table_version(cfg.table("vectors"))
    crashpoint("vectors.written")
    record(cfg, "vectors", version, reflects)
    report.embedded = todo.num_rows


def check_refresh_input(cfg: Config, path: str, snapshot: bool) -> None:
    """The change input is a file and the KG exists: checked before the writer lock, which creates
    the KG's folder, so a wrong path or name ends in one line and leaves nothing behind."""
    input_file(path, "snapshot" if snapshot else "change set")
    if not cfg.root.is_dir():
        raise KgwalkError(f"nothing to refresh: no KG named {cfg.name!r} in {cfg.warehouse} (run `kgwalk build` first)")


def run_refresh(cfg: Config, path: str, fmt: str = "auto", snapshot: bool = False, spark=None) -> RefreshReport:
    """The whole refresh under the writer lock; see the module docstring."""
    from kgwalk.refresh.index import refresh_index

    check_refresh_input(cfg, path, snapshot)
    report = RefreshReport()
    with writer_lock(cfg, "kgwalk refresh"):
        state = read_state(cfg)
        missing = [s for s in DERIVED_INPUTS if s not in state]
        if missing:
            raise KgwalkError(f"nothing to refresh: no recorded {missing[0]} (run `kgwalk build` first)")
        settings = settings_fingerprints(cfg)
        for step in ("walks", "texts", "vectors"):
            if state[step].reflects.get("settings") != settings[step]:
                raise KgwalkError(f"{step} settings changed since the corpus was built: refresh recomputes only changes; run `kgwalk build`")
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("kg", lambda: setattr(report, "kg", apply_kg(cfg, path, fmt, snapshot))),
            ("walks", lambda: refresh_walks(cfg, read_state(cfg), report, spark)),
            ("texts", lambda: refresh_texts(cfg, read_state(cfg), report)),
            ("vectors", lambda: refresh_vectors(cfg, read_state(cfg), report)),
            ("index", lambda: refresh_index(cfg, read_state(cfg), report)),
        ]
        for name, fn in steps:
            start = time.perf_counter()
            fn()
            report.seconds[name] = time.perf_counter() - start
            crashpoint(f"{name}.done")
    return report
