"""The node collection over many successive refreshes: what keeping its HNSW graph costs.

    .venv/bin/python bench/node_updates.py [--warehouse /tmp/kgwalk-bench/refresh] [--steps 48] [--per 9300]

A refresh rewrites the vectors of the nodes whose walks changed (about 9,300 of the 1M-edge KG's
389K nodes for a 0.1% refresh) and leaves them unindexed, searched exactly, until they pass
`_UNINDEXED_RATIO` of the collection; then `optimize` indexes them. What that costs depends on
Qdrant's optimizer settings of the collection, and only shows over many refreshes (merges and
vacuums of deleted points recur), which full refreshes make slow to measure. So this replays the
node side alone through `EdgeStore`, as a refresh drives it (`begin(copy=True)`, upsert, `finish`,
`commit`): the node vectors of a built index (`--warehouse`, a full run of bench/refresh.py) are
written into a scratch index, then `--steps` times `--per` random nodes get new vectors (their
old one plus noise, renormalised). Each policy gets the same updates and the same queries.

Per policy: the build's `optimize`, each step's time (mean, and the steps that optimized), and
every 6 steps recall@10 against exact search (300 queries near random nodes) and search p50/p99.
The queries drift as the vectors do, so read recall across policies at one step, not down a
column. Results: bench/results/node_updates.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from report import save_report  # noqa: E402

from kgwalk.index import qdrant_shards  # noqa: E402
from kgwalk.index.edge import EdgeStore  # noqa: E402

COLLECTION = "nodes"


def node_vectors(warehouse: Path) -> tuple[np.ndarray, np.ndarray]:
    """(ids, unit vectors) of the live index's node collection of bench/refresh.py's warehouse."""
    from qdrant_edge import ScrollRequest

    folder = warehouse / "synth" / "qdrant"
    shard = qdrant_shards.load_shard(folder / EdgeStore(folder).layouts()["synth_nodes"].base)
    ids, vectors, offset = [], [], None
    while True:
        records, offset = shard.scroll(ScrollRequest(offset=offset, limit=8192, with_payload=False, with_vector=True))
        ids += [r.id for r in records]
        vectors += [r.vector for r in records]
        if offset is None:
            break
    shard.close()
    v = np.array(vectors, np.float32)
    return np.array(ids, np.uint64).view(np.int64), v / np.linalg.norm(v, axis=1, keepdims=True)


def qdrant_defaults(dim: int, kind: str, hnsw_m: int, datatype: str):
    """kgwalk's node collection config with Qdrant's default optimizer settings (before 2026-11-25)."""
    from qdrant_edge import EdgeConfig

    c = shipped_config(dim, kind, hnsw_m, datatype)
    return EdgeConfig(vectors=c.vectors, hnsw_config=c.hnsw_config, optimizers=None, wal_enabled=False,
                      payload_memory=c.payload_memory, id_tracker_memory=c.id_tracker_memory)


shipped_config = qdrant_shards.shard_config
POLICIES = {"Qdrant's defaults": qdrant_defaults, "kgwalk's (8 segments, vacuum at 0.5 deleted)": shipped_config}


def measure(store: EdgeStore, ids: np.ndarray, vectors: np.ndarray, rng: np.random.Generator) -> dict:
    q = vectors[rng.choice(len(vectors), 300, replace=False)] + 0.05 * rng.standard_normal((300, vectors.shape[1])).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    exact = ids[np.argsort(-(q @ vectors.T), axis=1)[:, :10]]
    found, latency = [], []
    for row in q:
        start = time.perf_counter()
        hits = store.search(COLLECTION, row, 10)
        latency.append(time.perf_counter() - start)
        found.append({h.id for h in hits})
    recall = float(np.mean([len(f & set(e.tolist())) / 10 for f, e in zip(found, exact)]))
    return {"recall": round(recall, 4), "p50": round(float(np.percentile(latency, 50)) * 1000, 2), "p99": round(float(np.percentile(latency, 99)) * 1000, 2)}


def replay(policy: str, ids: np.ndarray, vectors: np.ndarray, steps: int, per: int, folder: Path) -> list[dict]:
    qdrant_shards.shard_config = POLICIES[policy]  # what EdgeStore creates and loads the collection with
    shutil.rmtree(folder, ignore_errors=True)
    store = EdgeStore(folder)
    rng = np.random.default_rng(1)  # the same updates and queries for every policy
    store.begin()
    store.create(COLLECTION, vectors.shape[1], graph=True, hnsw_m=16)
    for start in range(0, len(ids), 8192):
        store.upsert(COLLECTION, ids[start : start + 8192], vectors[start : start + 8192], [{}] * len(ids[start : start + 8192]))
    start = time.perf_counter()
    store.finish(COLLECTION)
    store.commit()
    rows = [{"policy": policy, "step": 0, "seconds": time.perf_counter() - start, **measure(store, ids, vectors, rng)}]
    current = vectors.copy()
    for step in range(1, steps + 1):
        chosen = rng.choice(len(ids), per, replace=False)
        moved = current[chosen] + 0.1 * rng.standard_normal((per, vectors.shape[1])).astype(np.float32)
        current[chosen] = moved / np.linalg.norm(moved, axis=1, keepdims=True)
        start = time.perf_counter()
        store.begin(copy=True)
        store.upsert(COLLECTION, ids[chosen], current[chosen], [{}] * per)
        store.finish(COLLECTION)
        store.commit()
        row = {"policy": policy, "step": step, "seconds": time.perf_counter() - start,
               "optimized": store.layouts()[COLLECTION].unindexed_points == 0}  # finish indexed them
        if step % 6 == 0:
            row.update(measure(store, ids, current, rng))
        rows.append(row)
        print(json.dumps(row), flush=True)
    store.close()
    qdrant_shards.shard_config = shipped_config
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", type=Path, default=Path("/tmp/kgwalk-bench/refresh"))
    ap.add_argument("--steps", type=int, default=48)
    ap.add_argument("--per", type=int, default=9300, help="nodes updated a step (a 0.1%% refresh of the 1M-edge KG: ~9,300)")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/kgwalk-bench/node-updates"))
    args = ap.parse_args()
    ids, vectors = node_vectors(args.warehouse)
    print(f"{len(ids):,} node vectors of {vectors.shape[1]} dimensions", flush=True)
    results = {policy: replay(policy, ids, vectors, args.steps, args.per, args.scratch) for policy in POLICIES}
    checkpoints = range(6, args.steps + 1, 12)
    facts = [
        f"- node vectors of the 1M-edge synthetic KG's built index ({len(ids):,} x {vectors.shape[1]}), written into a scratch index through `EdgeStore`;"
        f" then {args.steps} steps, each giving {args.per:,} random nodes new vectors (what a 0.1% refresh updates), each a `begin(copy=True)`, upsert, `finish`, `commit` as a refresh does",
        "- a step's seconds include copying the collection into the new generation; `optimize` runs when the unindexed points pass 10% of the collection",
        "- recall@10 against exact search, 300 queries near random nodes, the same for every policy at a step (they drift with the vectors: compare across a row's policies, not down the steps)",
    ]
    body = [
        "| optimizer settings | build `optimize` (s) | mean step (s) | steps that optimized: seconds | "
        + " | ".join(f"step {s}: recall / p50 / p99 ms" for s in checkpoints) + " |",
        "|---|---:|---:|---|" + "---|" * len(checkpoints),
    ]
    for policy, rows in results.items():
        steps = rows[1:]
        optimized = ", ".join(f"{r['seconds']:.1f}" for r in steps if r["optimized"])
        by_step = {r["step"]: r for r in rows}
        cells = " | ".join(f"{by_step[s]['recall']:.3f} / {by_step[s]['p50']:.2f} / {by_step[s]['p99']:.2f}" for s in checkpoints)
        body.append(f"| {policy} | {rows[0]['seconds']:.1f} | {np.mean([r['seconds'] for r in steps]):.2f} | {optimized} | {cells} |")
    save_report("node_updates", "The node collection over successive refreshes: Qdrant's optimizer settings", facts, body)


if __name__ == "__main__":
    main()
