"""Build a small KG through every stage (Spark, Delta, Ray, MiniLM, Qdrant) and retrieve from it."""

import json
import os
import shutil
import subprocess
import sys
from contextlib import closing
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from kgwalk.config import load_config
from kgwalk.index.build import build_index
from kgwalk.index.store import open_store
from kgwalk.query import Retriever
from kgwalk.query.paths import PRIOR_TABLE
from kgwalk.stages import INDEX, STAGES, Runner, run_build
from kgwalk.state import versions
from kgwalk.storage import current_files, read_table

from conftest import TINY_KG


@pytest.fixture(scope="module")
def tiny_build(spark, tmp_path_factory):
    # a space and non-ASCII letters in the warehouse path and the name: files reach Spark, Ray and
    # Arrow by path, and delta-rs hands them out percent-encoded
    warehouse = tmp_path_factory.mktemp("wh") / "my wärehouse"
    cfg = load_config(None, ["ray.num_cpus=2"], name="tiny-ünï", warehouse=str(warehouse), **{"kg.path": str(TINY_KG)})
    import ray

    ray.shutdown()  # an earlier test module may have left Ray running: this build must start it itself
    ray_at_start: dict[str, bool] = {}  # stage: whether Ray ran as it started

    def watched(stage):
        return replace(stage, build=lambda step: (ray_at_start.setdefault(stage.name, ray.is_initialized()), stage.build(step))[1])

    report = Runner(cfg, stages=tuple(watched(stage) for stage in STAGES)).build()
    report.ray_at_start = ray_at_start
    yield cfg, report
    ray.shutdown()  # where a test after the build started it again


def test_build_writes_every_table_and_both_collections(tiny_build):
    cfg, report = tiny_build
    walks = read_table(cfg.table("walks"))
    texts = read_table(cfg.table("texts"))
    assert report.walks == walks.num_rows == texts.num_rows > 0
    assert set(texts.column("walk_id").to_pylist()) == set(walks.column("walk_id").to_pylist())
    # a static model's vectors are not kept in the table (embed.store_vectors=auto): the index embedded the texts
    assert read_table(cfg.table("vectors")).num_rows == 0
    with closing(open_store(cfg)) as store:
        assert store.count(f"{cfg.name}_walks") == report.walks
    assert report.nodes == read_table(cfg.table("entities")).num_rows  # every entity has a walk here
    assert report.index_bytes > 0
    # Ray, started for verbalize, is let go before the index stage, which runs in this process
    assert report.ray_at_start == {"kg": False, "walks": False, "texts": False, "vectors": True, INDEX.name: False}
    # zstd: a template sentence repeats its relation phrases (texts 33 bytes a walk against snappy's 43)
    for name in ("walks", "texts", "entities"):
        for f in current_files(cfg.table(name)):
            meta = pq.ParquetFile(f).metadata
            assert {meta.row_group(0).column(c).compression for c in range(meta.num_columns)} == {"ZSTD"}, (name, f)


def test_a_build_run_again_keeps_the_stages_an_earlier_run_left_up_to_date(tiny_build, tmp_path):
    """What makes a killed build resume where it stopped: a stage is kept when its table reflects
    today's input and settings; a change of either makes it and what follows again."""
    cfg, first = tiny_build
    warehouse = tmp_path / "copy"
    shutil.copytree(cfg.warehouse, warehouse)

    def build(kg, *overrides):
        again = load_config(None, ["ray.num_cpus=2", *overrides], name=cfg.name, warehouse=str(warehouse), **{"kg.path": str(kg)})
        return again, run_build(again)

    again, report = build(TINY_KG)
    assert report.kept == ["ingest", "walks", "verbalize", "embed"]
    assert versions(again, ("edges", "walks", "texts", "vectors")) == versions(cfg, ("edges", "walks", "texts", "vectors"))
    assert (report.walks, report.nodes) == (first.walks, first.nodes)  # the index, always made again, from the kept tables

    again, report = build(TINY_KG, "walks.depth=2")
    assert report.kept == ["ingest"]
    assert report.walks == read_table(again.table("walks")).num_rows < first.walks

    changed = tmp_path / "kg.txt"
    changed.write_text(TINY_KG.read_text() + "Some Film|directed_by|Someone New\n")  # a new edge: the KG tables reflect another file
    assert build(changed, "walks.depth=2")[1].kept == []


def test_node_vector_is_the_normalized_mean_of_its_walk_vectors(tiny_build):
    import numpy as np

    from kgwalk.embed.model import make_embedder

    cfg, _ = tiny_build
    walks = read_table(cfg.table("walks"), ["walk_id", "root"]).sort_by("walk_id")
    texts = read_table(cfg.table("texts"), ["walk_id", "text"]).sort_by("walk_id")
    roots = walks.column("root").to_numpy()
    matrix = make_embedder(cfg.embed.model).encode(texts.column("text").to_pylist())  # unrounded: what node sums add
    store = open_store(cfg)
    for root in np.unique(roots)[:5]:
        mean = matrix[roots == root].mean(axis=0)
        hit = store.search(f"{cfg.name}_nodes", mean / np.linalg.norm(mean), 1)[0]
        assert hit.payload["id"] == root and hit.score > 0.9999
        assert hit.payload["walks"] == int((roots == root).sum())
    store.close()


def top_walk_triples(hits):
    return hits.nodes[0].walks[0].triples


def test_retriever_finds_the_answering_walk(tiny_build):
    cfg, _ = tiny_build
    retriever = Retriever(cfg)
    hits = retriever.retrieve("who directed Kismet")
    assert hits.nodes[0].label == "Kismet"
    assert ("Kismet", "directed_by", "William Dieterle") in top_walk_triples(hits)
    hits = retriever.retrieve("what films did Emir Kusturica star in", k_nodes=2, k_walks=2)
    assert hits.nodes[0].label == "Emir Kusturica" and hits.nodes[0].matched and not hits.nodes[1].matched
    # the node the question names shows the place the other leaves it (query.unnamed_walks)
    assert [len(h.walks) for h in hits.nodes] == [3, 1]
    assert ("Farewell", "starred_actors", "Emir Kusturica") in top_walk_triples(hits)
    # Eq. 3: every walk of a node hit is rooted at that node, scores descending.
    for node in hits.nodes:
        assert all(w.nodes[0] == node.id for w in node.walks)
        assert [w.score for w in node.walks] == sorted((w.score for w in node.walks), reverse=True)
    retriever.close()


def test_server_backend_gives_the_same_answers(tiny_build, tmp_path):
    cfg, _ = tiny_build
    server_cfg = load_config(
        # never: the tables of the edge build hold no vectors (a server's build keeps them by default)
        None, ["index.backend=server", f"index.url={tmp_path / 'qdrant-local'}", "embed.store_vectors=never"], name=cfg.name,
        warehouse=cfg.warehouse,
    )
    build_index(server_cfg, versions(server_cfg, INDEX.inputs), progress=False)
    edge = Retriever(cfg)
    server = Retriever(server_cfg, embedder=edge.embedder)
    for question in ("who directed Kismet", "what language is Farewell in"):
        a, b = edge.retrieve(question), server.retrieve(question)
        assert [(n.id, [w.walk_id for w in n.walks]) for n in a.nodes] == [(n.id, [w.walk_id for w in n.walks]) for n in b.nodes]
    edge.close()
    server.close()


def kgwalk_cli(*args):
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "kgwalk.cli", *args], capture_output=True, text=True, env=env, timeout=300)


def test_cli_query_json_and_clear_errors(tiny_build, tmp_path):
    cfg, _ = tiny_build
    out = kgwalk_cli("query", "--name", cfg.name, "--warehouse", cfg.warehouse, "--json", "who directed Kismet")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["nodes"][0]["label"] == "Kismet"
    assert ["Kismet", "directed_by", "William Dieterle"] in payload["nodes"][0]["walks"][0]["triples"]
    # the text form shows each walk's answer-set list (query.also_chars) on its own line
    listed = json.loads(kgwalk_cli("query", "--name", cfg.name, "--warehouse", cfg.warehouse, "--json", "who starred in Arizona Dream").stdout)
    text = kgwalk_cli("query", "--name", cfg.name, "--warehouse", cfg.warehouse, "who starred in Arizona Dream").stdout
    lists = [w["also_labels"] for n in listed["nodes"] for w in n["walks"] if w["also_labels"]]
    assert lists and all(f"also: {', '.join(labels)}" in text for labels in lists)
    empty = kgwalk_cli("query", "--name", cfg.name, "--warehouse", cfg.warehouse, " ")
    assert empty.returncode == 2 and empty.stderr.strip() == "kgwalk: error: the question is empty"
    missing = kgwalk_cli("query", "--name", "nothing", "--warehouse", str(tmp_path), "who")
    assert missing.returncode == 2 and f"no KG named 'nothing' in the warehouse {tmp_path}" in missing.stderr
    assert "Traceback" not in missing.stderr and "node_search" not in missing.stderr
    bad_kg = kgwalk_cli("ingest", "--warehouse", str(tmp_path), "--kg", str(tmp_path / "none.txt"))
    assert bad_kg.returncode == 2 and "KG file not found" in bad_kg.stderr


def test_refresh_query_and_serve_in_a_path_with_spaces_and_non_ascii(tiny_build, tmp_path):
    from fastapi.testclient import TestClient

    from kgwalk.serve import create_app

    cfg, _ = tiny_build
    warehouse = tmp_path / "space wh ö"
    shutil.copytree(cfg.root, warehouse / cfg.name)
    changes = tmp_path / "c.txt"
    changes.write_text("Kismet|starred_actors|Space Path Actör|add\n")
    base = ("--name", cfg.name, "--warehouse", str(warehouse))
    refreshed = kgwalk_cli("refresh", *base, "--changes", str(changes))
    assert refreshed.returncode == 0, refreshed.stderr
    out = kgwalk_cli("query", *base, "--json", "who starred in Kismet")
    assert out.returncode == 0, out.stderr
    assert any("Space Path Actör" in w["text"] for n in json.loads(out.stdout)["nodes"] for w in n["walks"])
    # the service without a key answers loopback host names only (TestClient's default is "testserver")
    with TestClient(create_app(load_config(None, name=cfg.name, warehouse=str(warehouse))), base_url="http://127.0.0.1") as client:
        got = client.post("/retrieve", json={"question": "who starred in Kismet"})
    assert got.status_code == 200 and got.json()["nodes"][0]["label"] == "Kismet"


@pytest.mark.parametrize("name", ["../escape", "/etc", "", "a/b", ".hidden", "with space"])
def test_a_kg_name_is_one_safe_path_segment(tmp_path, name):
    out = kgwalk_cli("build", "--name", name, "--warehouse", str(tmp_path / "wh"), "--kg", str(TINY_KG))
    assert out.returncode == 2 and out.stderr.startswith("kgwalk: error: config: 'name'") and len(out.stderr.splitlines()) == 1
    assert not (tmp_path / "escape").exists() and not (tmp_path / "wh").exists()


def test_wrong_inputs_are_one_line_and_leave_nothing_behind(tiny_build, tmp_path):
    cfg, _ = tiny_build
    warehouse = tmp_path / "wh"
    missing = kgwalk_cli("build", "--name", "fresh", "--warehouse", str(warehouse), "--kg", str(tmp_path / "none.txt"))
    assert missing.returncode == 2 and missing.stderr.strip() == f"kgwalk: error: KG file not found: {tmp_path / 'none.txt'}"
    assert not (warehouse / "fresh").exists()
    index = kgwalk_cli("index", "--name", "fresh", "--warehouse", str(warehouse))  # fails inside the lock
    assert index.returncode == 2 and not (warehouse / "fresh").exists()
    base = ("--name", cfg.name, "--warehouse", cfg.warehouse)
    for changes, reason in ((tmp_path / "none.txt", "change set not found"), (tmp_path, "is a directory, not a file")):
        out = kgwalk_cli("refresh", *base, "--changes", str(changes))
        assert out.returncode == 2 and reason in out.stderr and len(out.stderr.splitlines()) == 1, out.stderr
    for flag, k in (("--k-nodes", "0"), ("--k-walks", "0"), ("--k-nodes", "1000000000")):
        out = kgwalk_cli("query", *base, flag, k, "who directed Kismet")
        assert out.returncode == 2 and out.stderr.strip() == f"kgwalk: error: {flag} must be 1..{cfg.serve.max_k} (serve.max_k), got {k}"


def test_stages_out_of_order_fail_fast_with_a_hint(tmp_path):
    for stage, hint in [("walks", "ingest"), ("verbalize", "walks"), ("embed", "verbalize"), ("index", "walks")]:
        out = kgwalk_cli(stage, "--warehouse", str(tmp_path))
        assert out.returncode == 2, out.stderr
        assert f"run `kgwalk {hint}` first" in out.stderr and "Traceback" not in out.stderr


def test_eval_metaqa_scores_retrieval_on_question_files(tiny_build, tmp_path):
    cfg, _ = tiny_build
    data = tmp_path / "metaqa"
    (data / "1-hop").mkdir(parents=True)
    # who directed Kismet: topic, context and best walk all right; the other two cannot be answered
    # (no such answer in the KG), so the shares are 1/3 at most and the topic recall 1.0
    (data / "1-hop" / "qa_dev.txt").write_text(
        "who directed [Kismet]\tWilliam Dieterle\n"
        "what language is [Farewell] in\tKlingon\n"
        "who starred in [Arizona Dream]\tNobody Atall\n"
    )
    out = kgwalk_cli("eval", "metaqa", "--name", cfg.name, "--warehouse", cfg.warehouse, "--data", str(data), "--hops", "1", "--json")
    assert out.returncode == 0, out.stderr
    (scores,) = json.loads(out.stdout)
    assert scores["hops"] == 1 and scores["questions"] == 3
    assert scores["topic_recall"] == 1.0
    assert scores["context_recall"] == pytest.approx(1 / 3) and scores["extractive_hits1"] == pytest.approx(1 / 3)
    table = kgwalk_cli("eval", "metaqa", "--name", cfg.name, "--warehouse", cfg.warehouse, "--data", str(data), "--hops", "1").stdout
    assert "multi-answer" in table.splitlines()[1]
    missing = kgwalk_cli("eval", "metaqa", "--name", cfg.name, "--warehouse", cfg.warehouse, "--data", str(data), "--hops", "2")
    assert missing.returncode == 2 and "no MetaQA file" in missing.stderr and "Traceback" not in missing.stderr


def test_cli_answer_needs_an_llm_and_fit_paths_feeds_the_reranker(tiny_build, tmp_path):
    cfg, _ = tiny_build
    base = ("--name", cfg.name, "--warehouse", cfg.warehouse)
    no_llm = kgwalk_cli("answer", *base, "who directed [Kismet]")
    assert no_llm.returncode == 2 and "answer.backend" in no_llm.stderr and len(no_llm.stderr.strip().splitlines()) == 1
    qa = tmp_path / "qa.txt"
    qa.write_text("who directed [Kismet]\tWilliam Dieterle\nwho directed [Juarez]\tWilliam Dieterle\nwho is [Nobody]\tKismet\n")
    unfitted = kgwalk_cli("query", *base, "--set", "query.rerank=paths", "who directed [Kismet]")
    assert unfitted.returncode == 2 and "kgwalk fit-paths" in unfitted.stderr
    fit = kgwalk_cli("fit-paths", *base, "--questions", str(qa))
    assert fit.returncode == 0, fit.stderr
    assert "2 examples with a walk to an answer" in fit.stdout and "1 lines without a known topic or answer" in fit.stdout
    out = kgwalk_cli("query", *base, "--json", "who directed [Kismet]")  # query.rerank=auto uses the fitted prior
    assert out.returncode == 0, out.stderr
    best = max((w for n in json.loads(out.stdout)["nodes"] for w in n["walks"]), key=lambda w: w["score"])
    assert best["signature"] == "directed_by>" and best["score"] > best["cosine"]
    plain = kgwalk_cli("query", *base, "--set", "query.rerank=none", "--json", "who directed [Kismet]")
    assert all(w["score"] == w["cosine"] for n in json.loads(plain.stdout)["nodes"] for w in n["walks"])
    shutil.rmtree(cfg.table(PRIOR_TABLE))  # later tests of the module expect the paper's order under auto
