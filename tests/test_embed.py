"""Embedders and the embed stage's settings: int8 on ONNX Runtime, batch sizes by device."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from deltalake import DeltaTable

from kgwalk.config import load_config
from kgwalk.embed.model import SentenceTransformerEmbedder, make_embedder, resolve_batch_size
from kgwalk.embed.onnx import OnnxEmbedder
from kgwalk.embed.pipeline import arrow_to_vectors, block_rows, embed_batch, embed_texts
from kgwalk.errors import KgwalkError
from kgwalk.ray_runtime import actor_cpus, cluster_cpus
from kgwalk.storage import write_table

MODEL = "all-MiniLM-L6-v2"
SENTENCES = [
    "Kismet was directed by William Dieterle.",
    "William Dieterle directed Juarez, which was released in 1939.",
    "The Pentagon Papers starred James Spader and Paul Giamatti, and is in English.",
    "x",
    "Brad Pitt starred in Fight Club, which has genre Drama and was written by Chuck Palahniuk. " * 6,
]


@pytest.fixture()
def onnx_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "kgwalk" / "onnx"


def test_int8_embedder_is_quantized_close_to_float32_and_made_once(onnx_cache):
    reference = make_embedder(MODEL, precision="float32").encode(SENTENCES)
    int8 = make_embedder(MODEL, precision="int8")
    assert isinstance(int8, OnnxEmbedder) and int8.batch_size == 32
    got = int8.encode(SENTENCES)
    assert got.shape == reference.shape == (len(SENTENCES), 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(got * reference, axis=1)
    assert cosines.min() > 0.95 and cosines.mean() > 0.98
    assert np.abs(got - reference).max() > 1e-3  # really int8, not the float32 graph
    (fused,) = [path for path in onnx_cache.glob("*.onnx") if not path.stem.endswith("-int8")]
    (quantized,) = onnx_cache.glob("*-int8.onnx")
    assert quantized.stat().st_size < fused.stat().st_size / 2  # weights stored as int8
    written = quantized.stat().st_mtime_ns
    again = make_embedder(MODEL, precision="int8", batch_size=2)
    assert quantized.stat().st_mtime_ns == written and again.batch_size == 2
    assert again.encode([]).shape == (0, 384)


def test_int8_one_text_a_run_gives_each_text_a_vector_of_its_own(onnx_cache):
    """int8 activations are scaled per run: batched, a text's vector moves with the texts beside it; one a run (the
    prior's encoder) it is the same beside any, and the two are cached apart (encoder_identity reads the precision)."""
    batched, alone = make_embedder(MODEL, precision="int8"), OnnxEmbedder(MODEL, int8=True, batch_size=1)
    first = SENTENCES[:1]
    assert not np.array_equal(batched.encode(first)[0], batched.encode(SENTENCES)[0])
    by_itself = alone.encode(first)[0]
    assert np.array_equal(alone.encode(SENTENCES)[0], by_itself) and np.array_equal(alone.encode(SENTENCES[::-1])[-1], by_itself)
    assert batched.precision == "int8" and alone.precision != batched.precision


def test_int8_is_cpu_only_and_batch_sizes_follow_the_device():
    with pytest.raises(KgwalkError, match="int8.*cuda"):
        make_embedder(MODEL, device="cuda", precision="int8")
    with pytest.raises(KgwalkError, match="embed.precision"):
        make_embedder(MODEL, precision="int4")
    with pytest.raises(KgwalkError, match="int8.*cuda"):  # the stage refuses before Ray or any table
        embed_texts(load_config(None, ["embed.precision=int8", "embed.device=cuda"], warehouse="/nonexistent"))
    assert (resolve_batch_size(0, "cpu"), resolve_batch_size(0, "cuda:1"), resolve_batch_size(100, "cpu")) == (32, 1024, 100)
    cfg = load_config(None, ["embed.device=cuda"])
    assert (cfg.embed.model, cfg.embed.batch_size, block_rows(cfg.embed)) == (MODEL, 0, 8192)  # embed.model auto on CUDA: MiniLM
    assert block_rows(load_config(None, [f"embed.model={MODEL}"]).embed) == 4096
    cpu = load_config().embed  # auto on a CPU: the static model, whose blocks are larger
    assert cpu.model == "static" and block_rows(cpu) == 131072


def test_embed_stage_runs_int8_through_ray_and_questions_stay_float32(onnx_cache, tmp_path):
    """The stage as `kgwalk embed` runs it (Ray actor, Delta): its vectors are the int8 embedder's
    for the same batch, and the retriever's torch question encoder stays float32."""
    import ray

    from kgwalk.query.retriever import Retriever

    cfg = load_config(None, [f"embed.model={MODEL}", "embed.precision=int8", "query.encoder=torch"], name="t", warehouse=str(tmp_path))
    texts = [SENTENCES[i % len(SENTENCES)] + f" ({i})" for i in range(600)]
    table = pa.table({"walk_id": np.arange(600, dtype=np.int64), "text": texts, "text_id": np.arange(600, dtype=np.int64) * 7})
    write_table(cfg.table("texts"), table)
    assert embed_texts(cfg) == 600
    cpus = cluster_cpus()  # however many actors are asked for, reads keep a CPU (no starved pool)
    assert actor_cpus(1) == 1.0 and actor_cpus(cpus) * cpus <= max(1, cpus - 1) and actor_cpus(2 * cpus) * 2 * cpus <= max(1, cpus - 1)
    written = DeltaTable(cfg.table("vectors")).to_pyarrow_table().sort_by("walk_id")
    expected = embed_batch(make_embedder(MODEL, precision="int8"), table)
    assert written["text_id"].to_pylist() == table["text_id"].to_pylist()
    assert np.allclose(arrow_to_vectors(written["vector"]), arrow_to_vectors(expected["vector"]), atol=1e-5)
    retriever = Retriever(cfg)
    assert isinstance(retriever.embedder, SentenceTransformerEmbedder) and retriever.embedder.precision == "float32"
    retriever.close()
    if not ray.cluster_resources().get("GPU"):  # a local Ray without GPUs: one line, not actors waiting forever
        with pytest.raises(KgwalkError, match="no GPU"):
            embed_texts(load_config(None, [f"embed.model={MODEL}", "embed.device=cuda"], name="t", warehouse=str(tmp_path)))
