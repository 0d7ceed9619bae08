"""Ego-graph retrieval (query.mode=ego) vs node-then-walk (the default) at equal context length,
on MetaQA dev plain questions, zero-shot and with the fitted prior (issue 26).

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/ego.py --rerank synthetic   # one row pair per call
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/ego.py --rerank paths
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/ego.py --answer 1   # SmolLM2's answers, one hop count per call
    .venv/bin/python bench/ego.py --tabulate                                        # bench/results/ego.md

Both modes ask the same questions of the same retriever settings; ego mode's budget is, per
question, the length of walk mode's context (query.ego_chars unset), so they compare at equal
length by construction. The corpus is bench/embed_quality.py's MetaQA sub-corpus (MiniLM float32,
with the path prior `kgwalk fit-paths` fitted on dev: the `paths` rows are in-sample).

`--answer HOPS` asks a real LLM (SmolLM2-135M-Instruct, the `transformers` backend, one thread) the
first `--llm-questions` of bench/answer.py's dev sample, zero-shot, with each mode's context: on
bench/answer.py's sub-corpus (`--llm-warehouse`), which holds those questions' topics.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from common import DATA, LLM_SUBCORPUS, smollm2_gguf
from report import save_report

from kgwalk.config import load_config
from kgwalk.eval.metaqa import load_questions, percentiles, question_file, sample
from kgwalk.query import Retriever
from kgwalk.query.ego import context_chars

NAME = "metaqa_float32"
RERANKS = {"synthetic": "zero-shot (synthetic prior)", "paths": "path prior fitted on dev"}
MODES = ("walks", "ego")
LLM_DEV_SAMPLE = 100  # bench/answer.py's --dev-limit, whose topics its sub-corpus holds
SAMPLE = 1000  # `kgwalk eval --limit 1000`, whose topics bench/embed_quality.py's sub-corpus holds


def measure(warehouse: Path, rerank: str, per_hop: int) -> dict[str, list[dict[str, float]]]:
    retrievers = {}
    for mode in MODES:
        cfg = load_config(None, [f"query.rerank={rerank}", f"query.mode={mode}"], name=NAME, warehouse=str(warehouse))
        first = next(iter(retrievers.values()), None)
        retrievers[mode] = Retriever(cfg, embedder=first.embedder if first else None, store=first.store if first else None)
    for retriever in retrievers.values():
        retriever.warm_up()
    rows: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    for hops in (1, 2, 3):
        # the sub-corpus holds the topics of the eval's 1,000-question sample: ask the first of those
        questions = sample(load_questions(question_file(DATA, hops, "dev")), SAMPLE)[:per_hop]
        scores: dict[str, dict[str, list[float]]] = {m: {k: [] for k in ("topic", "context", "answers", "multi", "chars", "named")} for m in MODES}
        timings: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
        for q in questions:
            for mode, retriever in retrievers.items():
                result = retriever.retrieve(q.plain)
                walks = result.walks
                in_context = q.answers.intersection(n for w in walks for n in w.nodes)
                s = scores[mode]
                s["topic"].append(any(n.id == q.topic for n in result.nodes))
                s["context"].append(bool(in_context))
                s["answers"].append(len(in_context) / len(q.answers))
                if len(q.answers) > 1:
                    s["multi"].append(len(in_context) / len(q.answers))
                s["chars"].append(context_chars(walks))
                s["named"].append(len({n for w in walks for n in w.nodes}))
                timings[mode].append(result.timings_ms)
        for mode in MODES:
            s = scores[mode]
            lat = percentiles(timings[mode])["retrieval"]
            rows[mode].append({"hops": hops, "questions": len(questions), "multi_answer": len(s["multi"]),
                               **{k: float(np.mean(v)) for k, v in s.items()}, "p50": lat["p50"], "p99": lat["p99"]})
    return rows


def answer_rows(warehouse: Path, hops: int, questions: int) -> dict[str, dict[str, float]]:
    """SmolLM2's answers to the first `questions` dev questions (plain) of bench/answer.py's sample
    with each mode's context: Hits@1, hallucinated, missing, context recall, seconds per answer."""

    from kgwalk.eval.metaqa import names_answer
    from kgwalk.query import Answerer

    asked = sample(load_questions(question_file(DATA, hops, "dev")), LLM_DEV_SAMPLE)[:questions]
    rows, first = {}, None
    for mode in MODES:
        cfg = load_config(None, ["query.rerank=synthetic", f"answer.context={mode}", "answer.backend=transformers",
                                 f"answer.llm.model={smollm2_gguf()}"], name=LLM_SUBCORPUS, warehouse=str(warehouse))
        retriever = Retriever(cfg, embedder=first.retriever.embedder if first else None, store=first.retriever.store if first else None)
        answerer = Answerer(cfg, retriever, model=first.model if first else None)
        first = first or answerer
        replies = answerer.answer_many([q.plain for q in asked])
        named = [names_answer(a.answer, list(q.answer_labels)) for q, a in zip(asked, replies)]
        in_context = [bool(q.answers.intersection(n for w in a.retrieval.walks for n in w.nodes)) for q, a in zip(asked, replies)]
        rows[mode] = {"questions": len(asked), "hits1": float(np.mean(named)),
                      "hallucinated": float(np.mean([not ok and a.known for ok, a in zip(named, replies)])),
                      "missing": float(np.mean([not a.known for a in replies])), "context": float(np.mean(in_context)),
                      "chars": float(np.mean([context_chars(a.retrieval.walks) for a in replies])),
                      "llm_s": float(np.mean([a.timings_ms["llm"] for a in replies]) / 1000)}
    return rows


def tabulate(warehouse: Path, per_hop: int) -> None:
    results = {r: json.loads((warehouse / f"ego_{r}.json").read_text()) for r in RERANKS if (warehouse / f"ego_{r}.json").exists()}
    body = ["| ranking | mode | hops | topic recall | context recall | answer-set recall | answer-set recall, multi-answer (n) "
            "| context chars (mean) | entities named | retrieval ms p50 / p99 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for rerank, result in results.items():
        for mode in MODES:
            for s in result["rows"][mode]:
                body.append(f"| {RERANKS[rerank]} | {mode} | {s['hops']} | {s['topic']:.3f} | {s['context']:.3f} | {s['answers']:.3f} "
                            f"| {s['multi']:.3f} ({s['multi_answer']}) | {s['chars']:.0f} | {s['named']:.1f} | {s['p50']:.1f} / {s['p99']:.1f} |")
    body += ["", "| ranking | mode | context recall (1/2/3) | answer-set recall (1/2/3) | multi-answer answer-set recall (1/2/3) |",
             "|---|---|---|---|---|"]
    for rerank, result in results.items():
        for mode in MODES:
            rows = result["rows"][mode]
            per = {k: " / ".join(f"{s[k]:.3f}" for s in rows) for k in ("context", "answers", "multi")}
            body.append(f"| {RERANKS[rerank]} | {mode} | {per['context']} | {per['answers']} | {per['multi']} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; MetaQA **dev**, {per_hop} plain questions per hop count (brackets dropped; "
        "the eval's deterministic sample); both modes in one process, same questions, same settings but query.mode",
        "- corpus: bench/embed_quality.py's sub-corpus (132,167 walks), all-MiniLM-L6-v2 float32, ONNX question encoder; "
        "hybrid node search, k_nodes 3, k_walks 3, query.candidates 50 (ego mode fetches 50 candidates for every top node)",
        "- equal length: ego mode's budget per question is the character length of walk mode's context for that question "
        "(`- text` lines, as the answer prompt shows them); the `context chars` column shows both",
        "- context recall: a gold answer entity is in the context; answer-set recall: the share of the gold answers in it; "
        "extractive Hits@1 reads the walk ranking (Retrieval.best), the same in both modes, so it is not shown",
        "- latency: 2 shared cores, under the heavy-job lock; ego's extra cost is fetching 50 candidates for non-topic nodes and the pruning",
    ]
    llm = {h: json.loads((warehouse / f"ego_answer_{h}.json").read_text()) for h in (1, 2, 3) if (warehouse / f"ego_answer_{h}.json").exists()}
    if llm:
        body += ["", "SmolLM2-135M-Instruct (Q4_1, transformers, one thread) answering plain dev questions, zero-shot (synthetic prior), "
                 "k 3x3, each mode's context (bench/answer.py's sub-corpus and dev sample; 20 questions a hop count, so one question is 5 points; "
                 "string-matched as in bench/results/answer.md):", "",
                 "| mode | hops | questions | Hits@1 | hallucinated | missing | context recall | context chars | s / answer |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for mode in MODES:
            for h, rows in llm.items():
                r = rows[mode]
                body.append(f"| {mode} | {h} | {r['questions']} | {100 * r['hits1']:.1f} | {100 * r['hallucinated']:.1f} | {100 * r['missing']:.1f} "
                            f"| {r['context']:.3f} | {r['chars']:.0f} | {r['llm_s']:.2f} |")
    save_report("ego", "Ego-graph retrieval (query.mode=ego) vs node-then-walk at equal context length (MetaQA dev)", facts, body)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q", help="warehouse holding bench/embed_quality.py's metaqa_float32")
    p.add_argument("--rerank", choices=sorted(RERANKS))
    p.add_argument("--per-hop", type=int, default=SAMPLE)
    p.add_argument("--tabulate", action="store_true")
    p.add_argument("--answer", type=int, choices=(1, 2, 3), help="hop count whose dev questions SmolLM2 answers with each mode's context")
    p.add_argument("--llm-questions", type=int, default=20)
    p.add_argument("--llm-warehouse", default="/tmp/kgwalk-llm", help="bench/answer.py's warehouse")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    if args.answer:
        rows = answer_rows(Path(args.llm_warehouse), args.answer, args.llm_questions)
        (warehouse / f"ego_answer_{args.answer}.json").write_text(json.dumps(rows))
    if args.rerank:
        start = time.perf_counter()
        rows = measure(warehouse, args.rerank, args.per_hop)
        (warehouse / f"ego_{args.rerank}.json").write_text(json.dumps({"rows": rows, "seconds": time.perf_counter() - start}))
    if args.tabulate:
        tabulate(warehouse, args.per_hop)


if __name__ == "__main__":
    main()
