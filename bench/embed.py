"""Benchmark: embedding throughput on this machine, side by side in one run.

    .venv/bin/python bench/embed.py [--texts /tmp/kgwalk-q/metaqa/texts] [--rows 20000]

Rows, all on the same sample of walk sentences (every k-th row of a texts table, default the
MetaQA corpus built by `kgwalk walks` + `kgwalk verbalize` into /tmp/kgwalk-q):
1. the plain loop the issue measured: `SentenceTransformer.encode` at its defaults, float32;
2. kgwalk's embedder in-process, float32 and bfloat16;
3. the embed stage as users run it (Ray Data actor pool, Delta in and out), float32 and bfloat16;
4. ONNX Runtime with dynamic int8 quantization (per-channel), in-process, where onnxruntime is
   installed: the other speed-up we tried.
Quality: cosine of each row's vector to the plain float32 loop's (mean and minimum).
Writes bench/results/embed.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from report import save_report

from kgwalk.config import load_config
from kgwalk.embed.model import cpu_has_bf16, make_embedder, resolve_model
from kgwalk.embed.pipeline import arrow_to_vectors, embed_texts
from kgwalk.ray_runtime import init_ray

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
MODEL = "all-MiniLM-L6-v2"


def sample_texts(path: str, rows: int) -> pa.Table:
    table = DeltaTable(path).to_pyarrow_table(columns=["walk_id", "root", "text", "text_id"])
    step = max(1, table.num_rows // rows)
    return table.take(pa.array(np.arange(0, table.num_rows, step)[:rows]))


def plain_loop(texts: list[str]) -> np.ndarray:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(os.cpu_count() or 1)
    model = SentenceTransformer(resolve_model(MODEL), device="cpu")
    return model.encode(texts, normalize_embeddings=True)


def onnx_int8(texts: list[str], workdir: Path) -> np.ndarray:
    """Export MiniLM with mean pooling + normalization to ONNX, fuse, quantize weights to int8."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import SentenceTransformer

    from kgwalk.embed.onnx import export_onnx

    st = SentenceTransformer(resolve_model(MODEL), device="cpu")
    fused, int8 = (str(workdir / n) for n in ("fused.onnx", "int8.onnx"))
    export_onnx(st, Path(fused))  # the query encoder's export, then int8 weights on top
    quantize_dynamic(fused, int8, weight_type=QuantType.QInt8, per_channel=True, extra_options={"DefaultTensorType": 1})
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count() or 1
    session = ort.InferenceSession(int8, options, providers=["CPUExecutionProvider"])
    order = np.argsort([len(t) for t in texts], kind="stable")
    out = np.zeros((len(texts), 384), np.float32)
    for i in range(0, len(texts), 32):
        rows = order[i : i + 32]
        batch = st.tokenizer([texts[j] for j in rows], padding=True, truncation=True, return_tensors="np")
        out[rows] = session.run(None, {"ids": batch["input_ids"].astype(np.int64), "mask": batch["attention_mask"].astype(np.int64)})[0]
    return out


def ray_stage(sample: pa.Table, precision: str, warehouse: Path) -> np.ndarray:
    """The embed stage as `kgwalk embed` runs it, on a texts table holding just the sample."""
    cfg = load_config(None, [f"embed.precision={precision}"], name="embed_bench", warehouse=str(warehouse))
    shutil.rmtree(Path(cfg.table("texts")).parent, ignore_errors=True)
    write_deltalake(cfg.table("texts"), sample)
    assert embed_texts(cfg) == sample.num_rows
    vectors = DeltaTable(cfg.table("vectors")).to_pyarrow_table()
    order = {w: i for i, w in enumerate(vectors["walk_id"].to_pylist())}
    rows = np.array([order[w] for w in sample["walk_id"].to_pylist()])
    return arrow_to_vectors(vectors["vector"])[rows]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--texts", default="/tmp/kgwalk-q/metaqa/texts")
    p.add_argument("--rows", type=int, default=40000)
    p.add_argument("--no-ray", action="store_true")
    args = p.parse_args()
    sample = sample_texts(args.texts, args.rows)
    texts = sample["text"].to_pylist()
    n = len(texts)
    rows: list[tuple[str, float, np.ndarray]] = []

    def measure(label: str, fn) -> None:
        start = time.perf_counter()
        vectors = fn()
        rows.append((label, time.perf_counter() - start, vectors))
        print(f"{label}: {n / rows[-1][1]:,.0f} sentences/s", flush=True)

    measure("plain SentenceTransformer loop, float32 (baseline)", lambda: plain_loop(texts))
    for precision in ("float32", "bfloat16"):
        embedder = make_embedder(MODEL, precision=precision)  # loading is not timed: a pool loads once
        measure(f"kgwalk embedder in-process, {precision}", lambda: embedder.encode(texts))
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_ray:
            init_ray(load_config().ray)  # started once, as in a build; not timed
            for precision in ("float32", "bfloat16"):
                measure(f"`kgwalk embed` stage (Ray actor pool, Delta), {precision}", lambda: ray_stage(sample, precision, Path(tmp)))
        if importlib.util.find_spec("onnxruntime"):  # pip install '.[bench]'
            measure("ONNX Runtime, dynamic int8 per-channel, in-process", lambda: onnx_int8(texts, Path(tmp)))
        else:
            print("onnxruntime not installed: skipping the int8 row")

    base_seconds, base = rows[0][1], rows[0][2]
    body = [
        "| path | seconds | sentences/s | × plain loop | cosine to float32 (mean) | (min) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, seconds, vectors in rows:
        cos = (vectors * base).sum(1)
        body.append(f"| {label} | {seconds:,.1f} | {n / seconds:,.0f} | {base_seconds / seconds:.2f} | {cos.mean():.6f} | {cos.min():.6f} |")
    lengths = np.array([len(t) for t in texts])
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; {n:,} walk sentences sampled from {args.texts} "
        f"(mean {lengths.mean():.0f} characters); model {MODEL}",
        f"- CPU has bfloat16 units (AMX/AVX512-BF16): {cpu_has_bf16()}; `embed.precision: auto` picks "
        + ("bfloat16" if cpu_has_bf16() else "float32") + " here",
        "- the ONNX row includes its export and quantization (about 5 s); the Ray rows include starting the actor "
        "(model load), reading and writing Delta, not starting Ray; in-process rows exclude model loading",
    ]
    save_report("embed", "Embedding throughput: plain loop vs kgwalk's embed paths", facts, body)


if __name__ == "__main__":
    main()
