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
