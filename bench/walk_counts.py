"""Benchmark: walks and time per walk spec on MetaQA, side by side in one run (in-process engine).

    .venv/bin/python bench/walk_counts.py [--kb ../shared/data/metaqa/kb.txt]

Writes bench/results/walk_counts.md: how hub_degree, the signature cap and depth size the corpus.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from report import save_report

from kgwalk.kg.ingest import build_tables
from kgwalk.kg.readers import read_kg
from kgwalk.walks import Graph, WalkSpec, generate_walks

HERE = Path(__file__).resolve().parent
SPECS = [
    ("BFS depth 3, no hub rule, no cap", dict(hub_degree=None, max_per_signature=None)),
    ("BFS depth 3, hub 50, no cap", dict(max_per_signature=None)),
    ("BFS depth 3, hub 50, m=4", dict(max_per_signature=4)),
    ("BFS depth 3, hub 50, m=2", dict(max_per_signature=2)),
    ("BFS depth 3, hub 50, m=1 (default)", dict(max_per_signature=1)),
    ("BFS depth 2, hub 50, no cap", dict(depth=2, max_per_signature=None)),
    ("random 60 x 3, hub 50 (unique)", dict(kinds=("random",))),
]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--kb", default=str(HERE.parent.parent / "shared" / "data" / "metaqa" / "kb.txt"))
    p.add_argument("--with-uncapped", action="store_true", help="include the spec without hub rule (278M walks, long)")
    args = p.parse_args()
    tables = build_tables(read_kg(args.kb), args.kb)
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, "both")
    rows = []
    for title, kw in SPECS:
        if not args.with_uncapped and kw.get("hub_degree", 50) is None:
            continue
        start = time.perf_counter()
        walks = sum(t.num_rows for t in generate_walks(graph, graph.node_ids, WalkSpec(**kw), 2048))
        seconds = time.perf_counter() - start
        rows.append((title, walks, walks / graph.num_nodes, seconds))
        print(rows[-1], flush=True)
    save_report(
        "walk_counts",
        "Walks per spec on MetaQA (direction both, in-process engine, one core)",
        [f"- KB: {args.kb}: {tables.edges.num_rows:,} edges, {graph.num_nodes:,} entities"],
        [
            "| spec | walks | per root | seconds | walks/s |",
            "|---|---:|---:|---:|---:|",
            *[f"| {t} | {w:,} | {w / graph.num_nodes:,.1f} | {s:,.1f} | {w / s:,.0f} |" for t, w, _, s in rows],
            "",
            "m = max_per_signature (walks of 2+ steps kept per root and relation path; 1-step walks always kept).",
        ],
    )

if __name__ == "__main__":
    main()
