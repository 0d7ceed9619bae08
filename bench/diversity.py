"""Diversity of a node's k walks (query.diversity) on MetaQA dev, plain questions: the k best
walks (none, the default before) vs the rules that pass over walks repeating the chosen ones (ends,
the default now; facts), zero-shot (the synthetic prior) and with the prior fitted on dev
questions, without answer-set lists (query.also_chars=0; bench/answer_sets.py measures those).

    for h in 1 2 3; do for p in synthetic paths; do   # one process per hop count and prior, each
      flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/diversity.py --hops $h --prior $p  # ~3 min
    done; done
    .venv/bin/python bench/diversity.py --tabulate   # bench/results/diversity.md

The corpus is bench/embed_quality.py's MetaQA sub-corpus embedded with all-MiniLM-L6-v2 float32
(`<warehouse>/metaqa_float32`, 132,167 walks, with a path prior fitted on MetaQA's dev questions);
zero-shot rows force query.rerank=synthetic. Every row of a hop count runs in the same process on
the same 1,000 plain dev questions (the eval's deterministic sample), one after another, in walk
mode; answer-set recall is also reported over the questions with more than one gold answer.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

from common import DATA
from report import save_report

from kgwalk.config import load_config
from kgwalk.eval.metaqa import load_questions, question_file, sample, score_retrieval
from kgwalk.query import Retriever

NAME = "metaqa_float32"
PRIORS = {"synthetic": "zero-shot (synthetic prior)", "paths": "path prior fitted on dev"}
ROWS = {  # query settings beside the prior
    "none": ("diversity none (the k best; before)", ["query.diversity=none", "query.also_chars=0"]),
    "ends": ("diversity ends (the default)", ["query.diversity=ends", "query.also_chars=0"]),
    "facts": ("diversity facts", ["query.diversity=facts", "query.also_chars=0"]),
}
CONTEXT_SAMPLE = 200  # questions whose context length (characters of walk text) a row reports


def run(warehouse: Path, out: Path, hops: int, prior: str) -> None:
    questions = sample(load_questions(question_file(DATA, hops, "dev")), 1000)
    multi = [q for q in questions if len(q.answers) > 1]
    rows = []
    for row, (_, settings) in ROWS.items():
        cfg = load_config(None, [f"query.rerank={prior}", "query.mode=walks", *settings], name=NAME, warehouse=str(warehouse))
        retriever = Retriever(cfg)
        retriever.warm_up()
        scores = score_retrieval(retriever, questions, hops, plain=True)
        multi_recall = score_retrieval(retriever, multi, hops, plain=True).answer_recall
        chars = [sum(len(w.text) for w in retriever.retrieve(q.plain).walks) for q in questions[:CONTEXT_SAMPLE]]
        retriever.close()
        rows.append({"prior": prior, "row": row, "multi": len(multi), "multi_answer_recall": multi_recall, "context_chars": sum(chars) / len(chars)}
                    | asdict(scores))
    (out / f"hop{hops}_{prior}.json").write_text(json.dumps(rows))


def tabulate(out: Path) -> None:
    rows = [r for path in sorted(out.glob("hop*_*.json")) for r in json.loads(path.read_text())]
    body = ["| prior | query settings | hops | context recall@3 | answer-set recall | answer-set recall, multi-answer (n) | extractive Hits@1 "
            "| context chars | retrieval ms p50 / p99 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    summary = ["", "| prior | query settings | context recall@3 (1/2/3) | answer-set recall, multi-answer (1/2/3) | Hits@1 mean |", "|---|---|---|---|---:|"]
    for prior in PRIORS:
        for row, (title, _) in ROWS.items():
            rs = sorted((r for r in rows if r["prior"] == prior and r["row"] == row), key=lambda r: r["hops"])
            for r in rs:
                lat = r["latency_ms"]["retrieval"]
                body.append(f"| {PRIORS[prior]} | {title} | {r['hops']} | {r['context_recall']:.3f} | {r['answer_recall']:.3f} "
                            f"| {r['multi_answer_recall']:.3f} ({r['multi']}) | {r['extractive_hits1']:.3f} | {r['context_chars']:.0f} "
                            f"| {lat['p50']:.1f} / {lat['p99']:.1f} |")
            if rs:
                per_hop = {m: " / ".join(f"{r[m]:.3f}" for r in rs) for m in ("context_recall", "multi_answer_recall")}
                summary.append(f"| {PRIORS[prior]} | {title} | {per_hop['context_recall']} | {per_hop['multi_answer_recall']} "
                               f"| {100 * sum(r['extractive_hits1'] for r in rs) / len(rs):.1f} |")
    body += summary
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + "; MetaQA **dev**, 1,000 plain questions per hop count (brackets dropped; the eval's "
        "deterministic sample); multi-answer: the sampled questions with more than one gold answer",
        "- corpus: bench/embed_quality.py's sub-corpus (132,167 walks: the sampled questions' topic entities and 4,000 other roots), "
        "all-MiniLM-L6-v2 float32 walk vectors, phrase-map texts; question encoder ONNX float32; walk mode",
        "- defaults otherwise: hybrid node search, k_nodes 3, k_walks 3, query.candidates 50, query.rerank_weight 0.5, "
        "query.synthetic.temperature 0.02, walks.max_per_signature 1 (a root's 2+-step walks: one per relation path)",
        "- context chars: the characters of the retrieved walks' text, mean over the first "
        f"{CONTEXT_SAMPLE} questions of the sample",
        "- latency: the rows of one hop count and prior run one after another in one process under the heavy-job lock, 2 shared cores; "
        "retrieval = all phases, no LLM",
    ]
    save_report("diversity", "Diversity of a node's k walks (query.diversity), MetaQA dev",
                facts, body)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q", help="warehouse holding bench/embed_quality.py's metaqa_float32 and its path prior")
    p.add_argument("--out", default="/tmp/kgwalk-diversity", help="folder for the per-hop results")
    p.add_argument("--hops", type=int, choices=[1, 2, 3])
    p.add_argument("--prior", choices=sorted(PRIORS), default="synthetic")
    p.add_argument("--tabulate", action="store_true")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.hops:
        run(Path(args.warehouse), out, args.hops, args.prior)
    if args.tabulate:
        tabulate(out)


if __name__ == "__main__":
    main()
