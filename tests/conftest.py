import os
from pathlib import Path

import pytest

from kgwalk.kg.ingest import build_tables
from kgwalk.kg.readers import ReadResult
from kgwalk.walks import Graph

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

REPO = Path(__file__).resolve().parent.parent
SAMPLE_KG = REPO / "data" / "sample" / "metaqa_sample.txt"
TINY_KG = Path(__file__).resolve().parent / "data" / "tiny.txt"


def tables_from(triples: list[tuple[str, str, str]]):
    read = ReadResult(triples=[(i + 1, h, r, t) for i, (h, r, t) in enumerate(triples)])
    return build_tables(read, "test")


def graph_from(triples: list[tuple[str, str, str]], direction: str = "both") -> Graph:
    t = tables_from(triples)
    return Graph.from_arrow(t.edges, t.entities, t.relations, direction)


@pytest.fixture(scope="session")
def spark():
    from kgwalk.config import SparkConf
    from kgwalk.spark import get_spark

    session = get_spark(SparkConf(master="local[2]", settings={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}))
    yield session
    session.stop()
