"""kgwalk on real clusters over loopback: the lines of docs/clusters.md, run as they stand against a
standalone Spark cluster and a Ray cluster started here (tests/cluster.py), give the same walks and
index content as a local build of the same graph.

The only site values are the page's environment variables. The index goes to qdrant-client's
local mode (a folder as QDRANT_URL), the one Qdrant "server" these machines have; it speaks the
server's API.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from kgwalk.config import load_config
from kgwalk.embed.model import resolve_precision
from cluster import loopback_clusters, processes_in, spark_applications
from conftest import REPO, TINY_KG
from corpus import build_in_process, corpus

from kgwalk.kg.synth import write_synth

pytestmark = pytest.mark.cluster

# Two removals and three additions (one of them a new entity) on tests/data/tiny.txt.
REMOVED = [("Arizona Dream", "starred_actors", "Faye Dunaway"), ("Arizona Dream", "written_by", "Emir Kusturica")]
ADDED = [("Kismet", "starred_actors", "Faye Dunaway"), ("Arizona Dream", "release_year", "1993"),
         ("Night on Earth", "directed_by", "Jim Jarmusch")]


CLUSTER_PAGE = REPO / "docs" / "clusters.md"


def page_block(name: str) -> str:
    """The bash block that follows `<!-- cluster-test: NAME -->` in docs/clusters.md."""
    text = CLUSTER_PAGE.read_text()
    m = re.search(rf"<!-- cluster-test: {name} -->\s*```bash\n(.*?)```", text, re.S)
    assert m, f"docs/clusters.md has no cluster-test block {name!r}"
    return m.group(1)


def run_block(name: str, env: dict[str, str]) -> str:
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", page_block(name)], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, f"docs/clusters.md block {name!r} failed ({result.returncode}):\n{result.stdout[-6000:]}\n{result.stderr[-3000:]}"
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def clusters():
    # short: Ray's unix sockets live under it, and their paths may not exceed 107 bytes
    base = Path(tempfile.mkdtemp(prefix="kgwalk-clusters-"))
    with loopback_clusters(base) as env:
        yield env
    assert processes_in(str(base)) == [], "processes of the loopback clusters outlived the test"
    shutil.rmtree(base, ignore_errors=True)


def site_env(clusters: dict[str, str], warehouse, qdrant, **extra: str) -> dict[str, str]:
    return os.environ | clusters | {
        "KGWALK_WAREHOUSE": str(warehouse),
        "QDRANT_URL": str(qdrant),
        "KGWALK_SPARK_PACKAGES": "",  # no Maven here: delta-rs and no GraphFrames
        "KGWALK_EXECUTOR_MEMORY": "1g",  # the loopback worker offers 2g
        "KGWALK_EXECUTOR_CORES": "2",
    } | extra


def test_cluster_side_python_cannot_import_kgwalk_unless_shipped(clusters, tmp_path):
    """What makes the next tests prove shipping: the executors' and Ray workers' Python."""
    probe = subprocess.run([clusters["PYSPARK_PYTHON"], "-c", "import numpy, pyarrow, pyspark, ray; import kgwalk"],
                           cwd=tmp_path, capture_output=True, text=True)
    assert probe.returncode == 1 and "No module named 'kgwalk'" in probe.stderr


@pytest.fixture(scope="module")
def cluster_build(clusters, tmp_path_factory):
    """tests/data/tiny.txt built through the clusters with docs/clusters.md's lines, then refreshed
    with a change set; returns the site environment and the new graph as a file."""
    tmp = tmp_path_factory.mktemp("cluster-build")
    lines = TINY_KG.read_text().splitlines()
    removed = {"|".join(t) for t in REMOVED}
    assert removed <= set(lines)
    changes = tmp / "changes.txt"
    changes.write_text("".join(f"{'|'.join(t)}|remove\n" for t in REMOVED) + "".join(f"{'|'.join(t)}|add\n" for t in ADDED))
    new_kg = tmp / "new.txt"
    new_kg.write_text("".join(f"{line}\n" for line in lines if line not in removed) + "".join(f"{'|'.join(t)}\n" for t in ADDED))

    env = site_env(clusters, tmp / "cluster", tmp / "qdrant-cluster", KG=str(TINY_KG), CHANGES=str(changes))
    build_log = run_block("build", env)
    assert "Job 'raysubmit_" in build_log and "succeeded" in build_log
    refresh_log = run_block("refresh", env)
    assert '"refresh": "' in refresh_log  # the refresh job's report line
    assert refresh_log.count("up to date") == 4 and "behind" not in refresh_log  # kgwalk status: walks, texts, vectors, index
    # the walk job and the refresh job ran on the standalone cluster, not in a local Spark
    apps = spark_applications(clusters["SPARK_MASTER_UI"])
    assert len(apps) == 2 and all(a["state"] == "FINISHED" for a in apps)
    return env, new_kg


def cluster_config(env: dict[str, str], monkeypatch, **values):
    monkeypatch.setenv("KGWALK_WAREHOUSE", env["KGWALK_WAREHOUSE"])
    monkeypatch.setenv("QDRANT_URL", env["QDRANT_URL"])
    return load_config(REPO / "conf" / "cluster.yaml", **values)


def test_build_and_refresh_on_clusters_equal_a_local_build(cluster_build, tmp_path, monkeypatch):
    env, new_kg = cluster_build
    on_clusters = corpus(cluster_config(env, monkeypatch))
    local_env = {"KGWALK_WAREHOUSE": str(tmp_path / "local"), "QDRANT_URL": str(tmp_path / "qdrant-local")}
    local_cfg = cluster_config(local_env, monkeypatch, **{"kg.path": str(new_kg)})
    build_in_process(local_cfg)
    local = corpus(local_cfg)

    assert len(local["walks"]) > 50
    assert_same_corpus(on_clusters, local, local_cfg)


def assert_same_corpus(on_clusters: dict, local: dict, local_cfg) -> None:
    for key in ("edges", "entities", "relations", "walks", "texts", "walk points", "node points"):
        assert on_clusters[key] == local[key], key
    for key in ("walk points vectors", "node points vectors"):
        ids = local[key.removesuffix(" vectors")][0]  # the points retrieved (tests/corpus.py index_points)
        got, want = (np.frombuffer(c[key], np.float32).reshape(len(ids), -1) for c in (on_clusters, local))
        # The model (embed.model auto: static on these CPU workers) in a Ray actor and in this process: other thread counts and
        # batches. In bfloat16 (embed.precision auto, on CPUs with AMX) a batch's padding moves
        # vectors by ~1e-3; walk vectors stored as float16 (index.vector_datatype) may round those
        # ~1e-6 differences one float16 step (~1e-4) apart, and node vectors sum them. There the
        # bound is on each vector's cosine.
        assert got.shape == want.shape, key
        exact = resolve_precision(local_cfg.embed.precision, local_cfg.embed.device) == "float32"
        if exact and local_cfg.index.vector_datatype == "float32":
            assert np.allclose(got, want, atol=1e-5), key
        else:
            cosine = (got * want).sum(axis=1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
            assert cosine.min() > (0.99999 if exact else 0.9995), key


@pytest.mark.slow
def test_a_100k_edge_kg_builds_on_the_clusters_as_it_does_locally(clusters, tmp_path, monkeypatch):
    """Issue 45's cluster path at scale: docs/clusters.md's build lines on a 100K-edge synthetic
    KG (about 700K walks), with the same settings but the index in the embedded engine on the
    driver (KGWALK_INDEX_BACKEND=edge): qdrant-client's local mode, these machines' only Qdrant
    "server", scans in Python and would take minutes and GBs there. `make test-slow` (~10 min)."""
    kg = tmp_path / "synth-100k.parquet"
    write_synth(kg, 100_000, seed=0)
    env = site_env(clusters, tmp_path / "cluster", tmp_path / "no-qdrant-server", KG=str(kg), KGWALK_INDEX_BACKEND="edge")
    build_log = run_block("build", env)
    assert "Job 'raysubmit_" in build_log and "succeeded" in build_log
    monkeypatch.setenv("KGWALK_INDEX_BACKEND", "edge")
    on_clusters = corpus(cluster_config(env, monkeypatch))
    local_env = {"KGWALK_WAREHOUSE": str(tmp_path / "local"), "QDRANT_URL": ""}
    local_cfg = cluster_config(local_env, monkeypatch, **{"kg.path": str(kg)})
    build_in_process(local_cfg)
    local = corpus(local_cfg)
    assert len(local["walks"]) > 500_000 and len(local["edges"]) == 100_000
    assert_same_corpus(on_clusters, local, local_cfg)
