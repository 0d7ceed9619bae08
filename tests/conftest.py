import os
import shutil
from pathlib import Path

import pytest

from kgwalk.kg.ingest import build_tables
from kgwalk.kg.readers import ReadResult
from kgwalk.walks import Graph, WalkSpec, all_walks
from kgwalk.walks.labels import LabelLookup

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


def labelled_walks(triples: list[tuple[str, str, str]], spec: WalkSpec, **engine_args) -> list[dict]:
    """Every root's walks on a hand-made graph, as rows with node_labels and rel_labels."""
    t = tables_from(triples)
    graph = Graph.from_arrow(t.edges, t.entities, t.relations, spec.direction)
    return LabelLookup(t.entities, t.relations).attach(all_walks(graph, spec, **engine_args)).to_pylist()


@pytest.fixture(scope="module", autouse=True)
def module_scratch_removed(request, tmp_path_factory):
    """Removes the folders a test module's fixtures made (its warehouses) once the module is done, unless one of its
    tests failed. With `tmp_path_retention_policy = "failed"` a passing test's own folder goes at its teardown; without
    this, ~40 module-scoped warehouses of ~250 MB each would wait for the session's end, and a CI disk would fill."""
    base = tmp_path_factory.getbasetemp()
    before = set(base.iterdir())
    failed = request.session.testsfailed
    yield
    if request.session.testsfailed == failed:
        for made in set(base.iterdir()) - before:
            shutil.rmtree(made, ignore_errors=True)


@pytest.fixture(scope="session")
def spark():
    from kgwalk.config import SparkConf
    from kgwalk.spark import get_spark

    session = get_spark(SparkConf(master="local[2]", settings={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}))
    yield session
    session.stop()


@pytest.fixture(scope="module")
def sample_corpus(tmp_path_factory):
    """The MetaQA sample's corpus, built in this process with the test embedder; one per test module, which may add
    to it (a fitted prior)."""
    import corpus

    cfg = corpus.config(tmp_path_factory.mktemp("sample"), SAMPLE_KG)
    corpus.build_in_process(cfg)
    return cfg
