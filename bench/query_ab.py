"""Two source trees' warm retrieval, question by question in turn (a code change's latency, issue 45).

    .venv/bin/python bench/query_ab.py --baseline /tmp/wt-base --candidate . --warehouse /tmp/scale10m \\
        --name synth --report query_ab_10m [--candidate-set KEY=VALUE]

Runs of one code differ by up to 2.4 ms at p50 on the 2-core machine (bench/results/query_scale_10m_*), as
much as a change is worth. So the two trees answer from two processes held side by side, each after its own
warm-up, and take turns: question i goes to A then B, question i+1 to B then A (whichever goes second finds
the pages the first read). Both see the same machine at the same moment; the paired ratio per question and
each phase's p50 and p99 are reported side by side. Each answer's shown walks are compared: a change meant to
be faster only must show the same walks for every question.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from common import HEAVY_LOCK
from report import git_head, save_report

# A worker: one tree's retriever, answering one question per stdin line (JSON), one JSON line back.
WORKER = r"""
import json, sys, time
from kgwalk.query import Retriever
from kgwalk.query import retriever as module
r = Retriever.from_config(None, json.loads(sys.argv[1]), warehouse=sys.argv[2], name=sys.argv[3])
r.warm_up()
print(json.dumps({"ready": True}), flush=True)
with module.long_lived_frozen():
    for line in sys.stdin:
        question = json.loads(line)
        start = time.perf_counter()
        found = r.retrieve(question)
        ms = (time.perf_counter() - start) * 1000
        shown = [[w.walk_id, w.score] for n in found.nodes for w in n.walks]
        print(json.dumps({"ms": ms, "phases": found.timings_ms, "shown": shown}), flush=True)
"""


class Worker:
    def __init__(self, tree: Path, settings: list[str], warehouse: str, name: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree.resolve()), "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER, json.dumps(settings), warehouse, name], cwd=tree, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.tree = tree

    def ready(self) -> None:
        assert self.proc.stdout is not None
        if json.loads(self.proc.stdout.readline() or "{}").get("ready") is not True:
            raise SystemExit(f"the worker of {self.tree} did not start")

    def ask(self, question: str) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(question) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


def ask_in_turn(workers: dict[str, Worker], questions: list[str], warm: int) -> dict[str, list[dict]]:
    """Every question asked of each worker, in turn (ABBA), after `warm` questions each; their answers by worker."""
    for w in workers.values():  # loaded one after the other: two warm-ups at once would share the cores
        w.ready()
        for q in questions[:warm]:
            w.ask(q)
    answers: dict[str, list[dict]] = {label: [] for label in workers}
    for i, q in enumerate(questions):
        for label in (list(workers) if i % 2 == 0 else list(workers)[::-1]):
            answers[label].append(workers[label].ask(q))
    return answers


def comparison(answers: dict[str, list[dict]]) -> list[str]:
    """The report's body: wall time and each phase, p50 and p99 side by side; the paired ratios; what differs shown."""
    ms = {label: np.array([a["ms"] for a in got]) for label, got in answers.items()}
    ratio = ms["candidate"] / ms["baseline"]
    shown = {label: [[walk for walk, _ in a["shown"]] for a in got] for label, got in answers.items()}
    same = [i for i, walks in enumerate(shown["baseline"]) if walks == shown["candidate"][i]]
    score_gap = max((abs(x - y) for i in same for (_, x), (_, y) in zip(answers["baseline"][i]["shown"], answers["candidate"][i]["shown"])),
                    default=0.0)
    phases = list(dict.fromkeys(ph for got in answers.values() for a in got for ph in a["phases"]))
    times = {"retrieval (wall)": ms} | {ph: {label: np.array([a["phases"].get(ph, 0.0) for a in got]) for label, got in answers.items()}
                                        for ph in phases}
    body = [f"{len(ratio)} questions, each asked of both trees in turn (ABBA); ms.", "",
            "| | baseline p50 | candidate p50 | baseline p99 | candidate p99 |", "|---|---:|---:|---:|---:|"]
    body += [f"| {row} | " + " | ".join(f"{np.percentile(t[label], q):.2f}" for q in (50, 99) for label in ("baseline", "candidate")) + " |"
             for row, t in times.items()]
    return body + ["", f"- candidate / baseline, per question: median {np.median(ratio):.3f}, mean {ratio.mean():.3f}",
                   f"- p50 ratio {np.percentile(ms['candidate'], 50) / np.percentile(ms['baseline'], 50):.3f}, "
                   f"p99 ratio {np.percentile(ms['candidate'], 99) / np.percentile(ms['baseline'], 99):.3f}",
                   f"- questions whose shown walks differ (or their order): {len(ratio) - len(same)} of {len(ratio)}; "
                   f"the largest score difference of a shown walk where they do not: {score_gap:.2g}"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--baseline", type=Path, required=True, help="a source tree (a git worktree of the commit to compare against)")
    p.add_argument("--candidate", type=Path, default=Path(__file__).resolve().parents[1])
    p.add_argument("--warehouse", required=True)
    p.add_argument("--name", default="synth")
    p.add_argument("--questions", type=Path, help="question<TAB>answer lines (default: <warehouse>/<name>-questions.txt)")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--warm", type=int, default=50, help="questions each worker answers before timing")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE", help="a setting for both trees")
    p.add_argument("--candidate-set", dest="candidate_settings", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting for the candidate alone (with --baseline the same tree: a setting's cost)")
    p.add_argument("--report", default="query_ab")
    args = p.parse_args()
    qfile = args.questions or Path(args.warehouse) / f"{args.name}-questions.txt"
    questions = [line.split("\t")[0].replace("[", "").replace("]", "") for line in qfile.read_text(encoding="utf-8").splitlines()]
    trees = {"baseline": (args.baseline, args.settings), "candidate": (args.candidate, args.settings + args.candidate_settings)}
    with open(HEAVY_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        workers = {label: Worker(tree, settings, args.warehouse, args.name) for label, (tree, settings) in trees.items()}
        answers = ask_in_turn(workers, questions[: args.limit], args.warm)
        for w in workers.values():
            w.close()
    save_report(args.report, "Warm retrieval, two source trees in turn", [
        f"- KG: {args.name} in {args.warehouse}; questions: {qfile}",
        f"- baseline: {args.baseline} at {git_head(args.baseline)}; candidate: {args.candidate} at {git_head(args.candidate)}",
        f"- settings: {', '.join(args.settings) or 'the defaults'}; the candidate's own: {', '.join(args.candidate_settings) or 'none'}"],
        comparison(answers))


if __name__ == "__main__":
    main()
