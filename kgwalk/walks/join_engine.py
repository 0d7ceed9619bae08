"""The join engine: walks by frontier expansion with DataFrame joins against an adjacency table,
the way GraphFrames traverses, for graphs beyond an executor's memory.

It computes the same walk table as the in-memory engine: the adjacency table carries each
entry's position in the canonical order (relation, direction, neighbour), BFS keeps per
(root, node) the path with the smallest position sequence (the in-memory engine's first path),
and random steps call the very function the in-memory walker calls.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from kgwalk.kg.relations import inverse_relation_pairs
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA, list_array, prefix_ids, walk_ids_of
from kgwalk.walks.walkers import random_step_entries


def drop_mirrored_copies(spark: SparkSession, edges: DataFrame, relations: pa.Table) -> DataFrame:
    """`walk_edges` as joins: without the edges (b, r_inverse, a) whose fact (a, r, b) is an edge too."""
    pairs = inverse_relation_pairs(relations) if "label" in relations.column_names else []
    if not pairs:
        return edges
    named = spark.createDataFrame(pairs, "base bigint, inverse bigint")
    copies = edges.join(named, edges.rel == named.base).select(
        F.col("dst").alias("src"), F.col("inverse").alias("rel"), F.col("src").alias("dst"))
    return edges.join(copies.distinct(), ["src", "rel", "dst"], "left_anti")


def adjacency(edges: DataFrame, direction: str) -> DataFrame:
    """(u, pos, v, rel, inverse, v_deg): every traversal entry with its canonical position and
    the degree of the node it leads to (hubs are known without another join)."""
    parts = []
    if direction in ("out", "both"):
        parts.append(edges.select(F.col("src").alias("u"), F.col("dst").alias("v"), "rel", F.lit(False).alias("inverse")))
    if direction in ("in", "both"):
        backward = edges.where(F.col("src") != F.col("dst")) if direction == "both" else edges  # a self-loop is one fact
        parts.append(backward.select(F.col("dst").alias("u"), F.col("src").alias("v"), "rel", F.lit(True).alias("inverse")))
    adj = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    adj = adj.withColumn("pos", F.row_number().over(Window.partitionBy("u").orderBy("rel", "inverse", "v")) - 1)
    deg = adj.groupBy("u").agg(F.count("*").alias("deg"))
    v_deg = deg.select(F.col("u").alias("v"), F.col("deg").alias("v_deg"))
    return adj.join(v_deg, "v", "left").fillna(0, ["v_deg"])


def _steps_from(adj: DataFrame, node_column: str) -> DataFrame:
    """The adjacency renamed for joining onto walk state: `u` as the state's node column, the
    step's direction apart from the walk's `inverse` list."""
    return adj.select(F.col("u").alias(node_column), "pos", "v", "rel", F.col("inverse").alias("step_inverse"), "v_deg")


def _passable(deg_col: str, spec: WalkSpec, t: int):
    """The hub rule: the root always expands, later nodes only up to hub_degree entries."""
    if spec.hub_degree is None or t == 1:
        return F.lit(True)
    return F.col(deg_col) <= spec.hub_degree


def _ids_appended(df: DataFrame, kind: str, with_prefixes: bool = False) -> DataFrame:
    """Adds walk_id (and `prefixes`: the ids of its proper prefixes) by the shared NumPy code."""
    extra = pa.schema([("walk_id", pa.int64())] + ([("prefixes", pa.list_(pa.int64()))] if with_prefixes else []))

    def add(batches):
        for batch in batches:
            columns = [pa.array(walk_ids_of(batch, kind))]
            if with_prefixes:
                ids, valid = prefix_ids(batch, kind)
                columns.append(list_array(pa.array(ids[valid]), valid.sum(axis=1)))
            yield pa.RecordBatch.from_arrays(list(batch.columns) + columns, names=batch.schema.names + extra.names)

    return df.mapInArrow(add, StructType(list(df.schema.fields) + list(from_arrow_schema(extra).fields)))


def _finish(walks: DataFrame, kind: str, spec: WalkSpec, order: list) -> DataFrame:
    """Content ids, then the shared per-root rules (see table.finish) as DataFrame operations."""
    maximal = kind == "bfs" and spec.bfs_mode == "maximal"
    walks = _ids_appended(walks, kind, with_prefixes=maximal)
    if spec.max_per_root is not None:
        rank = F.row_number().over(Window.partitionBy("root").orderBy(*order))
        walks = walks.withColumn("_rank", rank).where(F.col("_rank") <= spec.max_per_root).drop("_rank")
    if maximal:
        extended = walks.select(F.explode("prefixes").alias("walk_id")).distinct()
        walks = walks.drop("prefixes").join(extended, "walk_id", "left_anti")
    return walks


def bfs_walks(spark: SparkSession, roots: DataFrame, adj: DataFrame, spec: WalkSpec) -> DataFrame:
    """BFS walks of `roots` (column id) level by level: expand, drop reached nodes, keep the
    canonically first path per (root, node), cap per signature (bfs_mode `paths`: keep the first
    path per (root, relation path, node) of the paths that revisit no node, as the walker does)."""
    paths = roots.select(
        F.col("id").alias("root"),
        F.col("id").alias("last"),
        F.array(F.col("id")).alias("nodes"),
        F.array().cast("array<bigint>").alias("rels"),
        F.array().cast("array<boolean>").alias("inverse"),
        F.array().cast("array<int>").alias("key"),
        F.lit(0).cast("bigint").alias("last_deg"),
    )
    visited = roots.select(F.col("id").alias("root"), F.col("id").alias("v"))
    levels = []

    def extended(steps: DataFrame) -> DataFrame:
        return steps.select(
            "root",
            "v",
            F.concat("nodes", F.array("v")).alias("nodes"),
            F.concat("rels", F.array("rel")).alias("rels"),
            F.concat("inverse", F.array("step_inverse")).alias("inverse"),
            F.concat("key", F.array(F.col("pos").cast("int"))).alias("key"),
            F.col("v_deg").alias("last_deg"),
        )

    every_path = spec.bfs_mode == "paths"
    for t in range(1, spec.depth + 1):
        steps = paths.where(_passable("last_deg", spec, t)).join(_steps_from(adj, "last"), "last")
        if every_path:  # states: the first path per (root, relation path, end); a walk never revisits a node
            cand = extended(steps.where(~F.array_contains("nodes", F.col("v"))))
            state = ["root", "rels", "inverse", "v"]
        else:  # the first path per (root, node) not reached before
            cand = extended(steps.join(visited, ["root", "v"], "left_anti"))
            state = ["root", "v"]
        first = F.row_number().over(Window.partitionBy(*state).orderBy("key"))
        chosen = cand.withColumn("_first", first).where(F.col("_first") == 1).drop("_first").localCheckpoint()
        # a root's self-loops are facts of their own (walks of one step), though they reach no new node
        loops = extended(steps.where(F.col("v") == F.col("root"))).localCheckpoint() if t == 1 else None
        if chosen.isEmpty() and (loops is None or loops.isEmpty()):
            break
        if not every_path:
            visited = visited.unionByName(chosen.select("root", "v")).localCheckpoint()
        paths = chosen.withColumnRenamed("v", "last")
        kept = paths if loops is None else paths.unionByName(loops.withColumnRenamed("v", "last"))
        if spec.max_per_signature is not None and t >= 2:  # a root's own facts are never capped
            rank = F.row_number().over(Window.partitionBy("root", "rels", "inverse").orderBy("key"))
            kept = kept.withColumn("_rank", rank).where(F.col("_rank") <= spec.max_per_signature).drop("_rank")
        levels.append(kept.select("root", F.lit(t).cast("tinyint").alias("steps"), "nodes", "rels", "inverse", "key"))
    if not levels:
        return spark.createDataFrame([], from_arrow_schema(WALKS_SCHEMA))
    walks = levels[0]
    for level in levels[1:]:
        walks = walks.unionByName(level)
    walks = walks.withColumn("count", F.lit(1)).withColumn("kind", F.lit("bfs"))
    return _finish(walks, "bfs", spec, ["steps", "key"]).select(*WALKS_SCHEMA.names)


def random_walks(spark: SparkSession, roots: DataFrame, adj: DataFrame, spec: WalkSpec) -> DataFrame:
    """`walks_per_root` walkers per root, advanced one step per round by a join on (node, position)."""
    deg = adj.groupBy("u").agg(F.count("*").alias("deg"))
    walkers = roots.select(F.col("id").alias("root")).crossJoin(
        spark.range(spec.walks_per_root).select(F.col("id").alias("walk_index"))
    ).select(
        "root",
        "walk_index",
        F.col("root").alias("cur"),
        F.array(F.col("root")).alias("nodes"),
        F.array().cast("array<bigint>").alias("rels"),
        F.array().cast("array<boolean>").alias("inverse"),
        F.lit(True).alias("alive"),
    )
    for t in range(1, spec.length + 1):
        pick = _step_udf(spec.seed, t)
        state = walkers.join(deg.withColumnRenamed("u", "cur"), "cur", "left").fillna(0, ["deg"])
        moving = F.col("alive") & (F.col("deg") > 0) & _passable("deg", spec, t)
        stopped = state.where(~moving).withColumn("alive", F.lit(False)).drop("deg")
        moved = (
            state.where(moving)
            .withColumn("pos", pick("root", "walk_index", "cur", "deg"))
            .join(_steps_from(adj, "cur"), ["cur", "pos"])
            .select(
                "root",
                "walk_index",
                F.col("v").alias("cur"),
                F.concat("nodes", F.array("v")).alias("nodes"),
                F.concat("rels", F.array("rel")).alias("rels"),
                F.concat("inverse", F.array("step_inverse")).alias("inverse"),
                F.lit(True).alias("alive"),
            )
        )
        walkers = stopped.unionByName(moved).localCheckpoint()
    walks = (
        walkers.where(F.size("rels") > 0)
        .groupBy("root", "nodes", "rels", "inverse")
        .agg(F.count("*").cast("int").alias("count"))
        .withColumn("steps", F.size("rels").cast("tinyint"))
        .withColumn("kind", F.lit("random"))
    )
    return _finish(walks, "random", spec, [F.col("count").desc(), "walk_id"]).select(*WALKS_SCHEMA.names)


def _step_udf(seed: int, t: int):
    @F.pandas_udf("int")
    def pick(root: pd.Series, walk_index: pd.Series, cur: pd.Series, deg: pd.Series) -> pd.Series:
        entries = random_step_entries(seed, root.to_numpy(), walk_index.to_numpy(), t, cur.to_numpy(), deg.to_numpy())
        return pd.Series(entries.astype(np.int32))

    return pick


def join_walks(spark: SparkSession, edges: DataFrame, entities: DataFrame, relations: pa.Table, spec: WalkSpec) -> DataFrame:
    """Every entity's walks of every kind in `spec`, as a DataFrame in WALKS_SCHEMA; `relations`
    (id, label: small, on the driver) name explicit inverse relations."""
    if spec.direction == "both":
        edges = drop_mirrored_copies(spark, edges, relations)
    adj = adjacency(edges, spec.direction).localCheckpoint()
    roots = entities.select("id")
    walkers = {"bfs": bfs_walks, "random": random_walks}
    parts = [walkers[kind](spark, roots, adj, spec) for kind in spec.kinds]
    walks = parts[0]
    for part in parts[1:]:
        walks = walks.unionByName(part)
    return walks
