"""The walks table: every root's walks as a Spark job (build), or the walks of the roots an edge
change can reach, in this process or as a Spark job (refresh)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.faults import crashpoint
from kgwalk.kg.ids import IdSet
from kgwalk.stages.base import Stage, Step
from kgwalk.stages.diff import WalksDiff, isin, matched, remember_walks_diff
from kgwalk.state import KG_TABLES, record
from kgwalk.storage import read_table, read_version, scan, write_table
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA

if TYPE_CHECKING:
    from kgwalk.walks.graph import Graph
    from kgwalk.walks.spark_job import WalksResult

# walk settings that decide how fast the walks are made, not which
_HOW = ("engine", "max_graph_bytes", "roots_per_batch", "max_paths_per_batch", "processes")


def _settings(cfg: Config) -> dict[str, Any]:
    return {k: v for k, v in asdict(cfg.walks).items() if k not in _HOW}


def _build(step: Step) -> WalksResult:
    from kgwalk.walks.spark_job import build_walks

    return build_walks(step.cfg, step.spark)


def _describe(cfg: Config, r: WalksResult) -> str:
    w = cfg.walks
    return f"{r.walks:,} walks from {r.roots:,} roots ({r.engine} engine; {','.join(w.kinds)}, direction {w.direction}, depth {w.depth})"


def walk_roots(cfg: Config, graph: Graph, roots: np.ndarray, spec: WalkSpec, spark: Any = None) -> pa.Table:
    """Walks of the given roots: the in-memory engine in processes of this machine
    (walks.processes), or spread over Spark tasks (spark-submit jobs/refresh_walks.py) for big
    change sets."""
    from kgwalk.walks.engine import walks_in_processes

    if spark is None:
        w = cfg.walks
        return walks_in_processes(graph, roots, spec, w.roots_per_batch, w.max_paths_per_batch, w.processes)
    from kgwalk.walks.spark_job import walk_roots_on_spark

    return walk_roots_on_spark(cfg, spark, graph, roots, spec)


def _update(step: Step) -> None:
    """Recompute the walks of every root the edge changes can reach, keep the rest."""
    from kgwalk.walks.affected import affected_roots
    from kgwalk.walks.graph import Graph

    reflects = step.pending()
    if reflects is None:
        return
    cfg, report = step.cfg, step.report
    done, base = step.state["walks"].reflects, step.state["walks"].version
    spec = WalkSpec.from_conf(cfg.walks)
    old_edges = read_version(cfg.table("edges"), done["edges"], ["src", "rel", "dst"])
    columns = {"edges": ["src", "rel", "dst"], "entities": ["id"], "relations": ["id", "label"]}  # labels name explicit inverses
    new = {t: read_table(cfg.table(t), columns[t]) for t in KG_TABLES}
    old_relations = read_version(cfg.table("relations"), done["relations"], ["id", "label"])
    relations = pa.concat_tables([old_relations, new["relations"]]).group_by(["id", "label"]).aggregate([])
    graph = Graph.from_arrow(new["edges"], new["entities"], new["relations"], cfg.walks.direction)
    roots = affected_roots(old_edges, new["edges"], spec, relations, graph=graph)
    walk_now = roots[isin(roots, graph.node_ids)]  # affected roots that are still entities
    fresh = walk_roots(cfg, graph, walk_now, spec, step.spark).cast(WALKS_SCHEMA)
    # The previous version is streamed twice, never held: its key columns first (which walks the
    # recomputed ones replace), then its whole rows into the new version (the 10M-edge KG's 64M
    # walks took 20 GB read whole).
    touched = IdSet(roots)
    before_parts, kept = [], 0
    keys = scan(cfg.table("walks"), version=base, columns=["walk_id", "root", "count"])
    for batch in keys:
        mask = touched.mask(batch.column("root"))
        before_parts.append(batch.filter(pa.array(mask)))
        kept += batch.num_rows - int(mask.sum())
    before = pa.Table.from_batches(before_parts, keys.schema)
    if cfg.quality.gates:
        from kgwalk.quality import gate_walks

        gate_walks(cfg, fresh, table_rows=kept + fresh.num_rows, kg=new)  # the walks kept passed it unchanged
    crashpoint("walks.computed")

    def rows() -> Iterator[pa.RecordBatch]:
        for batch in scan(cfg.table("walks"), version=base):
            yield batch.filter(pa.array(~touched.mask(batch.column("root")))).cast(WALKS_SCHEMA)
        yield from fresh.to_batches()

    version = write_table(cfg.table("walks"), rows(), schema=WALKS_SCHEMA, metadata=reflects)
    crashpoint("walks.written")
    record(cfg, "walks", version, reflects)
    # the kept walks are in both versions, so the difference lies between `before` and `fresh`
    in_fresh, in_before = matched(before.column("walk_id"), fresh.column("walk_id"))
    diff = WalksDiff(base, version, kept + before.num_rows, before.select(["walk_id", "root"]).filter(pa.array(~in_fresh)), fresh.filter(pa.array(~in_before)))
    remember_walks_diff(cfg, step.shared, diff)
    report.affected_roots = len(roots)
    report.walks_recomputed = fresh.num_rows
    report.walks_added, report.walks_removed = diff.added.num_rows, diff.removed.num_rows
    counts = before.select(["walk_id", "count"]).join(fresh.select(["walk_id", "count"]), "walk_id", right_suffix="_new", join_type="inner")
    report.walks_recounted = int(np.sum(counts.column("count").to_numpy() != counts.column("count_new").to_numpy()))


WALKS: Stage[WalksResult] = Stage(
    name="walks", command="walks", help="Spark job: BFS and random walks from every entity -> Delta `walks`",
    inputs=KG_TABLES, build=_build, describe=_describe, update=_update, settings=_settings,
)
