"""A sealed walks base against an appendable one: loading, reading and searching the live walks
base shard of two warehouses built from the same KG by two checkouts.

    .venv/bin/python bench/walks_base.py LABEL=KG_FOLDER LABEL=KG_FOLDER [--roots 300] [--repeats 3]

KG_FOLDER is a warehouse's KG folder (holding `walks` and `qdrant`), e.g. the ones
bench/refresh.py leaves. Each measurement runs in a fresh process, as a refresh or a cold
`kgwalk query` would: `EdgeShard.load` of the base (median of --repeats), reading 10,000 walk
points by id in batches of 1,024 as a refresh reads vanished walks' vectors, searching the top 3
within each of --roots random roots (per-search p50 / p99, right after the load and again), and
closing it. Results: bench/results/walks_base.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from report import git_head, save_report  # noqa: E402

_PROBE = r"""
import json, sys, time
import numpy as np
from qdrant_edge import EdgeShard, FieldCondition, Filter, MatchValue, Query, QueryRequest
from kgwalk.index.base import point_ids
shard_path, ids_path, roots_path, dim = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ids, roots = np.load(ids_path), np.load(roots_path)
t = time.perf_counter(); shard = EdgeShard.load(shard_path); load = time.perf_counter() - t
info = shard.info()
t = time.perf_counter()
for s in range(0, len(ids), 1024):
    shard.retrieve(point_ids=point_ids(ids[s:s + 1024]), with_payload=False, with_vector=True)
read = time.perf_counter() - t
def search_each_root():
    rng, seconds = np.random.default_rng(0), []
    for root in roots.tolist():
        q = rng.standard_normal(dim).astype(np.float32)
        q /= np.linalg.norm(q)
        t = time.perf_counter()
        shard.query(QueryRequest(limit=3, query=Query.Nearest(q.tolist()), with_payload=True,
                                 filter=Filter(must=[FieldCondition(key="root", match=MatchValue(value=int(root)))])))
        seconds.append(time.perf_counter() - t)
    return seconds
cold = search_each_root()
warm = search_each_root()
t = time.perf_counter(); shard.close(); close = time.perf_counter() - t
print(json.dumps({"load": load, "read": read, "p50": float(np.percentile(cold, 50)), "p99": float(np.percentile(cold, 99)),
                  "warm_p50": float(np.percentile(warm, 50)), "warm_p99": float(np.percentile(warm, 99)),
                  "close": close, "points": info.points_count, "indexed": info.indexed_vectors_count}))
"""


def _base(kg: Path) -> tuple[Path, int, str]:
    from kgwalk.index.edge import EdgeStore

    store = EdgeStore(kg / "qdrant")
    walks = next((name, layout) for name, layout in store.layouts().items() if not layout.graph)[1]
    store.close()
    return kg / "qdrant" / walks.base, walks.dim, walks.datatype


def _seal_seconds(shard: Path, dim: int, datatype: str, copy: Path) -> float:
    import shutil

    from kgwalk.index.qdrant_shards import copy_shard, load_shard, shard_config

    shutil.rmtree(copy, ignore_errors=True)
    copy_shard(shard, copy)
    start = time.perf_counter()
    base = load_shard(copy, shard_config(dim, "base", 0, datatype))
    base.optimize()
    base.flush()
    base.close()
    seconds = time.perf_counter() - start
    shutil.rmtree(copy)
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sides", nargs="+", help="LABEL=KG_FOLDER")
    ap.add_argument("--roots", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    from kgwalk.storage import read_table

    rows = []
    sealed: dict[str, float] = {}
    scratch = Path("/tmp/kgwalk-walks-base")
    scratch.mkdir(exist_ok=True)
    for side in args.sides:
        label, folder = side.split("=", 1)
        kg = Path(folder)
        shard, dim, datatype = _base(kg)
        walks = read_table(str(kg / "walks"), ["walk_id", "root"])
        rng = np.random.default_rng(0)
        ids = rng.choice(walks.column("walk_id").to_numpy(), 10_000, replace=False)
        roots = rng.choice(np.unique(walks.column("root").to_numpy()), args.roots, replace=False)
        np.save(scratch / f"{label}.ids.npy", np.sort(ids))
        np.save(scratch / f"{label}.roots.npy", roots)
        runs = []
        for _ in range(args.repeats):
            out = subprocess.run([sys.executable, "-c", _PROBE, str(shard), str(scratch / f"{label}.ids.npy"), str(scratch / f"{label}.roots.npy"), str(dim)],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        median = {k: float(np.median([r[k] for r in runs])) for k in ("load", "read", "p50", "p99", "warm_p50", "warm_p99", "close")}
        size = sum(f.stat().st_blocks * 512 for f in shard.rglob("*") if f.is_file())
        if runs[0]["indexed"] == 0:  # what sealing this base costs (a copy, as a compaction seals)
            sealed[label] = _seal_seconds(shard, dim, datatype, scratch / "copy")
        rows.append((label, runs[0]["points"], runs[0]["indexed"], size, median))
    body = [
        "| side | base points | sealed (indexed points) | load (s) | read 10K by id (s) | search in a root p50 / p99, first / again (ms) | close (s) | base MiB | bytes/point |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for label, points, indexed, size, m in rows:
        body.append(f"| {label} | {points:,} | {indexed:,} | {m['load']:.2f} | {m['read']:.2f} | {m['p50'] * 1000:.2f} / {m['p99'] * 1000:.2f}; {m['warm_p50'] * 1000:.2f} / {m['warm_p99'] * 1000:.2f} | "
                    f"{m['close']:.2f} | {size / 2**20:,.0f} | {size / max(points, 1):,.0f} |")
    for label, seconds in sealed.items():
        body.append(f"\nSealing a copy of the {label} base (load with the base config, `optimize`, flush): {seconds:.1f} s "
                    f"({seconds / rows[[r[0] for r in rows].index(label)][1] * 1e6:.1f} µs a point).")
    facts = ["- sides: " + "; ".join(args.sides),
             f"- each figure the median of {args.repeats} fresh processes; searches: top 3 within each of {args.roots} random roots, first right after the load (pages not yet touched), then the same searches again",
             f"- measured {time.strftime('%Y-%m-%d')} at git {git_head(REPO)}"]
    save_report("walks_base", "Walks base: sealed (immutable, on disk) vs appendable (rebuilt in memory on load)", facts, body)


if __name__ == "__main__":
    main()
