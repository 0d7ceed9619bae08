"""Benchmark: walks.bfs_mode on MetaQA dev, `reached` (the paper's reference walks) against
`paths` (a walk per relation path), with the defaults otherwise, in one run.

    .venv/bin/python bench/bfs_mode.py --source-warehouse /tmp/kgwalk-bench/mq-static --source metaqa \
        [--warehouse /tmp/kgwalk-bfs-mode] [--modes reached,paths]

Per mode: walk the source's ingested MetaQA KB (`kgwalk walks --set walks.bfs_mode=M`), cut the
sub-corpus of bench/embed_quality.py (the walks of the dev sample's topic entities plus 4,000 other
roots, the same roots for every mode), verbalize, embed, index, fit the path prior on the three dev
files less the evaluated questions (bench/rerank_weight.py's held-out files), and score 1,000 plain
dev questions per hop count zero-shot (rerank synthetic) and with the prior (rerank paths).
Writes bench/results/bfs_mode.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
from deltalake import DeltaTable
from common import DATA, held_out_files, kgwalk, kgwalk_commit, make_subcorpus
from report import save_report

INGESTED = ("edges", "entities", "relations", "rejected", "state")
RERANKS = {"synthetic": "zero-shot (rerank synthetic)", "paths": "prior fitted on dev less the sample (rerank paths)"}


def run_mode(warehouse: Path, source: Path, mode: str, held_out: list[Path]) -> dict:
    walked, name = f"walked_{mode}", f"dev_{mode}"
    setting = ["--set", f"walks.bfs_mode={mode}"]
    if not (warehouse / walked / "walks").exists():
        shutil.rmtree(warehouse / walked, ignore_errors=True)
        for table in INGESTED:
            if (source / table).exists():
                shutil.copytree(source / table, warehouse / walked / table)
        start = time.perf_counter()
        kgwalk("walks", "--warehouse", str(warehouse), "--name", walked, *setting)
        (warehouse / f"{walked}.json").write_text(json.dumps({"seconds": time.perf_counter() - start}))
    facts = {"walks": DeltaTable(str(warehouse / walked / "walks")).to_pyarrow_table(columns=["root"]).num_rows,
             "walk_seconds": json.loads((warehouse / f"{walked}.json").read_text())["seconds"]}
    where = ["--warehouse", str(warehouse), "--name", name, *setting]
    facts["subcorpus"] = make_subcorpus(warehouse, walked, name, 4000)
    for stage in ("verbalize", "embed", "index"):
        kgwalk(stage, *where)
    kgwalk("fit-paths", *where, *[a for f in held_out for a in ("--questions", str(f))])
    for rerank in RERANKS:
        out = kgwalk("eval", "metaqa", *where, "--set", f"query.rerank={rerank}", "--split", "dev", "--hops", "1,2,3",
                     "--limit", "1000", "--data", str(DATA), "--json", "--plain")
        facts[rerank] = json.loads(out)
    (warehouse / f"{name}.json").write_text(json.dumps(facts))
    return facts


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--source-warehouse", default="/tmp/kgwalk-bench/mq-static")
    p.add_argument("--source", default="metaqa", help="an ingested MetaQA KB in --source-warehouse")
    p.add_argument("--warehouse", default="/tmp/kgwalk-bfs-mode")
    p.add_argument("--modes", default="reached,paths")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    warehouse.mkdir(parents=True, exist_ok=True)
    held_out = held_out_files(warehouse / "held_out")
    results = {mode: run_mode(warehouse, Path(args.source_warehouse) / args.source, mode, held_out) for mode in args.modes.split(",")}
    body = ["| walks.bfs_mode | MetaQA walks | sub-corpus walks | retrieval | context recall@3 (1/2/3) "
            "| answer-set recall, multi-answer (1/2/3) | extractive Hits@1 (1/2/3) | Hits@1 mean | retrieval p50 ms (1/2/3) |",
            "|---|---:|---:|---|---|---|---|---:|---|"]
    for mode, facts in results.items():
        for rerank, label in RERANKS.items():
            scores = facts[rerank]
            per_hop = {m: " / ".join(f"{s[m]:.3f}" for s in scores) for m in ("context_recall", "multi_answer_recall", "extractive_hits1")}
            p50 = " / ".join(f"{s['latency_ms']['retrieval']['p50']:.1f}" for s in scores)
            body.append(f"| {mode} | {facts['walks']:,} | {facts['subcorpus']:,} | {label} | {per_hop['context_recall']} "
                        f"| {per_hop['multi_answer_recall']} | {per_hop['extractive_hits1']} "
                        f"| {100 * np.mean([s['extractive_hits1'] for s in scores]):.1f} | {p50} |")
    notes = [
        "- measured " + time.strftime("%Y-%m-%d") + "; MetaQA **dev**, the eval's 1,000 plain questions per hop count (brackets dropped); "
        "the sub-corpus holds the walks of the same roots for every mode (the sample's topic entities plus 4,000 other roots)",
        f"- kgwalk at git {kgwalk_commit()}, the default config but walks.bfs_mode (static walk vectors, MiniLM prior encoder, "
        "max_per_signature 1, depth 3, hub 50, direction both)",
        "- walk time: `kgwalk walks` of the whole KB, Spark local[*], process start included: " +
        ", ".join(f"{mode} {facts['walk_seconds']:.0f} s" for mode, facts in results.items()),
    ]
    save_report("bfs_mode", "walks.bfs_mode on MetaQA dev: reached vs paths", notes, body)


if __name__ == "__main__":
    main()
