"""A fresh server's first questions, with the page cache dropped as after a reboot: what
`kgwalk serve` does before and while it serves (the retriever's warm-up, then the index files
read on a background thread: kgwalk.serve.app.preload; what startup made kept out of the cyclic
garbage collector's scans: kgwalk.query.retriever.long_lived_frozen).

    sudo-capable shell: flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/first_queries.py \\
        --warehouse /tmp/s19/mq --name metaqa --baseline-src /tmp/kgwalk-base     # bench/results/first_queries.md

Each row is one fresh process, started right after `echo 1 > /proc/sys/vm/drop_caches` (root
only): it opens the retriever, warms it up, reads the index files or not (here before the first
question, to show what the background read buys once done), then asks the eval's sample of plain
MetaQA dev questions one at a time. Rows alternate, twice each. `--baseline-src`: a checkout whose
warm-up is the older one (its row neither reads the files nor loads the time index). `--mode ego`:
the context `kgwalk answer` grounds its LLM call in (`answer.context`, an ego-graph per top node
built from 50 candidate walks each) instead of the retrieval API's walks
(bench/results/first_queries_ego.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from common import DATA  # noqa: E402
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
    questions = sample(load_questions(question_file(DATA, int(args.hops), "dev")), args.limit)
    total, phases = [], {}
    with contextlib.ExitStack() as stack:
        if args.freeze:  # what `kgwalk serve` does once started
            from kgwalk.query.retriever import long_lived_frozen

            stack.enter_context(long_lived_frozen())
        for q in questions:
            begin = time.perf_counter()
            result = retriever.retrieve(q.plain, mode=args.mode)
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
    ap.add_argument("--hops", default="1", help="hop counts, comma-separated (the row process: one)")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--mode", choices=["walks", "ego"], default="walks", help="the retrieval API's walks, or the answer's ego-graph context")
    ap.add_argument("--row", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--preload", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--freeze", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.row:
        row(args)
        return
    try:
        Path("/proc/sys/vm/drop_caches").write_text("1\n")
    except OSError as e:
        raise SystemExit(f"first_queries: dropping the page cache needs root ({e.strerror})") from None
    head = git_head(str(REPO))
    variants = [(f"this checkout ({head}): warm-up, index files read, startup frozen (kgwalk serve)", None, ["--preload", "--freeze"]),
                (f"this checkout ({head}): warm-up, index files read", None, ["--preload"]),
                (f"this checkout ({head}): warm-up only", None, [])]
    if args.baseline_src:
        variants.append((f"baseline ({git_head(args.baseline_src)}): its warm-up", args.baseline_src, []))
    rows = []
    for hops in [int(h) for h in args.hops.split(",")]:
        for _ in range(2):
            for label, source, flags in variants:
                os.sync()
                Path("/proc/sys/vm/drop_caches").write_text("1\n")
                command = [sys.executable, __file__, "--row", "--warehouse", args.warehouse, "--name", args.name,
                           "--hops", str(hops), "--limit", str(args.limit), "--mode", args.mode, *flags]
                env = dict(os.environ, PYTHONPATH=source) if source else None
                out = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
                rows.append((label, hops, json.loads(out.strip().splitlines()[-1])))
                print(label, hops, rows[-1][2], flush=True)
    asked = "the retrieval API's walks" if args.mode == "walks" else "the answer's context (`retrieve(mode='ego')`, what `kgwalk answer` grounds its LLM call in)"
    facts = [
        f"- corpus `{args.name}` under {args.warehouse}; the eval's {args.limit} plain MetaQA dev questions of each hop count, one at a time, in a fresh process started right after"
        f" `echo 1 > /proc/sys/vm/drop_caches`; zero-shot defaults; {asked}; rows alternate, twice each",
        "- ready: seconds from opening the retriever to the first question (the index files read in the row that reads them;"
        " `kgwalk serve` reads them on a background thread while it serves); times in ms",
    ]
    body = [
        "| code | hops | ready (s) | read (MiB) | retrieval p50 / p99 / max | walk search p50 / p99 | slowest lexicon phase (the first question with a year) |",
        "|---|---:|---:|---:|---|---|---:|",
        *[f"| {label} | {hops} | {r['ready_s']:.2f} | {r['read_mib']:,} | {r['p50']} / {r['p99']} / {r['max']} | {r['walk_p50']} / {r['walk_p99']} | {r['lexicon_max']} |"
          for label, hops, r in rows],
    ]
    name, what = ("first_queries", "") if args.mode == "walks" else ("first_queries_ego", ": the answer's ego-graph context")
    save_report(name, f"A fresh server's first questions after the page cache is dropped{what}", facts, body)


if __name__ == "__main__":
    main()
