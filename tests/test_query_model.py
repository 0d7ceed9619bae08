"""A KG is queried with the embed model its vectors were made with: a configured model that
disagrees is refused in one line before any model loads; precision alone does not disagree. A
static KG queried from the shell with its model loads no transformer and no Hugging Face Hub
code, and the cached static model loads to the same encoder as model2vec's from_pretrained."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from test_embed import SENTENCES

import corpus
from kgwalk.config import load_config
from kgwalk.embed.common import resolve_model
from kgwalk.embed.static import DEFAULT_SOURCE, cache_entry, distilled_model
from kgwalk.errors import KgwalkError
from kgwalk.query import Retriever

KG = [("Kismet", "directed_by", "William Dieterle"), ("Kismet", "starred_actors", "Marlene Dietrich"),
      ("Juarez", "directed_by", "William Dieterle"), ("Farewell", "directed_by", "Christian Carion")]
# what a static question encoder must not load: a transformer runtime, or model2vec's Hub and model-card code
NOT_LOADED = ("torch", "transformers", "onnxruntime", "sentence_transformers", "huggingface_hub", "model2vec.persistence")


@pytest.fixture(scope="module")
def hashing_kg(tmp_path_factory) -> Path:
    return corpus.built_kg(tmp_path_factory.mktemp("hashing"), KG)[0]


def test_a_model_other_than_the_kgs_is_refused_before_it_loads(hashing_kg):
    cfg = corpus.config(hashing_kg, overrides=["embed.model=hashing-32"])
    with pytest.raises(KgwalkError, match="vectors were made with another embed.model than hashing-32 .*kgwalk embed, then kgwalk index"):
        Retriever(cfg)


def test_the_precision_alone_does_not_disagree(hashing_kg):
    # built at precision auto; a float32 question of the same model is the KG's model
    retriever = Retriever(corpus.config(hashing_kg, overrides=["embed.precision=float32"]))
    try:
        assert retriever.retrieve("who directed [Kismet]").nodes[0].label == "Kismet"
    finally:
        retriever.close()


@pytest.fixture(scope="module")
def seeded_static_cache(tmp_path_factory) -> Path:
    """An XDG cache whose `static` entry is a real model2vec model (MiniLM's tokenizer, seeded
    random token vectors) saved where a distillation of the bundled MiniLM is cached: embed.model=static
    loads it without the minute of distilling."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    xdg = tmp_path_factory.mktemp("xdg")
    tokenizer = Tokenizer.from_file(str(Path(resolve_model(DEFAULT_SOURCE)) / "tokenizer.json"))
    vectors = np.random.default_rng(5).standard_normal((tokenizer.get_vocab_size(), 24)).astype(np.float32)
    model = StaticModel(vectors=vectors, tokenizer=tokenizer, config={"model_type": "model2vec", "hidden_dim": 24}, normalize=True)
    model.save_pretrained(cache_entry(DEFAULT_SOURCE, xdg / "kgwalk" / "static"))
    return xdg


def test_the_cached_static_model_encodes_as_from_pretrained_loads_it(seeded_static_cache):
    from model2vec import StaticModel

    root = seeded_static_cache / "kgwalk" / "static"
    loaded = distilled_model(DEFAULT_SOURCE, root)
    reference = StaticModel.from_pretrained(cache_entry(DEFAULT_SOURCE, root), force_download=False)
    assert loaded.max_length == reference.max_length == 512 and loaded.normalize == reference.normalize
    assert np.array_equal(loaded.encode(SENTENCES), reference.encode(SENTENCES))


def cli_query(warehouse: Path, xdg: Path, *settings: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    """`kgwalk query` as a user types it, and the modules the process imported."""
    sets = [a for kv in settings for a in ("--set", kv)]
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "kgwalk.cli", "query", "--name", "t", "--warehouse", str(warehouse),
                           *sets, "--json", "who directed [Kismet]"], capture_output=True, text=True, cwd=REPO, timeout=300,
                          env=dict(os.environ, XDG_CACHE_HOME=str(xdg), HF_HUB_OFFLINE="1"))
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done, imported


def test_a_static_kg_from_the_shell(seeded_static_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(seeded_static_cache))
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in KG))
    cfg = corpus.config(tmp_path, kg, ["embed.model=static"])
    corpus.build_in_process(cfg)

    refused, imported = cli_query(tmp_path, seeded_static_cache, "embed.model=all-MiniLM-L6-v2")
    errors = [line for line in refused.stderr.splitlines() if not line.startswith("import time:")]
    assert refused.returncode == 2 and errors == [
        f"kgwalk: error: {cfg.root}'s vectors were made with embed.model=static, not all-MiniLM-L6-v2: query with --set "
        "embed.model=static (conf: embed.model), or embed and index it again with this model (kgwalk embed, then kgwalk index)"]
    assert not imported & {*NOT_LOADED, "model2vec"}  # refused before any model loaded

    answered, imported = cli_query(tmp_path, seeded_static_cache, "query.prior_encoder=embed")  # conf/local.yaml: embed.model auto, static here
    assert answered.returncode == 0, answered.stderr[-2000:]
    assert json.loads(answered.stdout)["nodes"][0]["label"] == "Kismet"
    assert "model2vec" in imported and not imported & set(NOT_LOADED)

    # by default the prior's few texts a question are MiniLM's (query.prior_encoder auto): ONNX Runtime, still no torch
    from kgwalk.embed.onnx import OnnxEmbedder

    OnnxEmbedder(DEFAULT_SOURCE)  # the export, once, in this test's cache (exporting is what needs torch)
    answered, imported = cli_query(tmp_path, seeded_static_cache)
    assert answered.returncode == 0, answered.stderr[-2000:]
    assert json.loads(answered.stdout)["nodes"][0]["label"] == "Kismet"
    assert {"model2vec", "onnxruntime"} <= imported and not imported & {"torch", "transformers", "sentence_transformers"}


def test_the_priors_own_encoder_leaves_a_core_to_the_question_and_may_be_int8(seeded_static_cache, tmp_path, monkeypatch):
    from kgwalk.embed.onnx import OnnxEmbedder
    from kgwalk.query.corpus_paths import encoder_identity

    monkeypatch.setenv("XDG_CACHE_HOME", str(seeded_static_cache))
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in KG))
    corpus.build_in_process(corpus.config(tmp_path, kg, ["embed.model=static"]))
    found = {}
    for precision in ("float32", "int8"):
        retriever = Retriever(corpus.config(tmp_path, kg, ["embed.model=static", f"query.prior_precision={precision}"]))
        encoder = retriever.prior_embedder
        # int8 one text a run: a path's vector is the same whatever the corpus's other paths are (tests/test_embed.py)
        assert isinstance(encoder, OnnxEmbedder) and encoder.precision.startswith(precision)
        assert encoder.batch_size == (1 if precision == "int8" else 64)
        # it encodes while the question's thread searches: all cores but that one
        assert encoder.session.get_session_options().intra_op_num_threads == max(1, (os.cpu_count() or 1) - 1)
        got = retriever.retrieve("who directed Kismet?")
        assert got.best is not None
        found[precision] = encoder_identity(encoder, retriever.prior_model), got.nodes[0].label, got.best.walk_id
    assert found["float32"][0] != found["int8"][0]  # the prior's path vectors are cached apart
    assert found["float32"][1:] == found["int8"][1:] and found["int8"][1] == "Kismet"


def test_a_kg_without_state_is_not_checked(tmp_path):
    # nothing recorded (the state table is what every build writes): nothing to refuse
    from kgwalk.query.built_with import check_embed_model, recorded_fingerprint

    cfg = load_config(None, ["embed.model=hashing-8"], name="none", warehouse=str(tmp_path))
    assert recorded_fingerprint(cfg) is None
    check_embed_model(cfg)
