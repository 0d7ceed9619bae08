"""The walks stage as a Spark job: roots partitioned across tasks, each running the in-memory
engine over a broadcast CSR graph (mapInArrow), walks written to Delta."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

from kgwalk.config import Config
from kgwalk.spark import get_spark, read_delta, write_delta
from kgwalk.storage import open_table
from kgwalk.walks.engine import generate_walks
from kgwalk.walks.graph import Graph
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA


@dataclass
class WalksResult:
    walks: int
    roots: int
    spark_partitions: int


def _walk_partition(graph_bc, spec: WalkSpec, roots_per_batch: int):
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        graph = graph_bc.value
        ids = [b.column(0).to_numpy() for b in batches]
        roots = np.concatenate(ids) if ids else np.empty(0, np.int64)
        for table in generate_walks(graph, np.sort(roots), spec, roots_per_batch):
            yield from table.to_batches()

    return run


def load_graph(spark, cfg: Config) -> Graph:
    """Collect the canonical tables to the driver and build the CSR the executors will share."""
    tables = {n: read_delta(spark, cfg.table(n)).toArrow() for n in ("edges", "entities", "relations")}
    return Graph.from_arrow(tables["edges"], tables["entities"], tables["relations"], cfg.walks.direction)


def build_walks(cfg: Config, spark=None) -> WalksResult:
    """Run the job on `spark`, the active session, or a session of its own that it stops after."""
    from pyspark.sql import SparkSession

    for name in ("edges", "entities", "relations"):
        open_table(cfg.table(name), what="ingest")  # fail fast, before Spark starts
    own_session = spark is None and SparkSession.getActiveSession() is None
    spark = spark or get_spark(cfg.spark)
    try:
        return _build_walks(cfg, spark)
    finally:
        if own_session:
            spark.stop()  # free the JVM before the Ray stages of a build


def _build_walks(cfg: Config, spark) -> WalksResult:
    spec = WalkSpec.from_conf(cfg.walks)
    graph = load_graph(spark, cfg)
    graph_bc = spark.sparkContext.broadcast(graph)
    partitions = cfg.spark.partitions or 2 * spark.sparkContext.defaultParallelism
    roots = spark.createDataFrame(pa.table({"id": graph.node_ids})).repartition(partitions)
    walks = roots.mapInArrow(
        _walk_partition(graph_bc, spec, cfg.walks.roots_per_batch), from_arrow_schema(WALKS_SCHEMA)
    )
    write_delta(walks, cfg.table("walks"), WALKS_SCHEMA)
    graph_bc.unpersist()
    count = open_table(cfg.table("walks")).to_pyarrow_dataset().count_rows()
    return WalksResult(walks=count, roots=graph.num_nodes, spark_partitions=partitions)
