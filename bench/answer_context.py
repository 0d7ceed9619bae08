"""What grounds the answer: the retrieval API's walks vs the answer prompt's default context (the
top nodes' pruned ego-graphs, answer.context ego), zero-shot and with the fitted prior, on MetaQA
dev plain questions; with `--baseline-src`, an older checkout's rows beside this one's.

    git worktree add --detach /tmp/kgwalk-base <ref>
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/answer_context.py --warehouse /tmp/s17/wh --name dev_paths \\
        --baseline-src /tmp/kgwalk-base                                        # bench/results/answer_context.md

Each row is one `kgwalk eval` process (the eval's sample of plain dev questions per hop count,
retrieval only, no LLM) in `query.mode` walks or ego: ego mode's lines are what `kgwalk answer`
puts in the prompt by default, so its context recall and answer-set recall are the answer's.
The corpus is any MetaQA dev sub-corpus with a fitted prior (bench/bfs_mode.py builds `dev_paths`:
the walks of the sample's topic entities and 4,000 other roots).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

from common import DATA, KGWALK, kgwalk_commit
from report import git_head, save_report

RERANKS = {"synthetic": "zero-shot (synthetic prior)", "paths": "path prior fitted on dev"}
MODES = {"walks": "walks (the retrieval API)", "ego": "ego-graph lines (the answer prompt's default)"}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", required=True)
    p.add_argument("--name", required=True, help="a MetaQA dev sub-corpus with a fitted prior")
    p.add_argument("--set", action="append", default=[], dest="settings", help="a setting of every row (repeatable)")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--baseline-src", help="a checkout of older kgwalk: its ego rows too (walk mode is what it was)")
    args = p.parse_args()
    sources = [(f"baseline ({git_head(args.baseline_src)})", args.baseline_src)] if args.baseline_src else []
    sources.append((f"this checkout ({kgwalk_commit()})", None))
    body = ["| ranking | context | kgwalk | context recall (1/2/3) | answer-set recall (1/2/3) | multi-answer answer-set recall (1/2/3) "
            "| extractive Hits@1 (1/2/3) | context chars (1/2/3) | retrieval ms p50 (1/2/3) |", "|---|---|---|---|---|---|---|---|---|"]
    for rerank, rerank_label in RERANKS.items():
        for mode, mode_label in MODES.items():
            for source_label, source in sources if mode == "ego" else sources[-1:]:
                command = [KGWALK, "eval", "metaqa", "--warehouse", args.warehouse, "--name", args.name,
                           *[a for kv in [*args.settings, f"query.rerank={rerank}", f"query.mode={mode}"] for a in ("--set", kv)],
                           "--split", "dev", "--hops", "1,2,3", "--limit", str(args.limit), "--data", str(DATA), "--json", "--plain"]
                env = dict(os.environ, PYTHONPATH=source) if source else None
                scores = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout)
                per = {k: " / ".join(f"{s[k]:.3f}" for s in scores) for k in ("context_recall", "answer_recall", "multi_answer_recall", "extractive_hits1")}
                chars = " / ".join(f"{s['context_chars']:.0f}" for s in scores)
                p50 = " / ".join(f"{s['latency_ms']['retrieval']['p50']:.1f}" for s in scores)
                body.append(f"| {rerank_label} | {mode_label} | {source_label} | {per['context_recall']} | {per['answer_recall']} "
                            f"| {per['multi_answer_recall']} | {per['extractive_hits1']} | {chars} | {p50} |")
                print(body[-1], flush=True)
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; MetaQA **dev**, the eval's {args.limit:,} plain questions per hop count (brackets dropped), "
        f"one `kgwalk eval` process per row; corpus `{args.name}` (settings: {', '.join(args.settings) or 'defaults'})",
        "- context recall: a gold answer in the context (walks or lines, with their answer-set lists, query.also_chars 1000); "
        "answer-set recall: the share of the gold answers in it; multi-answer: over questions with more than one gold answer; "
        "extractive Hits@1 reads the walk ranking, the same in both contexts",
        "- ego lines: the top nodes' pruned ego-graphs in as many characters as the walks' sentences take, each line followed "
        "by the other ends of the relation path that reaches it (kgwalk/query/ego.py, answer_sets.py)",
        "- latency: 2 cores, one process at a time; ego mode fetches query.candidates walks for every top node and prunes them",
    ]
    save_report("answer_context", "Answer context: walks vs ego-graph lines (MetaQA dev)", facts, body)


if __name__ == "__main__":
    main()
