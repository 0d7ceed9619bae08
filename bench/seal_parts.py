"""What Qdrant's writable segment holds while a walks base is written, and what sealing it in parts
saves (issue 45): a bare qdrant-edge shard configured as kgwalk configures a walks base, N points
of 256-dim unit vectors written in batches, the process's RssAnon read after every batch.

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/seal_parts.py --points 2000000 --part 500000

Rows, one after another in one run, each in a fresh shard:
- whole: sealed once at the end (`seal`), as a base was before;
- optimize, merges on: `optimize()` every --part points with Qdrant's own merge settings;
- optimize, merges off: the same with kgwalk's base settings (no merges);
- seal (kgwalk): `seal` (optimize + flush) every --part points, with kgwalk's base settings.
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from report import save_report

from kgwalk.index.qdrant_shards import create_shard, seal

DIM = 256
BATCH = 20_000
LIBC = ctypes.CDLL("libc.so.6")


def anon_mib() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon")) / 1024


def write(folder: Path, points: int, part: int, merges: bool, flush: bool) -> dict:
    import qdrant_edge
    from qdrant_edge import Point, UpdateOperation

    config = qdrant_edge.EdgeOptimizersConfig
    if merges:  # Qdrant's own merge settings: the base's without default_segment_number
        qdrant_edge.EdgeOptimizersConfig = lambda **kw: config(**{k: v for k, v in kw.items() if k != "default_segment_number"})  # type: ignore[misc]
    try:
        shard = create_shard(folder, DIM, "base", 0, "turbo8")
    finally:
        qdrant_edge.EdgeOptimizersConfig = config
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((BATCH, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    flat = vectors.reshape(-1).data
    LIBC.malloc_trim(0)
    start_anon, peak, sealing = anon_mib(), 0.0, 0.0
    for at in range(0, points, BATCH):
        shard.update(UpdateOperation.upsert_points([Point(id=at + r, vector=flat[r * DIM : (r + 1) * DIM], payload=None) for r in range(BATCH)]))
        if part and (at + BATCH) % part == 0:
            t = time.perf_counter()
            seal(shard) if flush else shard.optimize()
            LIBC.malloc_trim(0)  # what the allocator keeps is not what Qdrant holds
            sealing += time.perf_counter() - t
        peak = max(peak, anon_mib())
    t = time.perf_counter()
    seal(shard)
    last = time.perf_counter() - t
    segments = [s for s in (folder / "segments").iterdir() if (s / "id_tracker.e2i").exists()]
    shard.close()
    growth = peak - start_anon
    return {"growth_mib": growth, "per_point": growth * 2**20 / points, "sealing_s": sealing, "last_seal_s": last, "sealed_segments": len(segments)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--points", type=int, default=2_000_000)
    p.add_argument("--part", type=int, default=500_000)
    p.add_argument("--report", default="seal_parts")
    args = p.parse_args()
    rows = [("whole, sealed at the end (before)", 0, False, True), ("optimize every part, Qdrant's merge settings", args.part, True, False),
            ("optimize every part, merges off", args.part, False, False), ("seal (optimize + flush) every part, merges off: kgwalk", args.part, False, True)]
    body = ["| how the base is written | peak RssAnon growth, MiB | B a point | sealing the parts, s | the last seal, s | sealed segments |",
            "|---|---:|---:|---:|---:|---:|"]
    for label, part, merges, flush in rows:
        folder = Path(tempfile.mkdtemp(prefix="seal-parts-"))
        try:
            r = write(folder / "shard", args.points, part, merges, flush)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        print(label, r, flush=True)
        body.append(f"| {label} | {r['growth_mib']:.0f} | {r['per_point']:.0f} | {r['sealing_s']:.1f} | {r['last_seal_s']:.1f} | {r['sealed_segments']} |")
    save_report(args.report, "A walks base written whole or sealed in parts: Qdrant's memory",
                [f"- {args.points:,} points of {DIM}-dim turbo8 unit vectors, no payload, in batches of {BATCH:,}; parts of {args.part:,} points;"
                 " RssAnon of this process after every batch (malloc_trim after each seal)"], body)


if __name__ == "__main__":
    main()
