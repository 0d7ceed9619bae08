"""Complete answer sets at query time (query.also_chars; kgwalk/query/answer_sets.py) on MetaQA
dev, plain questions: each retrieved walk (ego mode: each line) followed by the other ends of its
relation path from its root in the KG, within a character budget over the context, against no
lists (before), in walk mode (the retrieval API's) and ego mode (the answer prompt's default),
zero-shot (the synthetic prior) and with the prior fitted on dev questions.

    for h in 1 2 3; do for p in synthetic paths; do   # one process per hop count and prior, each
      flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/answer_sets.py --hops $h --prior $p  # ~3 min
    done; done
    .venv/bin/python bench/answer_sets.py --tabulate   # bench/results/answer_sets.md

The corpus is bench/embed_quality.py's MetaQA sub-corpus embedded with all-MiniLM-L6-v2 float32
(`<warehouse>/metaqa_float32`, 132,167 walks, with a path prior fitted on MetaQA's dev questions);
zero-shot rows force query.rerank=synthetic. Every row of a hop count runs in the same process on
the same 1,000 plain dev questions (the eval's deterministic sample), one after another.
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
from kgwalk.storage import read_table

NAME = "metaqa_float32"
PRIORS = {"synthetic": "zero-shot (synthetic prior)", "paths": "path prior fitted on dev"}
ROWS = {  # query settings beside the prior
    "walks0": ("walks, no lists (before)", ["query.mode=walks", "query.also_chars=0"]),
    "walks300": ("walks, also_chars 300", ["query.mode=walks", "query.also_chars=300"]),
    "walks1000": ("walks, also_chars 1000 (the default)", ["query.mode=walks", "query.also_chars=1000"]),
    "ego0": ("ego, no lists (before)", ["query.mode=ego", "query.also_chars=0"]),
    "ego1000": ("ego, also_chars 1000 (the default)", ["query.mode=ego", "query.also_chars=1000"]),
}


def run(warehouse: Path, out: Path, hops: int, prior: str) -> None:
    questions = sample(load_questions(question_file(DATA, hops, "dev")), 1000)
    rows = []
    for row, (_, settings) in ROWS.items():
        cfg = load_config(None, [f"query.rerank={prior}", *settings], name=NAME, warehouse=str(warehouse))
        retriever = Retriever(cfg)
        loaded = {}
        if cfg.query.also_chars:  # the KG adjacency is loaded once per table version, before any question
            start = time.perf_counter()
            loaded["graph_bytes"] = retriever.answer_sets.graph.nbytes
            loaded["load_s"] = time.perf_counter() - start
        retriever.warm_up()
        scores = score_retrieval(retriever, questions, hops, plain=True)
        retriever.close()
        rows.append({"prior": prior, "row": row} | loaded | asdict(scores))
    (out / f"hop{hops}_{prior}.json").write_text(json.dumps(rows))


def tabulate(out: Path, warehouse: Path, notes: list[str]) -> None:
    rows = [r for path in sorted(out.glob("hop*_*.json")) for r in json.loads(path.read_text())]
    body = ["| prior | context | hops | context recall@3 | answer-set recall | answer-set recall, multi-answer (n) | extractive Hits@1 "
            "| context chars | retrieval ms p50 / p99 | of which lists ms p50 / p99 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    summary = ["", "| prior | context | answer-set recall, multi-answer (1/2/3) | context recall@3 (1/2/3) | context chars (1/2/3) |",
               "|---|---|---|---|---|"]
    for prior in PRIORS:
        for row, (title, _) in ROWS.items():
            rs = sorted((r for r in rows if r["prior"] == prior and r["row"] == row), key=lambda r: r["hops"])
            for r in rs:
                lat = r["latency_ms"]
                lists = f"{lat['answer_sets']['p50']:.2f} / {lat['answer_sets']['p99']:.2f}" if "answer_sets" in lat else "-"
                body.append(f"| {PRIORS[prior]} | {title} | {r['hops']} | {r['context_recall']:.3f} | {r['answer_recall']:.3f} "
                            f"| {r['multi_answer_recall']:.3f} ({r['multi_answer_questions']}) | {r['extractive_hits1']:.3f} "
                            f"| {r['context_chars']:.0f} | {lat['retrieval']['p50']:.1f} / {lat['retrieval']['p99']:.1f} | {lists} |")
            if rs:
                per_hop = {m: " / ".join(f"{r[m]:.3f}" for r in rs) for m in ("multi_answer_recall", "context_recall")}
                chars = " / ".join(f"{r['context_chars']:.0f}" for r in rs)
                summary.append(f"| {PRIORS[prior]} | {title} | {per_hop['multi_answer_recall']} | {per_hop['context_recall']} | {chars} |")
    body += summary
    loads = [r for r in rows if r.get("load_s") is not None]
    walks = read_table(str(warehouse / NAME / "walks"), ["walk_id"]).num_rows
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + "; MetaQA **dev**, 1,000 plain questions per hop count (brackets dropped; the eval's "
        "deterministic sample); multi-answer: the sampled questions with more than one gold answer",
        f"- corpus: bench/embed_quality.py's sub-corpus ({walks:,} walks: the sampled questions' topic entities and 4,000 other roots; "
        "the full MetaQA KB's edges), all-MiniLM-L6-v2 float32 walk vectors, phrase-map texts; question encoder ONNX float32. "
        f"The lists are computed at query time: the corpus stays at {walks:,} walks (1x)",
        "- defaults otherwise: hybrid node search, k_nodes 3, k_walks 3, query.candidates 50, query.diversity ends, query.rerank_weight 0.5, "
        "walks.max_per_signature 1 (a root's 2+-step walks: one per relation path); ego's budget is walk mode's walk text",
        "- context: walks = the retrieval API's ranked walks (query.mode walks); ego = the answer prompt's default context (answer.context ego); "
        "context chars: the answer prompt's context (answer.context_text: a line per walk, '- text Also: A, B.'), mean over the 1,000 questions",
        "- lists: query.also_chars N = each shown walk (ego: line), best first, followed by the other ends of its relation path from its root "
        "(ego: the path from the root that reaches the line), none the context names already, until N characters of lists are spent",
        (f"- the KG adjacency the lists read: {loads[0]['graph_bytes'] / 2**20:.1f} MiB, loaded in {min(r['load_s'] for r in loads):.2f}-"
         f"{max(r['load_s'] for r in loads):.2f} s once per table version (before the first question)") if loads else "",
        "- latency: the rows of one hop count and prior run one after another in one process under the heavy-job lock, on 2 cores shared "
        "with other jobs outside the lock (whole-retrieval percentiles move by several ms between identical settings); retrieval = all phases, "
        "no LLM; 'of which lists' = the answer_sets phase alone",
    ]
    save_report("answer_sets", "Complete answer sets at query time (query.also_chars), MetaQA dev", [f for f in facts if f] + [f"- {n}" for n in notes], body)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q", help="warehouse holding bench/embed_quality.py's metaqa_float32 and its path prior")
    p.add_argument("--out", default="/tmp/kgwalk-answer-sets", help="folder for the per-hop results")
    p.add_argument("--hops", type=int, choices=[1, 2, 3])
    p.add_argument("--prior", choices=sorted(PRIORS), default="synthetic")
    p.add_argument("--tabulate", action="store_true")
    p.add_argument("--note", action="append", default=[], help="a line for the report's facts (what the rows do not say themselves)")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.hops:
        run(Path(args.warehouse), out, args.hops, args.prior)
    if args.tabulate:
        tabulate(out, Path(args.warehouse), args.note)


if __name__ == "__main__":
    main()
