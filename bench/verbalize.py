"""Benchmark: verbalizer throughput, side by side in one run.

    .venv/bin/python bench/verbalize.py [--walks /tmp/kgwalk-q/metaqa] [--llm-batches 16,64] [--device cpu]

1. The template verbalizer (the default) on MetaQA walks, one core: label join + sentences, and
   the per-walk Python reference it replaced (same output, checked).
2. The `transformers` verbalizer (kgwalk's TransformersChat, the paper's prompt) on a model with
   the architecture of Qwen2-0.5B (494M parameters) and random weights, exactly 40 output tokens
   per walk (no end token), at the given batch sizes: walks/s. On a GPU worker run it with
   `--device cuda --llm-batches 64,128,256,512,1024`; a GPU worker without Delta or Ray reads the
   walks' triples from `--triples FILE.parquet` (column `triples`; `--export-triples` writes one).
Writes bench/results/verbalize[-<device>].md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from report import save_report

import pyarrow.parquet as pq

from kgwalk.config import LLMConf, load_config
from kgwalk.verbalize.llm import PAPER_SYSTEM_PROMPT, PAPER_USER_PROMPT, format_triples
from kgwalk.verbalize.template import TemplateVerbalizer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
OUTPUT_TOKENS = 40


def pin_one_core() -> None:
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def labelled_walks(walks_dir: str, rows: int) -> tuple[pa.Table, object, object]:
    """(the first `rows` walks, the label lookup, the config) of a built KG folder. Imported here:
    a GPU worker has neither Delta nor Ray, and reads triples from a file instead."""
    from kgwalk.storage import read_table
    from kgwalk.verbalize.pipeline import WALK_COLUMNS, load_labels

    cfg = load_config(None, None, name=Path(walks_dir).name, warehouse=str(Path(walks_dir).parent))
    return read_table(cfg.table("walks"), WALK_COLUMNS).slice(0, rows), load_labels(cfg), cfg


def walk_triples(walks_dir: str, rows: int) -> list[str]:
    walks, labels, _ = labelled_walks(walks_dir, rows)
    walks = labels.attach(walks)
    return [format_triples(n, r, i) for n, r, i in zip(*(walks.column(c).to_pylist() for c in ("node_labels", "rel_labels", "inverse")))]


def template_rows(walks_dir: str, rows: int) -> list[str]:
    walks, labels, cfg = labelled_walks(walks_dir, rows)
    verbalizer = TemplateVerbalizer(cfg.verbalize.phrases)
    start = time.perf_counter()
    attached = labels.attach(walks)
    join = time.perf_counter() - start
    start = time.perf_counter()
    sentences = verbalizer.sentences(attached)
    columnwise = time.perf_counter() - start
    start = time.perf_counter()  # the earlier code: Python lists in, one string per walk, Arrow out
    cols = [attached.column(c).to_pylist() for c in ("node_labels", "rel_labels", "inverse")]
    reference = pa.array([verbalizer.sentence(n, r, i) for n, r, i in zip(*cols)], pa.string())
    per_walk = time.perf_counter() - start
    assert sentences.equals(reference)
    n = walks.num_rows
    return [
        f"| template, column-wise Arrow, label join included (the stage's work per batch) | {n:,} | {join + columnwise:.2f} | {n / (join + columnwise):,.0f} |",
        f"| template, column-wise Arrow, sentences only | {n:,} | {columnwise:.2f} | {n / columnwise:,.0f} |",
        f"| template, per-walk Python (the earlier code), sentences only | {n:,} | {per_walk:.2f} | {n / per_walk:,.0f} |",
    ]


def llm_rows(triples: list[str], batches: list[int], device: str) -> list[str]:
    import torch
    from tiny_llm import build_tiny_chat_model
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from kgwalk.llm import make_chat_model

    words = sorted({w for t in triples for w in t.split()} | set((PAPER_SYSTEM_PROMPT + " " + PAPER_USER_PROMPT).split()))
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(build_tiny_chat_model(Path(tmp) / "tok", words))  # its word-level tokenizer and chat template
        torch.manual_seed(0)
        config = Qwen2Config(  # Qwen2-0.5B's shape
            vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
            num_key_value_heads=2, max_position_embeddings=4096, tie_word_embeddings=True, eos_token_id=None,
        )
        model = Qwen2ForCausalLM(config)
        model.generation_config.eos_token_id = None  # never stops early: exactly max_tokens out
        model.save_pretrained(folder)
        params = sum(p.numel() for p in model.parameters())
        del model
        dtype = "bfloat16" if device.startswith("cuda") else "float32"
        for batch in batches:
            chat = make_chat_model("transformers", LLMConf(model=str(folder), max_tokens=OUTPUT_TOKENS, batch_size=batch, device=device, dtype=dtype), "bench")
            conversations = [[{"role": "system", "content": PAPER_SYSTEM_PROMPT}, {"role": "user", "content": PAPER_USER_PROMPT.replace("{triples}", t)}]
                             for t in triples[:batch]]
            chat.chat(conversations[:2])  # warm-up
            start = time.perf_counter()
            chat.chat(conversations)
            seconds = time.perf_counter() - start
            out.append(f"| transformers, Qwen2-0.5B shape ({params / 1e6:.0f}M params, random, {dtype}), batch {batch}, {device} | {batch:,} | {seconds:.2f} | {batch / seconds:,.1f} |")
            print(out[-1], flush=True)
            del chat
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--walks", default="/tmp/kgwalk-q/metaqa", help="a built KG folder holding walks, entities, relations")
    p.add_argument("--template-rows", type=int, default=500_000)
    p.add_argument("--llm-batches", default="16")
    p.add_argument("--device", default="cpu")
    p.add_argument("--triples", help="a parquet file of walk triples (column `triples`) instead of --walks")
    p.add_argument("--export-triples", metavar="FILE", help="write the first 1,024 walks' triples of --walks to FILE and stop")
    args = p.parse_args()
    if args.export_triples:
        pq.write_table(pa.table({"triples": walk_triples(args.walks, 1024)}), args.export_triples)
        return
    rows = []
    if args.device == "cpu":
        pin_one_core()  # per core, as the target is stated
        rows += template_rows(args.walks, args.template_rows)
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    batches = [int(b) for b in args.llm_batches.split(",")]
    triples = pq.read_table(args.triples).column("triples").to_pylist() if args.triples else walk_triples(args.walks, max(batches))
    rows += llm_rows(triples, batches, args.device)
    body = ["| verbalizer | walks | seconds | walks/s |", "|---|---:|---:|---:|", *rows]
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; walks of {args.triples or args.walks} (MetaQA, default spec); template rows on one core",
        f"- LLM rows: the paper's prompt (Fig. 2a) through kgwalk's TransformersChat, {OUTPUT_TOKENS} output tokens per walk; "
        "a word-level tokenizer (prompts of about 70 tokens; a real BPE tokenizer gives more)",
    ]
    save_report("verbalize" + ("" if args.device == "cpu" else "-" + args.device.replace(":", "")), "Verbalizer throughput", facts, body)


if __name__ == "__main__":
    main()
