"""The walks stage as a Spark job, on one of two engines that write the same walk table:

- memory: the CSR graph is built once on the driver and broadcast; roots are partitioned across
  tasks, each running the vectorised NumPy engine over its roots (mapInArrow).
- join: frontier expansion with DataFrame joins (walks.join_engine), for graphs whose CSR does
  not fit an executor. `auto` picks memory while the CSR is at most walks.max_graph_bytes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.spark import get_spark, read_delta, task_progress, write_delta, write_delta_from_arrow
from kgwalk.storage import open_table, read_table
from kgwalk.walks.engine import generate_walks
from kgwalk.walks.graph import Graph
from kgwalk.walks.join_engine import join_walks
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA


CSR_BYTES_PER_ENTRY = 9  # neighbour int32 + relation int32 + direction bool
CSR_BYTES_PER_NODE = 16  # id int64 + indptr int64


@dataclass
class WalksResult:
    walks: int
    roots: int
    engine: str
    spark_partitions: int


def csr_bytes(edges: int, nodes: int, direction: str) -> int:
    """The in-memory engine's graph size, known from table sizes before anything is loaded."""
    entries = edges * (2 if direction == "both" else 1)
    return entries * CSR_BYTES_PER_ENTRY + nodes * CSR_BYTES_PER_NODE


def choose_engine(cfg: Config) -> str:
    engine = cfg.walks.engine
    if engine != "auto":
        return engine
    rows = {n: open_table(cfg.table(n)).to_pyarrow_dataset().count_rows() for n in ("edges", "entities")}
    return "memory" if csr_bytes(rows["edges"], rows["entities"], cfg.walks.direction) <= cfg.walks.max_graph_bytes else "join"


def _walk_partitions(graph_bc, roots_bc, spec: WalkSpec, partitions: int, roots_per_batch: int, max_paths: int):
    """A mapInArrow function over partition numbers: partition p walks the p-th contiguous slice
    of the roots (`roots_bc`, or every node when it is None). Roots never travel through Spark
    (no shuffle); ids are hashes, so slices of id order are random samples and the work spreads
    evenly."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        graph = graph_bc.value
        all_roots = graph.node_ids if roots_bc is None else roots_bc.value
        bounds = np.linspace(0, len(all_roots), partitions + 1).astype(np.int64)
        for batch in batches:
            for p in batch.column(0).to_numpy():
                roots = all_roots[bounds[p] : bounds[p + 1]]
                for table in generate_walks(graph, roots, spec, roots_per_batch, max_paths):
                    yield from table.to_batches()

    return run


def load_graph(cfg: Config) -> Graph:
    """Build the CSR the executors will share on the driver, reading the tables with delta-rs:
    pulling them through Spark cost seconds of JVM round trips for what is a columnar file read."""
    columns = {"edges": ["src", "rel", "dst"], "entities": ["id"], "relations": ["id", "label"]}  # labels name explicit inverses
    tables = {n: read_table(cfg.table(n), c) for n, c in columns.items()}
    return Graph.from_arrow(tables["edges"], tables["entities"], tables["relations"], cfg.walks.direction)


def build_walks(cfg: Config, spark=None) -> WalksResult:
    """Run the job on `spark`, the active session, or a session of its own that it stops after."""
    from pyspark.sql import SparkSession

    for name in ("edges", "entities", "relations"):
        open_table(cfg.table(name), what="ingest")  # fail fast, before Spark starts
    engine = choose_engine(cfg)
    own_session = spark is None and SparkSession.getActiveSession() is None
    spark = spark or get_spark(cfg.spark)
    try:
        return (_memory_engine if engine == "memory" else _join_engine)(cfg, spark)
    finally:
        if own_session:
            spark.stop()  # free the JVM before the Ray stages of a build


def _partitions(cfg: Config, spark) -> int:
    return cfg.spark.partitions or 2 * spark.sparkContext.defaultParallelism


def _gate(cfg: Config, spark):
    """The walks' quality gate (quality.gates): checked in the tasks, validated before the commit."""
    if not cfg.quality.gates:
        return None
    from kgwalk.quality import walks_gate

    return walks_gate(cfg, spark)


def _written(cfg: Config) -> int:
    return open_table(cfg.table("walks")).to_pyarrow_dataset().count_rows()


def _memory_engine(cfg: Config, spark) -> WalksResult:
    spec = WalkSpec.from_conf(cfg.walks)
    graph = load_graph(cfg)
    graph_bc = spark.sparkContext.broadcast(graph)
    partitions = _partitions(cfg, spark)
    slices = spark.range(partitions, numPartitions=partitions)  # one slice number per task
    produce = _walk_partitions(graph_bc, None, spec, partitions, cfg.walks.roots_per_batch, cfg.walks.max_paths_per_batch)
    with task_progress(spark, "walks"):
        write_delta_from_arrow(slices, produce, cfg.table("walks"), WALKS_SCHEMA, gate=_gate(cfg, spark))
    graph_bc.unpersist()
    return WalksResult(walks=_written(cfg), roots=graph.num_nodes, engine="memory", spark_partitions=partitions)


def _join_engine(cfg: Config, spark) -> WalksResult:
    spec = WalkSpec.from_conf(cfg.walks)
    entities = read_delta(spark, cfg.table("entities"))
    partitions = _partitions(cfg, spark)
    relations = read_table(cfg.table("relations"), ["id", "label"])
    walks = join_walks(spark, read_delta(spark, cfg.table("edges")), entities.repartition(partitions), relations, spec)
    with task_progress(spark, "walks"):
        write_delta(walks, cfg.table("walks"), WALKS_SCHEMA, gate=_gate(cfg, spark))
    return WalksResult(walks=_written(cfg), roots=entities.count(), engine="join", spark_partitions=partitions)


def walk_roots_on_spark(cfg: Config, spark, graph: Graph, roots: np.ndarray, spec: WalkSpec) -> pa.Table:
    """Walks of some roots as Arrow on the driver (refresh: the affected roots only)."""
    sc = spark.sparkContext
    graph_bc, roots_bc = sc.broadcast(graph), sc.broadcast(np.sort(roots))
    partitions = _partitions(cfg, spark)
    produce = _walk_partitions(graph_bc, roots_bc, spec, partitions, cfg.walks.roots_per_batch, cfg.walks.max_paths_per_batch)
    from pyspark.sql.pandas.types import from_arrow_schema

    walks = spark.range(partitions, numPartitions=partitions).mapInArrow(produce, from_arrow_schema(WALKS_SCHEMA)).toArrow()
    graph_bc.unpersist()
    roots_bc.unpersist()
    return walks.cast(WALKS_SCHEMA)
