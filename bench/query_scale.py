"""Query at scale (issue 45): warm retrieval p50/p99 over 1,000 questions generated from a big
synthetic KG, and what a freshly started `kgwalk serve` takes to answer its first questions.

    .venv/bin/python bench/query_scale.py --warehouse /tmp/scale10m \\
        --name synth --kg /tmp/scale10m/synth-10M.parquet --report query_scale_10m

1. Questions: the synth set's 1- to 3-step path questions (kgwalk/eval/dev_templates.py, both of
   its splits: nothing is tuned here), generated from the KG file the index was built from, with
   answers computed from it; written to `<warehouse>/<name>-questions.txt`.
2. `kgwalk eval questions --file ... --limit 1000 --plain --json`: one question at a time in one
   process, after the eval's warm-up; p50 and p99 of each retrieval phase, and the scores.
3. `kgwalk serve`, started `--serve-runs` times, each after the page cache is dropped when this
   runs as root (as after a reboot: the index's files are read from disk) and once with the cache
   as the previous run left it (a restart): seconds until `GET /health` answers, the first
   `POST /retrieve`'s wall time on the client, and the p50 of the next 49.

`--set KEY=VALUE` passes a setting to every eval and serve run. `--variant LABEL:KEY=VALUE[;KEY=VALUE]`, repeated, runs
step 2 once per variant (`--variant index:query.walk_search=index --variant graph:query.walk_search=graph`), side by
side with each run's peak memory (GNU time's maximum resident set), and the serve runs with the last one.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
from common import HEAVY_LOCK, KGWALK
from report import save_report

from kgwalk.eval.dev_templates import synth_sets

HUB_DEGREE = 50  # walks.hub_degree's default: no walk passes a bigger hub, so neither does a question


def write_questions(kg_file: Path, out: Path, per_path: int) -> int:
    table = pq.read_table(kg_file, columns=["head", "relation", "tail"])
    triples = list(zip(*(table.column(c).to_pylist() for c in ("head", "relation", "tail"))))
    synth = synth_sets(triples, 0, per_path, 0, HUB_DEGREE)[0]
    files = synth.files()
    lines = files["dev.txt"] + files["held.txt"]
    out.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url: str, body: dict) -> float:
    start = time.perf_counter()
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
    return (time.perf_counter() - start) * 1000


def serve_run(where: list[str], questions: list[str], drop_cache: bool) -> dict[str, float]:
    if drop_cache:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([KGWALK, "serve", *where, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"kgwalk serve ended: {proc.stderr.read()[-2000:] if proc.stderr else ''}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    r.read()
                break
            except OSError:
                time.sleep(0.05)
        ready = time.perf_counter() - start
        url = f"http://127.0.0.1:{port}/retrieve"
        first = post(url, {"question": questions[0]})
        rest = [post(url, {"question": q}) for q in questions[1:50]]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    return {"ready_s": ready, "first_ms": first, "next_p50_ms": float(np.percentile(rest, 50)), "next_p99_ms": float(np.percentile(rest, 99))}


def variant(text: str) -> tuple[str, list[str]]:
    """`LABEL:KEY=VALUE[;KEY=VALUE]` -> (label, ["--set", "KEY=VALUE", ...])."""
    label, _, settings = text.partition(":")
    return label, [a for kv in settings.split(";") if kv for a in ("--set", kv)]


def eval_run(where: list[str], qfile: Path, limit: int, label: str) -> dict:
    """`kgwalk eval questions` with these settings: its row, and its peak memory (GNU time)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as peak:
        out = subprocess.run(["flock", HEAVY_LOCK, "/usr/bin/time", "-f", "%M", "-o", peak.name, KGWALK, "eval", "questions", *where,
                              "--file", str(qfile), "--limit", str(limit), "--plain", "--json"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        row = json.loads(out)[0]  # a row per --file
        row["peak_gib"] = int(peak.read().split()[-1]) / 2**20  # KiB
    print(label, json.dumps(row, indent=1)[:3000], flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--warehouse", required=True)
    p.add_argument("--name", default="synth")
    p.add_argument("--kg", type=Path, help="the KG file the index was built from (`kgwalk synth`'s Parquet), to generate the questions "
                                          "(<warehouse>/<name>-questions.txt) where the warehouse has none")
    p.add_argument("--questions", type=Path, help="a question file (question<TAB>answer|answer) instead of <warehouse>/<name>-questions.txt")
    p.add_argument("--per-path", type=int, default=40, help="questions per relation path template")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--serve-runs", type=int, default=2, help="cold starts of `kgwalk serve` (a warm one follows)")
    p.add_argument("--report", default="query_scale")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="a setting for the evals and serve runs (a ranking change against the defaults, say)")
    p.add_argument("--variant", dest="variants", action="append", type=variant, metavar="LABEL:KEY=VALUE[;KEY=VALUE]",
                   help="settings of one eval, beside the others' (repeat it); none: one eval at the defaults")
    args = p.parse_args()
    where = ["--warehouse", args.warehouse, "--name", args.name, *(a for kv in args.settings for a in ("--set", kv))]
    qfile = args.questions or Path(args.warehouse) / f"{args.name}-questions.txt"
    if not qfile.exists():
        if args.kg is None:
            raise SystemExit(f"no {qfile}: pass --kg to generate the questions")
        t = time.perf_counter()
        count = write_questions(args.kg, qfile, args.per_path)
        print(f"{count} questions in {time.perf_counter() - t:.0f} s -> {qfile}", flush=True)
    variants = dict(args.variants or [("defaults", [])])
    evals = {label: eval_run(where + settings, qfile, args.limit, label) for label, settings in variants.items()}
    last = list(variants)[-1]
    row = evals[last]
    where += variants[last]

    plain = [line.split("\t")[0].replace("[", "").replace("]", "") for line in qfile.read_text(encoding="utf-8").splitlines()]
    rng = np.random.default_rng(1)
    asked = [plain[i] for i in rng.choice(len(plain), size=min(50, len(plain)), replace=False)]
    root = os.geteuid() == 0
    runs = [("cold (page cache dropped)" if root else "restart", serve_run(where, asked, root)) for _ in range(args.serve_runs)]
    runs.append(("restart (page cache warm)", serve_run(where, asked, False)))

    sources = list(evals)
    body = ["## Warm retrieval, one question at a time (`kgwalk eval questions`)", "",
            f"{row.get('questions', args.limit)} questions; ms, by variant: "
            + "; ".join(f"{label}: {' '.join(v[1::2]) or 'the defaults'}" for label, v in variants.items()), "",
            "| phase | " + " | ".join(f"{s}: p50 | {s}: p99" for s in sources) + " |", "|---|" + "---:|---:|" * len(sources)]
    cell = lambda s, phase: " | ".join(f"{evals[s]['latency_ms'][phase][p]:.2f}" if phase in evals[s]["latency_ms"] else "" for p in ("p50", "p99"))  # noqa: E731
    for phase in dict.fromkeys(phase for s in sources for phase in evals[s]["latency_ms"]):
        body.append(f"| {phase} | " + " | ".join(cell(s, phase) for s in sources) + " |")
    body.append("| peak memory of the eval process, GiB | " + " | ".join(f"{evals[s]['peak_gib']:.2f} | " for s in sources) + " |")
    for s in sources:
        scores = {k: v for k, v in evals[s].items() if k not in ("latency_ms", "peak_gib")}
        body += ["", f"Scores on the same questions with `{s}` (the eval's columns):", "", "```", json.dumps(scores, indent=1), "```"]
    body += ["", f"## A fresh `kgwalk serve` ({last})", "",
             "| start | until /health answers, s | first /retrieve, ms | next 49: p50 ms | p99 ms |", "|---|---:|---:|---:|---:|"]
    body += [f"| {label} | {r['ready_s']:.1f} | {r['first_ms']:.0f} | {r['next_p50_ms']:.1f} | {r['next_p99_ms']:.1f} |" for label, r in runs]
    save_report(args.report, "Query latency at scale", [f"- KG: {args.name} in {args.warehouse}; questions: {qfile}",
                                                        "- target (issue 45): warm p50 <= 15 ms, p99 <= 50 ms",
                                                        f"- settings: {', '.join(args.settings) or 'the defaults'}"], body)


if __name__ == "__main__":
    main()
