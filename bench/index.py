"""The index stage, before (issue 21 part B) and after, on the same synthetic KG and vectors, in one run.

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/index.py [--edges 100k] [--baseline-ref 515337f]
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/index.py --source /tmp/kgwalk-bench/mq-static/metaqa \
        --model static --sides baseline,candidate --baseline-ref <commit> --candidate-set query.diversity=none --report index-metaqa-static

1. One warehouse with the stages before the index (ingest, walks, verbalize, embed) of
   `kgwalk synth --edges N`, embedded by the hashing stand-in (`hashing-384`: MiniLM's size):
   every side indexes the very same vectors table, so only the index differs. A warehouse that
   already holds these tables is reused (they are inputs here, not measured). `--source` takes
   them from a KG already built instead (e.g. the full MetaQA build with the static embedder),
   linked read-only into each side's warehouse.
2. Each side copies it and runs the index stage in a process of its own: `baseline` runs the
   kgwalk source of `--baseline-ref` (extracted with `git archive`), the others this checkout:
   `candidate` with the defaults, `candidate-float32` with index.vector_datatype=float32 (the
   share of float16 in the result).
3. Each side then answers the same questions (walk texts drawn with a fixed seed) with the
   retriever, warm; the table gives index points/s, bytes per walk on disk (allocated blocks),
   query latency, and how far each side's top-k nodes and walks agree with the baseline's.

Results: bench/results/index.md (`--model hashing-256`, the static embedder's size: index-hashing-256.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

SIDES = {"baseline": [], "candidate": [], "candidate-float32": ["index.vector_datatype=float32"]}
K_NODES, K_WALKS = 3, 3


def overrides(model: str) -> list[str]:
    return [f"embed.model={model}", "spark.master=local[2]", "ray.num_cpus=2", "query.node_search=dense", "query.rerank=none"]


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))


def kg_name(args: argparse.Namespace) -> str:
    return Path(args.source).name if args.source else "synth"


def side(args: argparse.Namespace) -> None:
    """Runs in the side's own process: the index stage, then the questions; prints one JSON line."""
    import numpy as np

    from kgwalk.config import load_config
    from kgwalk.query.retriever import Retriever
    from kgwalk.stages import folder_bytes, run_index
    from kgwalk.storage import read_table

    cfg = load_config(None, overrides(args.model) + SIDES[args.side] + args.candidate_set, name=kg_name(args), warehouse=args.warehouse)
    start = time.perf_counter()
    result = run_index(cfg)
    seconds = time.perf_counter() - start
    texts = read_table(cfg.table("texts"), ["text"]).column("text")
    questions = [texts[int(i)].as_py() for i in np.random.default_rng(0).choice(len(texts), args.queries, replace=False)]
    del texts
    before = rss_mib()
    retriever = Retriever(cfg)
    retriever.warm_up()
    answers, latencies = [], []
    for q in questions:
        start_q = time.perf_counter()
        r = retriever.retrieve(q, k_nodes=K_NODES, k_walks=K_WALKS)
        latencies.append((time.perf_counter() - start_q) * 1000)
        answers.append({"nodes": [n.id for n in r.nodes], "walks": [[w.walk_id for w in n.walks] for n in r.nodes],
                        "scores": [[w.score for w in n.walks] for n in r.nodes], "texts": [[w.text for w in n.walks] for n in r.nodes]})
    print(json.dumps({
        "kgwalk": __import__("kgwalk").__file__, "walks": result.walks, "nodes": result.nodes, "seconds": seconds,
        "bytes": folder_bytes(cfg.root / "qdrant"), "retriever_mib": rss_mib() - before,
        "p50_ms": float(np.percentile(latencies, 50)), "p95_ms": float(np.percentile(latencies, 95)), "answers": answers,
    }))


def prepare(args: argparse.Namespace, kg: Path) -> Path:
    """The warehouse with every table the index stage reads."""
    from kgwalk.config import load_config
    from kgwalk.kg.synth import parse_size, write_synth
    from kgwalk.stages import run_embed, run_ingest, run_verbalize, run_walks
    from kgwalk.storage import table_exists

    source = Path(args.warehouse) / f"source-{args.edges.lower()}-{args.model}"
    cfg = load_config(None, overrides(args.model), name="synth", warehouse=str(source), **{"kg.path": str(kg)})
    if not kg.exists():
        kg.parent.mkdir(parents=True, exist_ok=True)
        write_synth(str(kg), parse_size(args.edges), 0)
    if not table_exists(cfg.table("vectors")):
        shutil.rmtree(source, ignore_errors=True)
        for stage in (run_ingest, run_walks, run_verbalize, run_embed):
            stage(cfg)
    return source


def baseline_source(ref: str, into: Path) -> Path:
    """The kgwalk package as of `ref`, extracted (no checkout: the working tree is shared)."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "kgwalk"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def agreement(base: list[dict], other: list[dict]) -> dict[str, float]:
    """Mean share of the baseline's top-k nodes, and of its walks of the nodes both found, that
    the other side also returned; the same for the baseline's clear winners only (walks scoring
    above its k-th walk by more than 1e-3: the synthetic KG has many walks of equal text, whose
    order at the cut is arbitrary); the largest score difference at equal rank; and the share of
    questions answered identically."""
    nodes, walks, clear, same, delta = [], [], [], 0, 0.0
    for a, b in zip(base, other):
        nodes.append(len(set(a["nodes"]) & set(b["nodes"])) / max(len(a["nodes"]), 1))
        b_lists = {n: (ws, sc) for n, ws, sc in zip(b["nodes"], b["walks"], b["scores"])}
        for node, ws, sc in zip(a["nodes"], a["walks"], a["scores"]):
            if node in b_lists and ws:
                found = set(b_lists[node][0])
                walks.append(len(set(ws) & found) / len(ws))
                winners = [w for w, s in zip(ws, sc) if s > sc[-1] + 1e-3]
                if winners:
                    clear.append(len(set(winners) & found) / len(winners))
                delta = max([delta] + [abs(x - y) for x, y in zip(sc, b_lists[node][1])])
        same += a["nodes"] == b["nodes"] and a["walks"] == b["walks"] and a["texts"] == b["texts"]
    return {"nodes": sum(nodes) / len(nodes), "walks": sum(walks) / max(len(walks), 1), "clear": sum(clear) / max(len(clear), 1),
            "delta": delta, "same": same / len(base)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", default="100k")
    ap.add_argument("--model", default="hashing-384")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--baseline-ref", default="515337f", help="the commit before issue 21 part B")
    ap.add_argument("--warehouse", default="/tmp/kgwalk-bench/index")
    ap.add_argument("--source", help="a built KG's folder (<warehouse>/<name>) whose tables to index, instead of a synthetic KG")
    ap.add_argument("--sides", default=",".join(SIDES), help="which sides to run, comma-separated")
    ap.add_argument("--candidate-set", action="append", default=[], metavar="KEY=VALUE",
                    help="a setting for the sides running this checkout only (e.g. query.diversity=none: retrieval options the baseline lacks)")
    ap.add_argument("--report", help="results file name (default: index, or index-<model> for another model)")
    ap.add_argument("--side", choices=list(SIDES), help=argparse.SUPPRESS)  # internal: one side, in its own process
    args = ap.parse_args()
    if args.side:
        return side(args)

    sys.path.insert(0, str(REPO / "bench"))
    from report import git_head, save_report

    sides = args.sides.split(",")
    source = Path(args.source).parent if args.source else prepare(args, REPO / "data" / "synth" / f"synth_{args.edges.lower()}.parquet")
    old_src = baseline_source(args.baseline_ref, Path(args.warehouse) / "baseline-src")
    runs = {}
    for name in sides:
        warehouse = Path(args.warehouse) / name
        shutil.rmtree(warehouse, ignore_errors=True)
        if args.source:  # the tables linked (read-only here), the stage's state copied
            kg = warehouse / kg_name(args)
            kg.mkdir(parents=True)
            for table in Path(args.source).iterdir():
                if table.name == "state":
                    shutil.copytree(table, kg / table.name)
                elif table.is_dir() and table.name != "qdrant":
                    (kg / table.name).symlink_to(table)
        else:
            shutil.copytree(source, warehouse, ignore=shutil.ignore_patterns("qdrant"))  # the tables only
        env = dict(os.environ, PYTHONPATH=str(old_src) if name == "baseline" else str(REPO))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--side", name, "--warehouse", str(warehouse),
               "--model", args.model, "--queries", str(args.queries)] + (["--source", args.source] if args.source else [])
        if name != "baseline":
            cmd += [a for kv in args.candidate_set for a in ("--candidate-set", kv)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"{name} failed:\n{done.stderr[-3000:]}")
        runs[name] = json.loads(done.stdout.strip().splitlines()[-1])
        expected = old_src if name == "baseline" else REPO
        if not runs[name]["kgwalk"].startswith(str(expected)):
            sys.exit(f"{name} imported {runs[name]['kgwalk']}, not the source under {expected}")
        print(f"{name}: {runs[name]['walks']:,} walks in {runs[name]['seconds']:.1f} s", flush=True)

    base = runs[sides[0]]
    rows = []
    for name, r in runs.items():
        rate = r["walks"] / r["seconds"]
        per_walk = r["bytes"] / r["walks"]
        agree = agreement(base["answers"], r["answers"])
        rows.append(
            f"| {name} | {' '.join(SIDES[name]) or 'defaults'} | {r['seconds']:,.1f} | {rate:,.0f} | {rate / (base['walks'] / base['seconds']):.2f}x "
            f"| {r['bytes'] / 2**20:,.0f} | {per_walk:,.0f} | {per_walk / (base['bytes'] / base['walks']):.2f}x "
            f"| {r['p50_ms']:.1f} / {r['p95_ms']:.1f} | {r['retriever_mib']:,.0f} | {agree['nodes']:.4f} | {agree['walks']:.4f} | {agree['clear']:.4f} "
            f"| {agree['delta']:.1e} | {agree['same']:.3f} |"
        )
    facts = [
        (f"- KG: {args.source} (tables as built)" if args.source else f"- KG: `kgwalk synth --edges {args.edges}` (seed 0)")
        + f"; {base['walks']:,} walks, {base['nodes']:,} nodes; vectors: {args.model} (the same Delta table for every side)",
        f"- baseline: kgwalk at `{args.baseline_ref}`; candidate: this checkout (git {git_head(REPO)}, working tree)"
        + (f", with {' '.join(args.candidate_set)} (so that both retrieve alike)" if args.candidate_set else ""),
        ("- index stage = the whole `kgwalk index` (reading the tables, walks, nodes, node sums, commit); points/s = walks / its seconds; "
         "bytes = allocated blocks of the index folder (both collections and the node sums) / walks"),
        (f"- questions: {args.queries} walk texts drawn with seed 0, retrieved warm with dense node search, k_nodes={K_NODES}, k_walks={K_WALKS}, "
         "no rerank; agreement with the baseline: mean share of its nodes found, mean share of its walks found (nodes both found), "
         "the same for its clear winners (walks scoring > 1e-3 above its k-th: many synthetic walks share a text, so ties at the cut "
         "fall either way), the largest score difference at equal rank, share of questions with identical nodes, walks and texts"),
        "- retriever MiB: resident memory the retriever added (the candidate holds walk records from the Delta tables)",
    ]
    body = [
        ("| side | settings | index stage (s) | walk points/s | x baseline | index MiB | bytes/walk | x baseline | query p50 / p95 (ms) "
         "| retriever MiB | node agreement | walk agreement | clear winners found | max score diff | identical answers |"),
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
    ]
    name = args.report or ("index" if args.model == "hashing-384" else f"index-{args.model}")
    what = Path(args.source).name if args.source else "synthetic KG"
    save_report(name, f"Index stage: baseline vs candidate ({what}, {args.model})", facts, body)


if __name__ == "__main__":
    main()
