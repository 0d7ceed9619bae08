"""Benchmark: embedding throughput on this machine, side by side in one run.

    .venv/bin/python bench/embed.py [--texts /tmp/kgwalk-q/metaqa/texts] [--rows 40000] [--report embed]

Rows, all on the same sample of walk sentences (every k-th row of a texts table, default the
MetaQA corpus built by `kgwalk walks` + `kgwalk verbalize` into /tmp/kgwalk-q):
1. the plain loop the issue measured: `SentenceTransformer.encode` at its defaults, float32;
2. kgwalk's embedder in-process: float32, int8 (ONNX Runtime), and bfloat16 where the CPU has
   bfloat16 units (elsewhere torch emulates it, slower than float32);
3. the embed stage as users run it (Ray Data actor pool, Delta in and out), same precisions;
4. the static model (`embed.model: static`, model2vec distilled from MiniLM): model2vec's plain
   `StaticModel.encode` at its defaults, kgwalk's embedder in-process, and the embed stage.
5. the static model's embed stage over the whole texts table, by block size (`--static-blocks`):
   at ~30,000 sentences/s, what a block costs beyond the model decides the stage's speed.
Quality: cosine of each row's vector to the plain float32 loop's (mean and minimum; a static
model's vectors live in another space, so none); retrieval quality is bench/embed_quality.py's.
The arithmetic ceiling: this CPU's float32 matrix-multiply rate at MiniLM's layer shapes, against
the FLOPs the plain loop spends per second (real tokens only; padding is extra work).
Writes bench/results/embed.md.
"""

from __future__ import annotations

import argparse
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
from kgwalk.embed import pipeline
from kgwalk.embed.model import cpu_has_bf16, make_embedder, resolve_model
from kgwalk.embed.pipeline import STATIC_BLOCK_ROWS, arrow_to_vectors, embed_texts
from kgwalk.embed.static import StaticEmbedder
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


def minilm_flops(token_counts: np.ndarray, hidden: int = 384, ffn: int = 1536, layers: int = 6) -> float:
    """Multiply-adds x 2 of MiniLM's encoder over these sentences: per token and layer the four
    attention projections and the two FFN matrices, plus attention scores and mixing (2 x seq x hidden)."""
    per_token = 4 * hidden * hidden + 2 * hidden * ffn
    return float(2 * layers * (token_counts * per_token + 2 * token_counts**2 * hidden).sum())


def matmul_gflops() -> float:
    """Best float32 GEMM rate through MiniLM's FFN (tokens x 384 x 1,536 and back), all threads,
    over batch-sized token counts (a batch of 32 sentences is about 600 tokens)."""
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    best = 0.0
    for tokens in (256, 640, 2048):
        x, up, down = torch.randn(tokens, 384), torch.randn(384, 1536), torch.randn(1536, 384)
        for _ in range(5):
            (x @ up) @ down
        reps = 400 * 256 // tokens
        start = time.perf_counter()
        for _ in range(reps):
            (x @ up) @ down
        best = max(best, reps * 2 * 2 * tokens * 384 * 1536 / (time.perf_counter() - start) / 1e9)
    return best


def ray_stage(sample: pa.Table, overrides: list[str], warehouse: Path) -> np.ndarray:
    """The embed stage as `kgwalk embed` runs it, on a texts table holding just the sample."""
    cfg = load_config(None, overrides, name="embed_bench", warehouse=str(warehouse))
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
    p.add_argument("--report", default="embed", help="bench/results/<report>.md")
    p.add_argument("--static-blocks", default="4096,131072", help="block rows for the static stage over all texts; '' skips it")
    args = p.parse_args()
    sample = sample_texts(args.texts, args.rows)
    texts = sample["text"].to_pylist()
    n = len(texts)
    rows: list[tuple[str, float, np.ndarray]] = []
    blocks: list[tuple[int, float]] = []  # (block rows, seconds) of the static stage over every text
    total = 0

    def measure(label: str, fn) -> None:
        start = time.perf_counter()
        vectors = fn()
        rows.append((label, time.perf_counter() - start, vectors))
        print(f"{label}: {n / rows[-1][1]:,.0f} sentences/s", flush=True)

    precisions = ["float32", "int8"] + (["bfloat16"] if cpu_has_bf16() else [])
    gemm = matmul_gflops()  # before Ray starts: its idle processes still take some CPU
    measure("plain SentenceTransformer loop, float32 (baseline)", lambda: plain_loop(texts))
    for precision in precisions:
        embedder = make_embedder(MODEL, precision=precision)  # loading is not timed: a pool loads once
        measure(f"kgwalk embedder in-process, {precision}", lambda: embedder.encode(texts))
    static = StaticEmbedder("static")  # distilled (once per machine, not timed) or read from the cache
    measure("plain model2vec `StaticModel.encode` loop, static (defaults)", lambda: static.model.encode(texts))
    measure("kgwalk embedder in-process, static", lambda: static.encode(texts))
    if not args.no_ray:
        init_ray(load_config().ray)  # started once, as in a build; not timed
        with tempfile.TemporaryDirectory() as tmp:
            for precision in precisions:
                measure(f"`kgwalk embed` stage (Ray actor pool, Delta), {precision}",
                        lambda: ray_stage(sample, [f"embed.precision={precision}"], Path(tmp)))
            measure("`kgwalk embed` stage (Ray actor pool, Delta), static", lambda: ray_stage(sample, ["embed.model=static"], Path(tmp)))
            cfg = load_config(None, ["embed.model=static"], name="embed_bench_all", warehouse=tmp)
            write_deltalake(cfg.table("texts"), DeltaTable(args.texts).to_pyarrow_table(columns=["walk_id", "text", "text_id"]))
            for block in filter(None, args.static_blocks.split(",")):
                pipeline.STATIC_BLOCK_ROWS = int(block)
                start = time.perf_counter()
                total = embed_texts(cfg)
                blocks.append((int(block), time.perf_counter() - start))
                print(f"static stage, blocks of {block}: {total / blocks[-1][1]:,.0f} sentences/s", flush=True)

    base_seconds, base = rows[0][1], rows[0][2]
    body = [
        "| path | seconds | sentences/s | × plain loop | cosine to float32 (mean) | (min) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, seconds, vectors in rows:
        cos = (vectors * base).sum(1) if vectors.shape == base.shape else None
        quality = f"{cos.mean():.6f} | {cos.min():.6f}" if cos is not None else "— | —"
        body.append(f"| {label} | {seconds:,.2f} | {n / seconds:,.0f} | {base_seconds / seconds:.2f} | {quality} |")
    lengths = np.array([len(t) for t in texts])
    tokens = np.array([len(ids) for ids in make_embedder(MODEL, precision="float32").model.tokenizer(texts)["input_ids"]])
    used = minilm_flops(tokens) / base_seconds / 1e9
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; {n:,} walk sentences sampled from {args.texts} "
        f"(mean {lengths.mean():.0f} characters); model {MODEL}; static: model2vec distilled from it ({static.dim} dimensions, "
        f"PCA), {len(static.model.tokenizer.get_vocab()):,} token vectors",
        f"- CPU has bfloat16 units (AMX/AVX512-BF16): {cpu_has_bf16()}; `embed.precision: auto` picks "
        + ("bfloat16" if cpu_has_bf16() else "float32") + " here",
        "- the Ray rows include starting the actor (model load), reading and writing Delta, not starting Ray; "
        "in-process rows exclude model loading; the int8 model is exported and quantized, and the static model distilled, before "
        "timing (once per machine); model2vec's plain loop runs at its defaults (threads above 10,000 sentences), kgwalk's static "
        "embedder in one thread",
        f"- arithmetic ceiling: {tokens.mean():.1f} tokens a sentence; the plain loop spends {used:.0f} GFLOP/s of "
        f"MiniLM's arithmetic (real tokens only), and this CPU multiplies float32 matrices of MiniLM's shapes at "
        f"{gemm:.0f} GFLOP/s at best: a perfect float32 kernel would be {gemm / used:.1f}x the plain loop. "
        + ("With bfloat16 units (AMX) the multiplies are several times cheaper" if cpu_has_bf16() else
           f"Without bfloat16 units, int8 dot products (AVX2) do at most twice float32's multiply-adds: at most "
           f"{2 * gemm / used:.1f}x with every multiply in int8 at peak, so 4x is beyond this CPU for this model"),
    ]
    if blocks:
        body += ["", f"The static model's embed stage over all {total:,} sentences of the texts table (Ray actor pool, "
                 f"Delta in and out, Ray already started; the default block is {STATIC_BLOCK_ROWS:,} rows), by block rows:", "",
                 "| block rows | seconds | sentences/s |", "|---:|---:|---:|"]
        body += [f"| {block:,} | {seconds:,.1f} | {total / seconds:,.0f} |" for block, seconds in blocks]
    save_report(args.report, "Embedding throughput: plain loop vs kgwalk's embed paths", facts, body)


if __name__ == "__main__":
    main()
