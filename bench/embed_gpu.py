"""Benchmark: the embedder on a GPU worker (what each `embed.device: cuda` Ray actor runs).

    python bench/embed_gpu.py --sentences S.parquet --model DIR [--batches 256,1024,4096]

kgwalk's SentenceTransformerEmbedder on CUDA, float32 and float16 (`embed.precision: auto` picks
float16 there), at several batch sizes, on MetaQA walk sentences: sentences/s, and the cosine of
each float16 vector to its float32 one. Needs only torch and sentence-transformers, so it runs on
a bare GPU machine: `--export` (run where the corpus is built) writes the sentences and a copy of
the model with float16 weights, small enough to carry there.
Writes bench/results/embed-cuda.md.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from report import save_report

from kgwalk.embed.model import SentenceTransformerEmbedder, resolve_model

MODEL = "all-MiniLM-L6-v2"


def export(texts_dir: str, rows: int, out: str) -> None:
    """Every k-th sentence of a texts table, and the bundled MiniLM with float16 weights."""
    import torch
    from deltalake import DeltaTable
    from sentence_transformers import SentenceTransformer

    table = DeltaTable(texts_dir).to_pyarrow_table(columns=["text"])
    step = max(1, table.num_rows // rows)
    pq.write_table(table.take(pa.array(np.arange(0, table.num_rows, step)[:rows])), f"{out}/sentences.parquet")
    SentenceTransformer(resolve_model(MODEL), device="cpu").to(torch.float16).save(f"{out}/minilm")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sentences", help="parquet with a `text` column")
    p.add_argument("--model", help="a sentence-transformers folder (the exported MiniLM)")
    p.add_argument("--batches", default="256,1024,4096")
    p.add_argument("--export", metavar="DIR", help="write sentences.parquet and minilm/ to DIR and stop")
    p.add_argument("--texts", default="/tmp/kgwalk-q/metaqa/texts")
    p.add_argument("--rows", type=int, default=200_000)
    args = p.parse_args()
    if args.export:
        export(args.texts, args.rows, args.export)
        return
    import torch

    texts = pq.read_table(args.sentences).column("text").to_pylist()
    rows, reference = [], None
    for precision in ("float32", "float16"):
        for batch in [int(b) for b in args.batches.split(",")]:
            embedder = SentenceTransformerEmbedder(args.model, device="cuda", batch_size=batch, precision=precision)
            embedder.encode(texts[:batch])  # warm-up: kernels, allocator
            torch.cuda.synchronize()
            start = time.perf_counter()
            vectors = embedder.encode(texts)  # returns host float32 arrays: the copy back is counted
            seconds = time.perf_counter() - start
            if reference is None:
                reference = vectors
            cos = np.sum(vectors * reference, axis=1)
            rows.append(f"| {precision} | {batch:,} | {len(texts):,} | {seconds:.2f} | {len(texts) / seconds:,.0f} | {cos.mean():.6f} | {cos.min():.6f} |")
            print(rows[-1], flush=True)
            del embedder
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; {len(texts):,} MetaQA walk sentences (template, default spec)",
        f"- model: {MODEL}, weights carried as float16 (the float32 rows upcast them); kgwalk's SentenceTransformerEmbedder in-process on "
        f"{torch.cuda.get_device_name(0)}, vectors copied to the host and normalized there; model load and warm-up excluded",
        "- cosine: each row's vector against the float32, first-batch-size row",
    ]
    body = ["| precision | batch | sentences | seconds | sentences/s | cosine to float32 (mean) | (min) |", "|---|---:|---:|---:|---:|---:|---:|", *rows]
    save_report("embed-cuda", "Embedding throughput on a GPU worker", facts, body)


if __name__ == "__main__":
    main()
