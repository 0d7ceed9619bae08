"""The Spark walks job writes to Delta exactly what the in-process engine computes."""

from kgwalk.config import load_config
from kgwalk.kg.ingest import ingest
from kgwalk.storage import read_table
from kgwalk.walks import Graph, WalkSpec, all_walks
from kgwalk.walks.spark_job import build_walks

from conftest import SAMPLE_KG


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
