"""Benchmark: LLM-verbalized walks from a real instruct model against the template's sentences.

    .venv/bin/python bench/verbalize_llm.py [--warehouse /tmp/kgwalk-llm] [--walks 300] [--model path.gguf]

Runs on the sub-corpus bench/answer.py builds (`<warehouse>/metaqa_llm`). The sample: the walks of
the dev-sample questions' topic entities, whole topics in the sample's order, until `--walks` walks
are reached. Each walk is verbalized with the paper's prompt (Fig. 2a) by the model (default
SmolLM2-135M-Instruct, Q4_1 GGUF, transformers backend, greedy, max_tokens 64) and cleaned by
kgwalk's output hygiene; an unusable reply falls back to the template sentence, as in the stage.

Reported: the fallback rate; what the hygiene removed (text before the sentence: preamble, quotes,
markup; text after it: more sentences, chatter); sentences per second on this machine; and retrieval
quality of the sentences against the template's: for each dev-sample question whose topic's walks
are in the sample, rank walks by cosine between the question and the sentence (the default embedder,
all-MiniLM-L6-v2), (a) the topic's walks (as after a correct node search) and (b) all sampled walks
(no node search: the sentence alone must carry the topic); Hits@1 = the best walk ends at a gold
answer, context recall@3 = a gold answer is on one of the best 3. Same questions, same walks: only
the sentences differ. Writes bench/results/verbalize_llm.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from common import LLM_SUBCORPUS, busy_cpu_seconds, sampled, smollm2_gguf
from report import save_report

from kgwalk.config import load_config
from kgwalk.embed.model import make_embedder
from kgwalk.llm import make_chat_model
from kgwalk.storage import read_table
from kgwalk.verbalize.llm import LLMVerbalizer, clean_sentence
from kgwalk.verbalize.pipeline import WALK_COLUMNS, load_labels
from kgwalk.verbalize.template import TemplateVerbalizer

_AROUND = "\"'`*“”‘’ \t\n.!?:"  # what may surround a kept sentence without being text the hygiene removed


def hygiene(reply: str, sentence: str | None) -> str:
    """What the output hygiene did to one reply: unusable, kept, head (removed text before the
    sentence), tail (after it), head+tail."""
    if sentence is None:
        return "unusable (template fallback)"
    body = sentence.rstrip(".!?")
    at = reply.find(body)
    if at < 0:
        return "rewritten"
    head = reply[:at].strip(_AROUND) != ""
    tail = reply[at + len(body):].strip(_AROUND) != ""
    return {(False, False): "kept as is (up to quotes, markup, final period)", (True, False): "text before the sentence removed",
            (False, True): "text after the sentence removed", (True, True): "text before and after removed"}[(head, tail)]


def ranking(question_vectors: np.ndarray, questions: list, candidates: list[np.ndarray], nodes: list[list[int]],
            sentence_vectors: np.ndarray, k: int = 3) -> tuple[float, float]:
    """(Hits@1, context recall@k) of ranking each question's candidate walks (row numbers) by cosine."""
    hits, recall = [], []
    for q, v, rows in zip(questions, question_vectors, candidates):
        best = rows[np.argsort(-(sentence_vectors[rows] @ v), kind="stable")[:k]]
        hits.append(nodes[best[0]][-1] in q.answers)
        recall.append(any(n in q.answers for r in best for n in nodes[r]))
    return float(np.mean(hits)), float(np.mean(recall))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-llm")
    p.add_argument("--walks", type=int, default=300)
    p.add_argument("--dev-limit", type=int, default=100, help="as given to bench/answer.py")
    p.add_argument("--model", default=smollm2_gguf())
    p.add_argument("--prompts", type=int, default=100, help="at most this many new prompts per run (saved; the next run goes on)")
    p.add_argument("--retime", type=int, default=0,
                   help="once all are answered, ask the first N prompts again in one timed run (a speed check apart from the "
                        "resumed runs, and a check that greedy replies repeat)")
    args = p.parse_args()
    cfg = load_config(None, ["verbalize.verbalizer=transformers", f"verbalize.llm.model={args.model}"],
                      name=LLM_SUBCORPUS, warehouse=args.warehouse)
    walks = load_labels(cfg).attach(read_table(cfg.table("walks"), WALK_COLUMNS))
    roots = walks.column("root").to_numpy()
    dev = [q for qs in sampled("dev", args.dev_limit).values() for q in qs]
    chosen: list[int] = []
    taken = 0
    for topic in dict.fromkeys(q.topic for q in dev):
        count = int((roots == topic).sum())
        if count and taken + count <= args.walks:
            chosen.append(topic)
            taken += count
    sample = walks.filter(pc.is_in(walks.column("root"), pa.array(chosen, pa.int64())))
    questions = [q for q in dev if q.topic in set(chosen)]

    start = time.perf_counter()
    chat = make_chat_model("transformers", cfg.verbalize.llm, "verbalize.llm")
    load_seconds = time.perf_counter() - start
    verbalizer = LLMVerbalizer(chat, cfg.verbalize)
    triples = verbalizer.triples(sample)
    distinct = list(dict.fromkeys(triples))
    # replies so far: each run asks at most --prompts more, so that one run stays short
    saved = Path(args.warehouse) / f"verbalize_llm-{args.walks}.json"
    state = json.loads(saved.read_text()) if saved.exists() else {"replies": {}, "seconds": 0.0}
    todo = [t for t in distinct if t not in state["replies"]][: args.prompts]
    if todo:
        start = time.perf_counter()
        state["replies"].update(zip(todo, chat.chat([verbalizer.conversation(t) for t in todo])))
        seconds = time.perf_counter() - start
        state["seconds"] += seconds
        # per run, with the load average: a run slowed by other work on the machine shows as such
        state.setdefault("runs", []).append({"prompts": len(todo), "seconds": seconds, "load1": os.getloadavg()[0]})
        saved.write_text(json.dumps(state))
    if len(state["replies"]) < len(distinct):
        print(f"{len(state['replies'])} of {len(distinct)} prompts answered; run again for the rest")
        return
    if args.retime:
        import torch

        again = distinct[: args.retime]
        start, busy, own = time.perf_counter(), busy_cpu_seconds(), resource.getrusage(resource.RUSAGE_SELF)
        replies = chat.chat([verbalizer.conversation(t) for t in again])
        seconds, mine = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
        # CPU that other processes used meanwhile, in cores: a shared machine slows the run
        others = (busy_cpu_seconds() - busy - (mine.ru_utime + mine.ru_stime - own.ru_utime - own.ru_stime)) / seconds
        state.setdefault("retimes", []).append({"prompts": len(again), "seconds": seconds, "load1": os.getloadavg()[0],
                                                "other_cores": round(max(others, 0.0), 2), "threads": torch.get_num_threads(),
                                                "same": sum(r == state["replies"][t] for t, r in zip(again, replies))})
        saved.write_text(json.dumps(state))
    replies, seconds = state["replies"], state["seconds"]
    raw = [replies[t] for t in triples]
    cleaned = [clean_sentence(r) for r in raw]
    template = TemplateVerbalizer(cfg.verbalize.phrases).sentences(sample).to_pylist()
    llm = [c if c is not None else t for c, t in zip(cleaned, template)]
    outcomes: dict[str, list[int]] = {}
    for i, (r, c) in enumerate(zip(raw, cleaned)):
        outcomes.setdefault(hygiene(r, c), []).append(i)

    embedder = make_embedder(cfg.embed.model, precision="float32")
    question_vectors = embedder.encode([q.text for q in questions])
    sample_roots = sample.column("root").to_numpy()
    walk_rows = {t: np.flatnonzero(sample_roots == t) for t in chosen}
    nodes = sample.column("nodes").to_pylist()
    scopes = {"topic's walks": [walk_rows[q.topic] for q in questions], "all sampled walks": [np.arange(len(nodes))] * len(questions)}
    vectors = {name: embedder.encode(texts) for name, texts in (("template", template), ("SmolLM2 (fallbacks: template)", llm))}
    scores = {(scope, name): ranking(question_vectors, questions, rows, nodes, v) for scope, rows in scopes.items() for name, v in vectors.items()}

    n = len(triples)
    body = ["| what the hygiene did | replies | share |", "|---|---:|---:|"]
    body += [f"| {k} | {len(v)} | {100 * len(v) / n:.1f}% |" for k, v in sorted(outcomes.items(), key=lambda kv: -len(kv[1]))]
    body += ["", "| walks ranked | sentences | dev questions | walks per question (mean) | Hits@1 | context recall@3 |", "|---|---|---:|---:|---:|---:|"]
    body += [f"| {scope} | {name} | {len(questions)} | {np.mean([len(r) for r in scopes[scope]]):.1f} | {100 * h:.1f} | {100 * r:.1f} |"
             for (scope, name), (h, r) in scores.items()]
    body += ["", "Examples (walk triples -> raw reply -> kept sentence):", ""]
    for kind, rows in sorted(outcomes.items()):
        for i in rows[:2]:
            body.append(f"- *{kind}*: `{triples[i][:160]}` -> `{raw[i].strip()[:200]!r}` -> `{cleaned[i]}`")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; model: {Path(args.model).name} (transformers backend, dequantized GGUF, "
        f"float32, greedy, max_tokens {cfg.verbalize.llm.max_tokens}, batch {cfg.verbalize.llm.batch_size}); the paper's prompt (Fig. 2a)",
        (f"- sample: {n} walks ({len(distinct)} distinct prompts) of {len(chosen)} topic entities of the MetaQA dev sample, "
        f"from the sub-corpus of bench/answer.py; {len(questions)} dev questions have their topic there"),
        (f"- fallback rate: {100 * len(outcomes.get('unusable (template fallback)', [])) / n:.1f}%; "
        f"speed: {len(distinct) / seconds:.2f} sentences/s on 2 CPU cores ({seconds:.0f} s for {len(distinct)} prompts; "
        f"model load {load_seconds:.1f} s from the cache; the prompts were asked over several runs of --prompts each"
        + "".join(f"; a run of {r['prompts']}: {r['prompts'] / r['seconds']:.2f}/s at load average {r['load1']:.1f}" for r in state.get("runs", []))
        + ")"),
        *(f"- speed check: the first {r['prompts']} prompts asked again in one run: {r['prompts'] / r['seconds']:.2f} sentences/s "
          f"({r['seconds']:.0f} s, torch threads {r.get('threads', '?')}, other processes' CPU use meanwhile "
          f"{r.get('other_cores', float('nan')):.2f} cores, load average {r['load1']:.1f}); {r['same']} of {r['prompts']} "
          "replies identical to the first asking"
          for r in state.get("retimes", [])),
    ]
    save_report("verbalize_llm", "LLM verbalization with a real instruct model: SmolLM2-135M-Instruct on MetaQA walks", facts, body)


if __name__ == "__main__":
    main()
