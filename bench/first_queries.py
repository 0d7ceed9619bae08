"""A fresh server's first questions, with the page cache dropped as after a reboot: what
`kgwalk serve` does before and while it serves (the retriever's warm-up, then the index files
read on a background thread: kgwalk.serve.app.preload).

    sudo-capable shell: flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/first_queries.py \\
        --warehouse /tmp/s19/mq --name metaqa --baseline-src /tmp/kgwalk-base     # bench/results/first_queries.md

Each row is one fresh process, started right after `echo 1 > /proc/sys/vm/drop_caches` (root
only): it opens the retriever, warms it up, reads the index files or not (here before the first
question, to show what the background read buys once done), then asks the eval's sample of plain
MetaQA dev questions one at a time. Rows alternate, twice each. `--baseline-src`: a checkout whose
warm-up is the older one (its row neither reads the files nor loads the time index).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from embed_quality import DATA  # noqa: E402
from report import git_head, save_report  # noqa: E402


def row(args: argparse.Namespace) -> None:
    """One measured process (run by main): its figures as a JSON line."""
    import numpy as np

    from kgwalk.eval.metaqa import load_questions, question_file, sample
    from kgwalk.query.retriever import Retriever

    start = time.perf_counter()
    retriever = Retriever.from_config(None, [], name=args.name, warehouse=args.warehouse)
    retriever.warm_up()
    opened = time.perf_counter() - start
    read = 0
    if args.preload:
        from kgwalk.serve.app import preload

        read = preload(retriever.store.shard_files())
    ready = time.perf_counter() - start
    questions = sample(load_questions(question_file(DATA, args.hops, "dev")), args.limit)
    total, phases = [], {}
    for q in questions:
        begin = time.perf_counter()
        result = retriever.retrieve(q.plain)
        total.append((time.perf_counter() - begin) * 1000)
        for phase, ms in result.timings_ms.items():
            phases.setdefault(phase, []).append(ms)
    pct = lambda xs, p: round(float(np.percentile(xs, p)), 1)  # noqa: E731
    print(json.dumps({"warm_up_s": round(opened, 2), "ready_s": round(ready, 2), "read_mib": round(read / 2**20),
                      "p50": pct(total, 50), "p99": pct(total, 99), "max": round(max(total), 1),
                      "walk_p50": pct(phases["walk_search"], 50), "walk_p99": pct(phases["walk_search"], 99),
                      "lexicon_max": round(max(phases["lexicon"]), 1)}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--baseline-src")
    ap.add_argument("--hops", type=int, default=1)
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--row", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--preload", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.row:
        row(args)
        return
    try:
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
    except OSError as e:
        raise SystemExit(f"first_queries: dropping the page cache needs root ({e.strerror})") from None
    variants = [(f"this checkout ({git_head(str(REPO))}): warm-up, index files read", None, True),
                (f"this checkout ({git_head(str(REPO))}): warm-up only", None, False)]
    if args.baseline_src:
        variants.append((f"baseline ({git_head(args.baseline_src)}): its warm-up", args.baseline_src, False))
    rows = []
    for _ in range(2):
        for label, source, preload in variants:
            os.sync()
            Path("/proc/sys/vm/drop_caches").write_text("1\n")
            command = [sys.executable, __file__, "--row", "--warehouse", args.warehouse, "--name", args.name,
                       "--hops", str(args.hops), "--limit", str(args.limit), *(["--preload"] if preload else [])]
            env = dict(os.environ, PYTHONPATH=source) if source else None
            out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
            rows.append((label, json.loads(out.strip().splitlines()[-1])))
            print(label, rows[-1][1], flush=True)
    facts = [
        f"- corpus `{args.name}` under {args.warehouse}; the eval's {args.limit} plain MetaQA dev {args.hops}-hop questions, one at a time, in a fresh process started right after"
        " `echo 1 > /proc/sys/vm/drop_caches`; zero-shot defaults; rows alternate, twice each",
        "- ready: seconds from opening the retriever to the first question (the index files read in the row that reads them;"
        " `kgwalk serve` reads them on a background thread while it serves); times in ms",
    ]
    body = [
        "| code | ready (s) | read (MiB) | retrieval p50 / p99 / max | walk search p50 / p99 | slowest lexicon phase (the first question with a year) |",
        "|---|---:|---:|---|---|---:|",
        *[f"| {label} | {r['ready_s']:.2f} | {r['read_mib']:,} | {r['p50']} / {r['p99']} / {r['max']} | {r['walk_p50']} / {r['walk_p99']} | {r['lexicon_max']} |"
          for label, r in rows],
    ]
    save_report("first_queries", "A fresh server's first questions after the page cache is dropped", facts, body)


if __name__ == "__main__":
    main()
