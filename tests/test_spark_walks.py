"""The Spark walks job writes to Delta exactly what the in-process engine computes."""

import numpy as np
import pyarrow as pa
import pytest

from kgwalk.config import load_config
from kgwalk.errors import KgwalkError
from kgwalk.kg.ingest import ingest
from kgwalk.storage import read_table
from kgwalk.walks import WALKS_SCHEMA, Graph, WalkSpec, all_walks
from kgwalk.walks.spark_job import build_walks

from conftest import SAMPLE_KG, TINY_KG, tables_from


def test_spark_job_matches_engine_for_any_partitioning(spark, tmp_path):
    cfg = load_config(None, ["walks.kinds=[bfs, random]", "walks.random.walks_per_root=8"], warehouse=str(tmp_path), name="s")
    tables = ingest(SAMPLE_KG, cfg.root)
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, cfg.walks.direction)
    expected = all_walks(graph, WalkSpec.from_conf(cfg.walks)).sort_by("walk_id")
    assert set(expected.column("kind").to_pylist()) == {"bfs", "random"}
    for partitions in (1, 5):
        cfg.spark.partitions = partitions
        result = build_walks(cfg, spark)
        written = read_table(cfg.table("walks")).sort_by("walk_id")
        assert result.walks == expected.num_rows
        assert written.equals(expected)
    assert len(set(expected.column("walk_id").to_pylist())) == expected.num_rows  # content ids are unique


def test_spark_submit_job_writes_the_same_walks(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    from conftest import REPO, TINY_KG

    cfg = load_config(None, name="t", warehouse=str(tmp_path))
    tables = ingest(TINY_KG, cfg.root)
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, cfg.walks.direction)
    expected = all_walks(graph, WalkSpec.from_conf(cfg.walks)).sort_by("walk_id")
    spark_submit = Path(sys.executable).parent / "spark-submit"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    run = subprocess.run(
        [str(spark_submit), "--master", "local[2]", str(REPO / "jobs" / "build_walks.py"), "--name", "t", "--warehouse", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    progress = f"[kgwalk] walks: {expected.num_rows:,} walks from {graph.num_nodes:,} roots"
    assert progress in run.stdout + run.stderr  # spark-submit merges the driver's streams
    assert read_table(cfg.table("walks")).sort_by("walk_id").equals(expected)


def test_spark_reads_only_the_current_version_of_a_delta_rs_table(spark, tmp_path):
    import pyarrow as pa

    from kgwalk.spark import read_delta
    from kgwalk.storage import write_table

    path = tmp_path / "t"
    write_table(path, pa.table({"x": [1, 2, 3]}))
    write_table(path, pa.table({"x": [10, 20]}))  # overwrite: the old file stays in the folder
    assert len(list(path.glob("*.parquet"))) == 2
    assert sorted(r.x for r in read_delta(spark, str(path)).collect()) == [10, 20]


def random_kg(seed: int, nodes: int = 40, edges: int = 120) -> list[tuple[str, str, str]]:
    """A small random KG with what breaks walkers: hubs, self-loops, parallel and reverse edges."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, nodes + 1)  # Zipf-like: a few hubs
    heads = rng.choice(nodes, edges, p=weights / weights.sum())
    tails = rng.choice(nodes, edges)
    rels = rng.choice(["r", "s", "t"], edges)
    triples = {(f"N{h}", r, f"N{t}") for h, r, t in zip(heads, rels, tails)}
    triples |= {("N1", "r", "N1"), ("N2", "r", "N3"), ("N2", "s", "N3"), ("N3", "r", "N2")}
    return sorted(triples)


JOIN_SPECS = [
    WalkSpec(kinds=("bfs", "random"), direction="both", depth=3, hub_degree=6, walks_per_root=12, length=3),
    WalkSpec(kinds=("bfs",), direction="out", depth=3, hub_degree=None, max_per_signature=None, bfs_mode="maximal"),
    WalkSpec(kinds=("bfs", "random"), direction="in", depth=2, max_per_signature=1, max_per_root=3, walks_per_root=20),
    WalkSpec(kinds=("bfs",), direction="both", depth=3, hub_degree=6, bfs_mode="paths"),
    WalkSpec(kinds=("bfs",), direction="both", depth=3, hub_degree=6, bfs_mode="paths", max_per_signature=2),
]


@pytest.mark.parametrize("spec", JOIN_SPECS, ids=["both-hubs", "out-maximal", "in-capped", "both-paths", "both-paths-2"])
def test_join_engine_writes_the_same_walks_as_the_memory_engine(spark, spec):
    from kgwalk.walks.join_engine import join_walks

    t = tables_from(random_kg(seed=len(spec.kinds) + spec.depth))
    graph = Graph.from_arrow(t.edges, t.entities, t.relations, spec.direction)
    expected = all_walks(graph, spec).sort_by("walk_id")
    assert expected.num_rows > 50
    joined = join_walks(spark, spark.createDataFrame(t.edges.to_pandas()), spark.createDataFrame(t.entities.to_pandas()), t.relations, spec)
    got = pa.Table.from_pandas(joined.toPandas(), schema=WALKS_SCHEMA, preserve_index=False).sort_by("walk_id")
    assert got.equals(expected)


def test_walks_job_on_the_join_engine_writes_the_memory_engines_table(spark, tmp_path):
    cfg = load_config(None, ["walks.engine=join", "walks.depth=2"], warehouse=str(tmp_path), name="j")
    tables = ingest(TINY_KG, cfg.root)
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, cfg.walks.direction)
    expected = all_walks(graph, WalkSpec.from_conf(cfg.walks)).sort_by("walk_id")
    result = build_walks(cfg, spark)
    assert (result.engine, result.walks) == ("join", expected.num_rows)
    assert read_table(cfg.table("walks")).sort_by("walk_id").equals(expected)


def test_auto_engine_follows_the_graph_size(tmp_path):
    from kgwalk.walks.spark_job import choose_engine, csr_bytes

    cfg = load_config(None, warehouse=str(tmp_path), name="a")
    tables = ingest(TINY_KG, cfg.root)
    size = csr_bytes(tables.edges.num_rows, tables.entities.num_rows, "both")
    cfg.walks.max_graph_bytes = size
    assert choose_engine(cfg) == "memory"
    cfg.walks.max_graph_bytes = size - 1
    assert choose_engine(cfg) == "join"
    with pytest.raises(KgwalkError, match="walks.engine"):  # refused as the config loads
        choose_engine(load_config(None, ["walks.engine=gpu"], warehouse=str(tmp_path), name="a"))
