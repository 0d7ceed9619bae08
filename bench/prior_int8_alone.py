"""The int8 prior encoder, batched against one text a run, on each KG's own path questions: how near each is
to float32 (cosine per text), how far a batched text's vector moves when its batch mates change (the same
texts in another order), and the seconds each takes to encode them all on one thread.

    .venv/bin/python bench/prior_int8_alone.py --warehouse /tmp/devsets/wh --kg synth --kg metaqa-opaque \\
        [--metaqa-warehouse /tmp/mq]

ONNX Runtime's dynamic quantization scales the activations per run (the whole batch's tensor), so a batched
text's vector depends on the texts beside it; the prior encodes one text a run (kgwalk/query/retriever.py).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from report import save_report

from kgwalk.config import load_config
from kgwalk.embed.onnx import OnnxEmbedder
from kgwalk.query.corpus_paths import path_readings, read_corpus_paths
from kgwalk.query.synthetic import reading_verbalizers
from kgwalk.query.words import content_words
from kgwalk.verbalize.template import TemplateVerbalizer

MODEL = "all-MiniLM-L6-v2"


def path_texts(warehouse: str, name: str) -> tuple[int, list[str]]:
    """The corpus's distinct relation paths, and the texts the synthetic prior encodes for them (every reading,
    whole and as content words)."""
    cfg = load_config(None, [], warehouse=warehouse, name=name)
    paths = read_corpus_paths(cfg.table("walks"), cfg.table("relations"))
    verbalizers = reading_verbalizers(TemplateVerbalizer(cfg.verbalize.phrases))
    texts = [q for r, i in paths for q in path_readings(r, i, verbalizers)]
    return len(paths), texts + [content_words(t) for t in texts]


def timed(encode, texts: list[str]) -> tuple[np.ndarray, float]:
    start = time.perf_counter()
    vectors = encode(texts)
    return vectors, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warehouse", required=True, help="finished builds (bench/zero_shot_dev.py), only read")
    parser.add_argument("--kg", action="append", required=True, help="a KG name in --warehouse (repeat)")
    parser.add_argument("--metaqa-warehouse", help="a finished build of MetaQA's whole KB named metaqa")
    parser.add_argument("--report", default="prior_int8_alone")
    args = parser.parse_args()
    kgs = [(args.warehouse, name) for name in args.kg] + ([(args.metaqa_warehouse, "metaqa")] if args.metaqa_warehouse else [])
    float32 = OnnxEmbedder(MODEL, threads=1)
    batched = OnnxEmbedder(MODEL, threads=1, int8=True)
    alone = OnnxEmbedder(MODEL, threads=1, int8=True, batch_size=1)
    rows = []
    for warehouse, name in kgs:
        paths, texts = path_texts(warehouse, name)
        reference, _ = timed(float32.encode, texts)
        in_batches, batched_s = timed(batched.encode, texts)
        one_by_one, alone_s = timed(alone.encode, texts)
        order = np.random.default_rng(0).permutation(len(texts))
        reordered = np.empty_like(in_batches)
        reordered[order] = batched.encode([texts[i] for i in order])
        near_b, near_a = (np.einsum("ij,ij->i", v, reference) for v in (in_batches, one_by_one))
        again = np.empty_like(one_by_one)
        again[order] = alone.encode([texts[i] for i in order])
        rows.append(f"| {name} | {paths} | {len(texts)} | {near_b.mean():.4f} | {near_b.min():.4f} | {near_a.mean():.4f} | "
                    f"{near_a.min():.4f} | {np.abs(reordered - in_batches).max():.4f} | {np.abs(again - one_by_one).max():.4f} | "
                    f"{batched_s:.1f} | {alone_s:.1f} | {alone_s / batched_s:.2f} |")
    body = ["Per KG: its distinct relation paths and the prior's texts for them; cosine of each int8 vector to float32's "
            "(mean and least); the largest change of a vector component when the same texts are encoded in another "
            f"order; seconds to encode all texts on one thread ({MODEL}, ONNX Runtime, batches of 64 by length).", "",
            "| KG | paths | texts | batched: cosine to float32, mean | least | alone: mean | least | batched: moved by order | "
            "alone: moved by order | batched s | alone s | alone / batched |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|", *rows]
    save_report(args.report, "The int8 prior encoder: batched against one text a run",
                [f"- KGs: {', '.join(f'{w}/{n}' for w, n in kgs)}"], body)


if __name__ == "__main__":
    main()
