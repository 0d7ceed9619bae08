"""Incremental refresh vs full rebuild on the 1M-edge synthetic KG, in one run.

    .venv/bin/python bench/refresh.py [--edges 1M] [--fractions 0.0001,0.001,0.01] [--compaction 0.001] [--model static]

1. A full build (every stage, Spark local[2] + Ray, the embedded Qdrant) of the synthetic KG:
   the rebuild time every refresh is compared with.
2. Successive refreshes, each changing the given fraction of edges: half removals of random
   edges, half additions drawn by preferential attachment (a random edge's head and relation,
   another edge's tail of the same relation; 5% go to new entities), like real KG updates,
   which concentrate on popular entities.
3. One more refresh (`--compaction`, 0.1% by default) with `index.compact_ratio=0`, so that it
   folds the walks' delta and the node sums' delta into new bases: what a refresh costs once per
   compaction (by default once the delta passes 20% of the base).

`--model` is the embedder of the build and refreshes: `static` (model2vec distilled from the
bundled MiniLM, a real embedder at ~20K sentences/s) or `hashing-384` (a stand-in of MiniLM's
vector size). all-MiniLM-L6-v2 on these 2 cores would embed the 5.9M walks of a full build for
many hours, so its time is projected from its rate measured in this run on 2,000 of the corpus's
sentences: full rebuild = measured rebuild - walks / model rate + walks / MiniLM rate; refresh
likewise with its re-embedded walks.
Results: bench/results/refresh.md.

`--reuse FULL_SECONDS` refreshes the warehouse a full run left (no rebuild: 17 min, 19 GiB),
taking its full-build time as given, and `--rows FILE` keeps every measured refresh as a line of
FILE and writes the table from all of them, each row named by `--label`, as a section after the
full run's table in the results file. So the refreshes of two
checkouts run one after another on one warehouse, each with its own change file (the baseline's
code first: `PYTHONPATH=<baseline checkout> python bench/refresh.py --reuse ... --label baseline`):

    PYTHONPATH=/tmp/base .venv/bin/python bench/refresh.py --reuse 992.5 --fractions 0.001 --compaction 0 --rows /tmp/rows.jsonl --label baseline
    .venv/bin/python bench/refresh.py --reuse 992.5 --fractions 0.001 --compaction 0 --rows /tmp/rows.jsonl --label candidate --seed 1

The MiniLM projection needs both models' rates on this corpus (a minute more per run): a reuse
run leaves it out.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from report import machine_lines  # noqa: E402

from kgwalk.config import load_config  # noqa: E402
from kgwalk.kg.synth import parse_size, write_synth  # noqa: E402
from kgwalk.refresh.job import run_refresh  # noqa: E402
from kgwalk.stages import folder_bytes, run_build  # noqa: E402
from kgwalk.storage import read_table  # noqa: E402


def change_set(cfg, fraction: float, rng: np.random.Generator, out: Path) -> int:
    """Write a change set touching `fraction` of the current edges; returns its size."""
    edges = read_table(cfg.table("edges"))
    # id and key from one read: two reads of a table of many files need not return rows in the same order (at 10M edges they did not)
    keys = {t: dict(zip(*(table.column(c).to_pylist() for c in ("id", "key")))) for t in ("entities", "relations") for table in [read_table(cfg.table(t), ["id", "key"])]}
    n = max(2, int(round(fraction * edges.num_rows)))
    src, rel, dst = (edges.column(c).to_numpy() for c in ("src", "rel", "dst"))
    rows = []
    for i in rng.choice(edges.num_rows, n // 2, replace=False):
        rows.append((keys["entities"][src[i]], keys["relations"][rel[i]], keys["entities"][dst[i]], "remove"))
    by_rel = {r: np.flatnonzero(rel == r) for r in np.unique(rel)}
    for k in range(n - n // 2):
        i = int(rng.integers(edges.num_rows))
        j = int(rng.choice(by_rel[rel[i]]))
        tail = keys["entities"][dst[j]] if rng.random() > 0.05 else f"bench entity {fraction} {k}"
        rows.append((keys["entities"][src[i]], keys["relations"][rel[i]], tail, "add"))
    table = pa.table({name: [r[c] for r in rows] for c, name in enumerate(("head", "relation", "tail", "op"))})
    pacsv.write_csv(table, out)
    return n


def refresh_runs(args, cfg, kg: Path, overrides: list[str]) -> list[tuple[float, Any, str]]:
    """(fraction of edges changed, config, row label suffix) per refresh: --fractions, then
    --compaction's run with compact_ratio 0 (it folds every delta into a new base)."""
    runs = [(float(f), cfg, "") for f in args.fractions.split(",") if f]
    if args.compaction:
        compacting = load_config(None, [*overrides, "index.compact_ratio=0"], name=args.name, warehouse=args.warehouse, **{"kg.path": str(kg)})
        runs.append((args.compaction, compacting, ", compacting"))
    return runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", default="1M")
    ap.add_argument("--fractions", default="0.0001,0.001,0.01")
    ap.add_argument("--model", default="static")
    ap.add_argument("--warehouse", default="/tmp/kgwalk-bench/refresh")
    ap.add_argument("--name", default="synth", help="the KG's name in the warehouse (with --reuse: e.g. a bench/bytes_per_walk.py row)")
    ap.add_argument("--compaction", type=float, default=0.001, help="then one more refresh of this fraction that must compact the index (0: none)")
    ap.add_argument("--reuse", type=float, default=None, metavar="FULL_SECONDS",
                    help="refresh the warehouse as it is, taking this full-build time (measured earlier) as given")
    ap.add_argument("--rows", type=Path, default=None, help="keep each refresh as a line of this file; the table shows them all")
    ap.add_argument("--label", default="", help="the code the refreshes ran (a column of the table)")
    ap.add_argument("--seed", type=int, default=0, help="of the change sets")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "refresh.md")
    args = ap.parse_args()
    edges = parse_size(args.edges)
    kg = REPO / "data" / "synth" / f"synth_{args.edges.lower()}.parquet"
    if not kg.exists():
        write_synth(str(kg), edges, 0)
    overrides = [f"embed.model={args.model}", "spark.master=local[2]", "ray.num_cpus=2"]
    cfg = load_config(None, overrides, name=args.name, warehouse=args.warehouse, **{"kg.path": str(kg)})
    if args.reuse is not None:
        reused(args, cfg, kg, overrides)
        return
    shutil.rmtree(args.warehouse, ignore_errors=True)

    build = run_build(cfg)
    full = sum(build.seconds.values())
    walks = build.walks

    from kgwalk.embed.model import make_embedder

    sample = read_table(cfg.table("texts"), ["text"]).slice(0, 2000).column("text").to_pylist()
    minilm = make_embedder("all-MiniLM-L6-v2", threads=2)
    minilm.encode(sample[:64])
    start = time.perf_counter()
    minilm.encode(sample)
    minilm_rate = len(sample) / (time.perf_counter() - start)
    model = make_embedder(args.model)
    model.encode(sample[:64])
    start = time.perf_counter()
    model.encode(sample)
    model_rate = len(sample) / (time.perf_counter() - start)
    # Swap the embedder's compute time only; everything else (Ray, I/O, index) is measured.
    full_minilm = full - walks / model_rate + walks / minilm_rate

    rng = np.random.default_rng(0)
    rows = []
    # The last refresh runs with compact_ratio 0: it folds every delta into a new base, the cost
    # a refresh pays once per compaction (index.compact_ratio of the base changed).
    runs = refresh_runs(args, cfg, kg, overrides)
    for fraction, run_cfg, label in runs:
        changes = Path(args.warehouse) / f"changes_{fraction}{label.replace(', ', '_')}.csv"
        n = change_set(run_cfg, fraction, rng, changes)
        start = time.perf_counter()
        r = run_refresh(run_cfg, str(changes))
        seconds = time.perf_counter() - start
        refresh_minilm = seconds - r.embedded / model_rate + r.embedded / minilm_rate
        rows.append((f"{fraction:.2%}{label}", n, r, seconds, refresh_minilm))
        print(f"{fraction:.2%}{label}: {r.summary()} in {seconds:.1f} s", flush=True)

    lines = [
        "# Incremental refresh vs full rebuild (synthetic KG)",
        "",
        f"- KG: `kgwalk synth --edges {args.edges}` (seed 0): {edges:,} edges; default walk spec (BFS, direction both, depth 3, hub_degree 50, one walk per root and relation path)",
        f"- full rebuild, measured in this run: {full:,.1f} s (" + ", ".join(f"{k} {v:,.1f} s" for k, v in build.seconds.items())
        + f"); {walks:,} walks, {build.nodes:,} nodes; index {build.index_bytes / 2**30:,.1f} GiB",
        f"- embedder: {args.model} ({model_rate:,.0f} sentences/s in-process here, on 2,000 of these sentences); all-MiniLM-L6-v2 measured at {minilm_rate:,.0f} sentences/s on 2,000 of these sentences,"
        f" so a MiniLM full rebuild projects to {full_minilm / 3600:,.1f} h",
        "- refreshes run one after another on the same warehouse (like successive scheduled runs); each changes the given fraction of edges, half removed, half added by preferential attachment (5% to new entities)",
        "- changed walks = walks added by the refresh (new content ids); re-verbalized and re-embedded walks must equal them (no labels changed here)",
        *machine_lines(),
        "",
        "| edges changed | change records | affected roots | walks recomputed | walks added | walks removed | re-verbalized | re-embedded | = changed | kg (s) | walks (s) | texts (s) | vectors (s) | index (s) | refresh (s) | x full rebuild | x full rebuild, MiniLM projected |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for fraction, n, r, seconds, refresh_minilm in rows:
        s = r.seconds
        exact = "yes" if r.verbalized == r.embedded == r.walks_added else "NO"
        lines.append(
            f"| {fraction} | {n:,} | {r.affected_roots:,} ({r.affected_roots / build.nodes:.1%}) | {r.walks_recomputed:,} | {r.walks_added:,} | {r.walks_removed:,} "
            f"| {r.verbalized:,} | {r.embedded:,} | {exact} | {s['kg']:.1f} | {s['walks']:.1f} | {s['texts']:.1f} | {s['vectors']:.1f} | {s['index']:.1f} "
            f"| {seconds:,.1f} | {seconds / full:.3f} | {refresh_minilm / full_minilm:.4f} |"
        )
    lines += ["", f"Index on disk after the last refresh (live and previous generation, and the bases they use): {folder_bytes(cfg.root / 'qdrant') / 2**30:,.1f} GiB"]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.write_text(text)
    print(f"wrote {args.out}")


def reused(args, cfg, kg: Path, overrides: list[str]) -> None:
    """Refreshes of the warehouse a full run left; the table from every row kept in `args.rows`."""
    import json

    from kgwalk.index.edge import EdgeStore

    nodes = EdgeStore(cfg.root / "qdrant").layouts()[f"{cfg.name}_nodes"].base_points
    rng = np.random.default_rng(args.seed)
    runs = refresh_runs(args, cfg, kg, overrides)
    rows_file = args.rows or Path(args.warehouse) / "refresh_rows.jsonl"
    for fraction, run_cfg, label in runs:
        changes = Path(args.warehouse) / f"changes_{args.label}_{args.seed}_{fraction}{label.replace(', ', '_')}.csv"
        n = change_set(run_cfg, fraction, rng, changes)
        start = time.perf_counter()
        r = run_refresh(run_cfg, str(changes))
        seconds = time.perf_counter() - start
        print(f"{args.label} {fraction:.2%}{label}: {r.summary()} in {seconds:.1f} s", flush=True)
        row = {"code": args.label, "fraction": f"{fraction:.2%}{label}", "changes": n, "nodes": nodes, "seconds": seconds, "full": args.reuse,
               **{k: getattr(r, k) for k in ("affected_roots", "walks_recomputed", "walks_added", "walks_removed", "verbalized", "embedded")},
               "stages": r.seconds}
        with open(rows_file, "a") as f:
            f.write(json.dumps(row) + "\n")
    rows = [json.loads(line) for line in open(rows_file)]
    lines = [
        _REUSED,
        "",
        "- KG: the warehouse of the full run above, refreshed further (no rebuild), after its own refreshes",
        f"- full rebuild: {args.reuse:,.1f} s, as measured by the full run above; x full rebuild divides by it (5% of it: {0.05 * args.reuse:,.1f} s),"
        " or by the full rebuild a row's `--reuse` gave (rows of another warehouse)",
        f"- embedder: {args.model}; refreshes run one after another on that warehouse, each with its own change file, in the order of the table;"
        " each changes the given fraction of edges, half removed, half added by preferential attachment (5% to new entities)",
        f"- rows kept in {rows_file}; the MiniLM projection is left out of these runs",
        *machine_lines(),
        "",
        "| code | edges changed | change records | affected roots | walks recomputed | walks added | walks removed | re-embedded | kg (s) | walks (s) | texts (s) | vectors (s) | index (s) | refresh (s) | x full rebuild |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        s = row["stages"]
        lines.append(
            f"| {row['code']} | {row['fraction']} | {row['changes']:,} | {row['affected_roots']:,} ({row['affected_roots'] / row['nodes']:.1%}) "
            f"| {row['walks_recomputed']:,} | {row['walks_added']:,} | {row['walks_removed']:,} | {row['embedded']:,} | {s['kg']:.1f} "
            f"| {s['walks']:.1f} | {s['texts']:.1f} | {s['vectors']:.1f} | {s['index']:.1f} | {row['seconds']:,.1f} | {row['seconds'] / row.get('full', args.reuse):.3f} |"
        )
    series: dict[str, list[dict]] = {}  # successive refreshes of one code: labels "<code>, refresh <n>"
    for row in rows:
        series.setdefault(re.sub(r", refresh \d+$", "", row["code"]), []).append(row)
    lines.append("")
    for code, runs in series.items():
        mean = sum(r["seconds"] for r in runs) / len(runs)
        full = runs[0].get("full", args.reuse)
        lines.append(f"- {code}: {len(runs)} refreshes, {mean:,.1f} s on average, **{mean / full:.3f}** of its full rebuild ({full:,.1f} s)")
    text = "\n".join(lines) + "\n"
    print(text)
    full_run = args.out.read_text().split(_REUSED)[0].rstrip() + "\n\n" if args.out.exists() else ""
    args.out.write_text(full_run + text)  # after the full run's table, in place of an earlier reuse table
    print(f"wrote {args.out}")


_REUSED = "## Later refreshes of that warehouse, by code (`--reuse`)"


if __name__ == "__main__":
    main()
