"""What a larger KG needs, projected linearly from a measured build (issue 45): walks, bytes on disk
per table and index part, and hours per stage on this machine and on a cluster of N workers.

    .venv/bin/python bench/scale_estimate.py --measured /tmp/bpw1m/results.json --row default \\
        --edges-measured 1M --edges 10M,100M --workers 4,16 --cores 16

`--measured` is the results.json that `bench/bytes_per_walk.py --kg synth:1M` leaves in its
warehouse: per row, its build's stage times and its bytes per part. The projection is linear in
walks (a synthetic KG of the same generator makes the same walks per edge at every size; the
walk, verbalize and embed work is per walk). On a cluster, the walks (Spark), verbalize and embed
(Ray) stages spread over every worker core: their core-seconds a walk are the measured seconds
times the 2 cores that ran them here. Indexing writes one Qdrant collection per KG from one
process in the embedded setup; a cluster writes through the server backend to a Qdrant cluster,
whose write rate is taken as this machine's index rate per Qdrant node, with as many Qdrant nodes
as workers (an assumption, not a measurement: no Qdrant server runs here). A transformer on GPU
workers would change the embed line; the static model's is what was measured.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from report import save_report

CORES_HERE = 2
PARALLEL = ("walks", "verbalize", "embed")  # Spark and Ray stages: they spread over a cluster's cores


def count(text: str) -> float:
    units = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--measured", type=Path, required=True)
    p.add_argument("--row", default="default")
    p.add_argument("--edges-measured", default="1M")
    p.add_argument("--edges", default="10M,100M")
    p.add_argument("--workers", default="4,16")
    p.add_argument("--cores", type=int, default=16, help="cores per worker")
    p.add_argument("--report", default="scale_estimate")
    args = p.parse_args()
    row = json.loads(args.measured.read_text())[args.row]
    times, parts = row["times"], row["parts"]
    walks = times["walks_count"]
    per_walk_s = {stage: times.get(stage, 0.0) / walks for stage in ("ingest", "walks", "verbalize", "embed", "index")}
    bytes_per_walk = sum(parts.values()) / walks
    sizes = [count(e) for e in args.edges.split(",")]
    workers = [int(w) for w in args.workers.split(",")]
    scale = walks / count(args.edges_measured)  # walks per edge

    body = ["## Walks and disk", "", "| edges | walks | disk, GB | of which the index, GB |", "|---:|---:|---:|---:|"]
    index_share = sum(v for k, v in parts.items() if not k.startswith("table ")) / sum(parts.values())
    for edges in sizes:
        n = edges * scale
        body.append(f"| {edges:,.0f} | {n:,.0f} | {n * bytes_per_walk / 1e9:,.1f} | {n * bytes_per_walk * index_share / 1e9:,.1f} |")
    body += ["", "## Hours per stage", "",
             "| edges | stage | this machine (2 cores) | " + " | ".join(f"{w} workers x {args.cores} cores" for w in workers) + " |",
             "|---:|---|---:|" + "---:|" * len(workers)]
    for edges in sizes:
        n = edges * scale
        totals = [0.0] * (1 + len(workers))
        for stage, seconds in per_walk_s.items():
            here = n * seconds / 3600
            if stage in PARALLEL:
                cluster = [n * seconds * CORES_HERE / (w * args.cores) / 3600 for w in workers]
            elif stage == "index":  # one Qdrant node's write rate per worker (see the docstring)
                cluster = [here / w for w in workers]
            else:  # ingest: one pass over the KG file on the driver
                cluster = [here for _ in workers]
            for i, h in enumerate([here, *cluster]):
                totals[i] += h
            body.append(f"| {edges:,.0f} | {stage} | {here:,.2f} | " + " | ".join(f"{h:,.2f}" for h in cluster) + " |")
        body.append(f"| {edges:,.0f} | **all** | **{totals[0]:,.2f}** | " + " | ".join(f"**{h:,.2f}**" for h in totals[1:]) + " |")
    facts = [f"- projected from {args.measured} row `{args.row}`: a build of {count(args.edges_measured):,.0f} edges, "
             f"{walks:,.0f} walks ({scale:.2f} a walk an edge), {bytes_per_walk:,.0f} bytes a walk, "
             + ", ".join(f"{k} {v * 1e6:.1f} us a walk" for k, v in per_walk_s.items()),
             "- linear in walks; cluster: Spark and Ray stages over every worker core, index writes at this machine's rate per "
             "Qdrant node, one node per worker (an assumption: see the script's docstring)"]
    save_report(args.report, "What larger KGs need, projected from a measured build", facts, body)


if __name__ == "__main__":
    main()
