"""`kgwalk query` from the shell on an index built by another checkout (an appendable walks base)
and by this one (a sealed base): what opening the walks shard costs a one-shot query.

    .venv/bin/python bench/cli_sealed.py --warehouse /tmp/mq --name metaqa --baseline-src /tmp/kgwalk-base [--rounds 2] [--runs 5]

The warehouse must hold a built KG. Each round rebuilds the index with `kgwalk index` from the
baseline's source, times --runs CLI queries (this checkout's CLI, after one untimed query), then
the same with this checkout's index; questions alternate. Writes bench/results/cli_sealed.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, kgwalk_query, phase_ms, source_env
from report import git_head, save_report

QUESTIONS = ["what films did Emir Kusturica star in", "the director of Kismet is also the director of which movies"]


def build_index(source: Path, warehouse: str, name: str) -> None:
    """`kgwalk index` with the kgwalk package of `source`."""
    subprocess.run([sys.executable, "-m", "kgwalk.cli", "index", "--warehouse", warehouse, "--name", name],
                   check=True, capture_output=True, text=True, cwd=source, env=source_env(source))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--name", default="metaqa")
    ap.add_argument("--baseline-src", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    seconds: dict[str, list[float]] = {"baseline": [], "candidate": []}
    walk_ms: dict[str, list[float]] = {"baseline": [], "candidate": []}
    for _ in range(args.rounds):
        for side, src in (("baseline", args.baseline_src), ("candidate", REPO)):
            build_index(src, args.warehouse, args.name)
            kgwalk_query(REPO, args.warehouse, args.name, [], QUESTIONS[0])  # untimed: file cache, model load paths
            for i in range(args.runs):
                start = time.perf_counter()
                done = kgwalk_query(REPO, args.warehouse, args.name, [], QUESTIONS[i % 2])
                seconds[side].append(time.perf_counter() - start)
                walk_ms[side].append(phase_ms(done.stdout + done.stderr)["walk_search"])
    body = ["| index built by | median s (end to end) | min s | max s | median walk_search ms (opens the walks shard) |",
            "|---|---:|---:|---:|---:|"]
    for side, label in (("baseline", f"baseline ({git_head(args.baseline_src)}): appendable walks base"), ("candidate", f"this checkout ({git_head(REPO)}): sealed walks base")):
        t = seconds[side]
        body.append(f"| {label} | {statistics.median(t):.2f} | {min(t):.2f} | {max(t):.2f} | {statistics.median(walk_ms[side]):.0f} |")
    facts = [f"- KG: {args.warehouse}/{args.name}; {args.rounds} rounds, each rebuilding the index with either side's `kgwalk index` and timing {args.runs} queries of this checkout's CLI (after one untimed query), questions alternating: "
             + "; ".join(QUESTIONS),
             f"- measured {time.strftime('%Y-%m-%d')}"]
    save_report("cli_sealed", "`kgwalk query` from the shell: appendable vs sealed walks base", facts, body)


if __name__ == "__main__":
    main()
