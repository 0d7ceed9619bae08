"""Folding the node sums' delta into a new base (a refresh does it about every ninth 0.1% refresh
of the 1M-edge KG), this checkout against an older one, on data of that KG's size.

    git worktree add --detach /tmp/kgwalk-base <ref>
    .venv/bin/python bench/node_sums_fold.py --baseline-src /tmp/kgwalk-base    # bench/results/node_sums_fold.md

A base of 388,834 nodes x (1 + 256) int64 (800 MB, as kgwalk.index.node_sums keeps them) and a
delta of 80,000 roots (20% of the base, where the fold is due; 500 of them new, some without walks
any more), committed by each checkout's `NodeSumFiles`, alternately, twice each. The new bases
must be equal, element for element.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from report import git_head, save_report  # noqa: E402

from kgwalk.index import node_sums  # noqa: E402
from kgwalk.index.generations import Layout  # noqa: E402


def module_of(checkout: str):
    spec = importlib.util.spec_from_file_location("baseline_node_sums", Path(checkout) / "kgwalk" / "index" / "node_sums.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-src", required=True)
    ap.add_argument("--folder", type=Path, default=Path("/tmp/kgwalk-bench/node-sums-fold"))
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    nodes, width, delta = 388_834, 257, 80_000
    shutil.rmtree(args.folder, ignore_errors=True)
    (args.folder / "g1").mkdir(parents=True)
    roots = np.sort(rng.choice(2**62, nodes, replace=False)).astype(np.int64)
    base = rng.integers(-(2**40), 2**40, (nodes, width))
    base[:, 0] = rng.integers(1, 50, nodes)
    np.save(args.folder / "g1" / "nodes.sums.roots.npy", roots)
    np.save(args.folder / "g1" / "nodes.sums.npy", base)
    del base
    changed = np.concatenate([rng.choice(roots, delta - 500, replace=False), rng.choice(2**62, 500).astype(np.int64)])
    rows = rng.integers(-(2**40), 2**40, (delta, width))
    rows[:, 0] = rng.integers(0, 50, delta)  # 0: the root has no node any more
    codes = {f"baseline ({git_head(args.baseline_src)})": module_of(args.baseline_src), f"this checkout ({git_head(str(REPO))})": node_sums}
    seconds: dict[str, list[float]] = {label: [] for label in codes}
    results = {}
    for _ in range(2):
        for label, module in codes.items():
            generation = f"g{len(results) + 2}"
            (args.folder / generation).mkdir()
            files = module.NodeSumFiles(args.folder, 0.2)
            files.write("nodes", changed, rows[:, 1:], rows[:, 0])
            layout = Layout(dim=width - 1, graph=True, base="-", base_points=nodes, sums_base="g1/nodes", sums_base_rows=nodes)
            start = time.perf_counter()
            files.commit(generation, {"nodes": layout})
            seconds[label].append(time.perf_counter() - start)
            results[generation] = label
    first, *others = results
    expect = np.load(args.folder / first / "nodes.sums.npy", mmap_mode="r")
    expect_roots = np.load(args.folder / first / "nodes.sums.roots.npy")
    for generation in others:
        assert np.array_equal(np.load(args.folder / generation / "nodes.sums.roots.npy"), expect_roots), generation
        assert np.array_equal(np.load(args.folder / generation / "nodes.sums.npy", mmap_mode="r"), expect), generation
    shutil.rmtree(args.folder)
    facts = [
        f"- a base of {nodes:,} nodes x {width} int64 ({nodes * width * 8 / 1e6:,.0f} MB, the 1M-edge KG's size) and a delta of {delta:,} roots"
        " (20% of the base: the fold is due; 500 new roots, some rows without walks), committed by each code's `NodeSumFiles`, alternately, twice each",
        f"- the new bases are equal element for element ({len(expect_roots):,} rows)",
    ]
    body = ["| code | commit with the fold (s), each run |", "|---|---|",
            *[f"| {label} | {', '.join(f'{s:.2f}' for s in runs)} |" for label, runs in seconds.items()]]
    save_report("node_sums_fold", "Folding the node sums' delta into a new base", facts, body)


if __name__ == "__main__":
    main()
