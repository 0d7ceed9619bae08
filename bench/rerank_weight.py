"""Benchmark: query.rerank_weight (score = cosine + weight x the prior's share) on MetaQA dev,
with the path prior fitted on dev **less the evaluated questions**, so a question never votes
for itself.

    .venv/bin/python bench/rerank_weight.py --warehouse /tmp/kgwalk-q2 --kgs metaqa_float32,metaqa_static \
        [--weights 0.5,1.0,2.0,4.0]

Needs the sub-corpora of bench/embed_quality.py in `--warehouse` (walked, embedded, indexed).
Per KG: copy it to `<kg>_ho`, fit its prior on the three dev files less the eval's 1,000-question
sample per hop count, then `kgwalk eval metaqa --split dev` (bracketed questions) per weight, with
the labelled prior (rerank paths) and the label-free one (rerank synthetic, which has no fitted
examples to leak). Writes bench/results/rerank_weight.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

import numpy as np
from common import DATA, held_out_files, kgwalk, kgwalk_commit
from report import save_report


MODEL_OF = {"metaqa_float32": "all-MiniLM-L6-v2", "metaqa_static": "static"}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q2")
    p.add_argument("--kgs", default="metaqa_float32,metaqa_static")
    p.add_argument("--weights", default="0.5,1.0,2.0,4.0")
    p.add_argument("--reranks", default="paths,synthetic")
    p.add_argument("--tabulate", action="store_true", help="only tabulate the eval JSONs of an earlier run")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    kgs, weights, reranks = args.kgs.split(","), args.weights.split(","), args.reranks.split(",")
    if not args.tabulate:
        files = held_out_files(warehouse / "held_out")
        for kg in kgs:
            held, model = f"{kg}_ho", ["--set", f"embed.model={MODEL_OF[kg]}"]
            where = ["--warehouse", str(warehouse), "--name", held, *model]
            if not (warehouse / held / "path_prior").exists():
                shutil.rmtree(warehouse / held, ignore_errors=True)
                shutil.copytree(warehouse / kg, warehouse / held)
                shutil.rmtree(warehouse / held / "path_prior", ignore_errors=True)
                kgwalk("index", *where)  # collections are named after the KG
                kgwalk("fit-paths", *where, *[a for f in files for a in ("--questions", str(f))])
            for rerank in reranks:
                for weight in weights:
                    out = warehouse / f"{held}.{rerank}.w{weight}.json"
                    if not out.exists():
                        out.write_text(kgwalk("eval", "metaqa", *where, "--set", f"query.rerank={rerank}", "--set", f"query.rerank_weight={weight}",
                                              "--split", "dev", "--hops", "1,2,3", "--limit", "1000", "--data", str(DATA), "--json"))
    body = ["| walk vectors and question encoder | rerank | weight | context recall@3 (1/2/3) | extractive Hits@1 (1/2/3) | mean Hits@1 |",
            "|---|---|---:|---|---|---:|"]
    for kg in kgs:
        for rerank in reranks:
            for weight in weights:
                path = warehouse / f"{kg}_ho.{rerank}.w{weight}.json"
                if not path.exists():
                    continue
                scores = json.loads(path.read_text())
                recall = " / ".join(f"{s['context_recall']:.3f}" for s in scores)
                hits = " / ".join(f"{s['extractive_hits1']:.3f}" for s in scores)
                body.append(f"| {MODEL_OF[kg]} | {rerank} | {weight} | {recall} | {hits} | {100 * np.mean([s['extractive_hits1'] for s in scores]):.1f} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + "; MetaQA dev, the eval's 1,000 bracketed questions per hop count, on bench/embed_quality.py's "
        "sub-corpus; rerank paths: the prior fitted on the three dev files less those 3,000 questions; synthetic: no labels",
        f"- kgwalk at git {kgwalk_commit()}, defaults otherwise",
    ]
    save_report("rerank_weight", "query.rerank_weight on MetaQA dev, prior fitted without the evaluated questions", facts, body)


if __name__ == "__main__":
    main()
