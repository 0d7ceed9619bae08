"""Benchmark: warm retrieval latency per question by embed model and prior encoder, on MetaQA dev.

    .venv/bin/python bench/latency_by_encoder.py [--warehouse /tmp/kgwalk-q2] [--limit 1000] [--baseline-src /tmp/kgwalk-snap-a]

Each row is one `kgwalk eval` process over the eval's sample of plain dev questions per hop count
(retrieval only, no LLM; the process loads everything once, as `kgwalk serve` does), on the KGs
bench/embed_quality.py builds (`--row label=KG name:settings`, settings comma-separated). Per
row, the fitted prior (rerank paths) and the label-free one (rerank synthetic). Run it on an idle
machine: the figures are wall-clock per question. `--baseline-src` (a checkout of older kgwalk,
e.g. `git worktree add --detach /tmp/kgwalk-snap-a <ref>`) runs each row with that source too,
just before this checkout's. Writes bench/results/latency_by_encoder.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

from common import DATA, KGWALK, kgwalk_commit
from report import git_head, save_report

ROWS = ["all-MiniLM-L6-v2 throughout=metaqa_float32:embed.model=all-MiniLM-L6-v2",
        "static walks, MiniLM prior encoder (the CPU default)=metaqa_static_query_prior_encoder_all_MiniLM_L6_v2:",
        "static alone=metaqa_static:query.prior_encoder=embed"]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q2")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--row", action="append", help="label=KG name:key=value,key=value")
    p.add_argument("--baseline-src", help="a checkout of older kgwalk to run each row with too")
    args = p.parse_args()
    sources = [(f"baseline ({git_head(args.baseline_src)})", args.baseline_src)] if args.baseline_src else []
    sources.append((f"this checkout ({kgwalk_commit()})", None))
    body = ["| embed model and prior encoder | rerank | kgwalk | retrieval p50 / p99 ms (1 / 2 / 3 hops) | embed p50 ms (1 / 2 / 3) | extractive Hits@1 (1 / 2 / 3) |",
            "|---|---|---|---|---|---|"]
    for row in args.row or ROWS:
        label, _, rest = row.partition("=")
        name, _, settings = rest.partition(":")
        sets = [a for kv in filter(None, settings.split(",")) for a in ("--set", kv)]
        for rerank in ("paths", "synthetic"):
            for source_label, source in sources:
                command = [KGWALK, "eval", "metaqa", "--warehouse", args.warehouse, "--name", name, *sets, "--set", f"query.rerank={rerank}",
                           "--split", "dev", "--hops", "1,2,3", "--limit", str(args.limit), "--data", str(DATA), "--json", "--plain"]
                env = dict(os.environ, PYTHONPATH=source) if source else None
                scores = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout)
                latency = " / ".join(f"{s['latency_ms']['retrieval']['p50']:.1f} / {s['latency_ms']['retrieval']['p99']:.1f}" for s in scores)
                embed = " / ".join(f"{s['latency_ms']['embed']['p50']:.1f}" for s in scores)
                hits = " / ".join(f"{s['extractive_hits1']:.3f}" for s in scores)
                body.append(f"| {label} | {rerank} | {source_label} | {latency} | {embed} | {hits} |")
                print(body[-1], flush=True)
    facts = ["- measured " + time.strftime("%Y-%m-%d") + f"; MetaQA dev, the eval's {args.limit:,} plain questions per hop count, one question at a time, "
             f"one `kgwalk eval` process per row, rerank and kgwalk (warm after its first question), defaults otherwise",
             "- KGs: bench/embed_quality.py's 132,167-walk sub-corpus, each with its own prior (fitted on the dev files with its prior encoder)",
             "- target (issues 21, 25): retrieval p50 <= 15 ms, p99 <= 50 ms"]
    save_report("latency_by_encoder", "Warm retrieval latency by embed model and prior encoder (MetaQA dev)", facts, body)


if __name__ == "__main__":
    main()
