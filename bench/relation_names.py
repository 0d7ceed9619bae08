"""Zero-shot ranking with and without the relations' own names in the synthetic prior's content
words (query.synthetic_relation_names), with MetaQA's phrase map and with automatic phrases (the
prior's path questions from the relation names alone, as on a KG nobody wrote phrases for), on
MetaQA dev plain questions; no labelled data in any row.

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/relation_names.py --warehouse /tmp/s17/wh --name dev_paths

Each row is one `kgwalk eval` process (the eval's sample of plain dev questions per hop count,
query.rerank synthetic, defaults otherwise) on a MetaQA dev sub-corpus (bench/bfs_mode.py builds
`dev_paths`). `verbalize.phrases={}` changes the prior's path questions only: the walks' texts and
vectors are those the corpus was built with. Writes bench/results/relation_names.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time

import numpy as np
from embed_quality import DATA, KGWALK, kgwalk_commit
from report import save_report

ROWS = [  # (phrases, relation names, settings)
    ("MetaQA's phrase map", "off (before)", ["query.synthetic_relation_names=false"]),
    ("MetaQA's phrase map", "on (the default)", []),
    ("automatic (verbalize.phrases emptied)", "off (before)", ["verbalize.phrases={}", "query.synthetic_relation_names=false"]),
    ("automatic (verbalize.phrases emptied)", "on (the default)", ["verbalize.phrases={}"]),
]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", required=True)
    p.add_argument("--name", required=True, help="a MetaQA dev sub-corpus")
    p.add_argument("--limit", type=int, default=1000)
    args = p.parse_args()
    body = ["| phrases | relation names | context recall@3 (1/2/3) | multi-answer answer-set recall (1/2/3) | extractive Hits@1 (1/2/3) "
            "| Hits@1 mean | retrieval ms p50 (1/2/3) |", "|---|---|---|---|---|---:|---|"]
    for phrases, names, settings in ROWS:
        command = [KGWALK, "eval", "metaqa", "--warehouse", args.warehouse, "--name", args.name,
                   *[a for kv in ["query.rerank=synthetic", *settings] for a in ("--set", kv)],
                   "--split", "dev", "--hops", "1,2,3", "--limit", str(args.limit), "--data", str(DATA), "--json", "--plain"]
        scores = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)
        per = {k: " / ".join(f"{s[k]:.3f}" for s in scores) for k in ("context_recall", "multi_answer_recall", "extractive_hits1")}
        p50 = " / ".join(f"{s['latency_ms']['retrieval']['p50']:.1f}" for s in scores)
        mean = 100 * np.mean([s["extractive_hits1"] for s in scores])
        body.append(f"| {phrases} | {names} | {per['context_recall']} | {per['multi_answer_recall']} | {per['extractive_hits1']} | {mean:.1f} | {p50} |")
        print(body[-1], flush=True)
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; MetaQA **dev**, the eval's {args.limit:,} plain questions per hop count (brackets dropped), "
        f"zero-shot (query.rerank synthetic, no labelled data), one `kgwalk eval` process per row; corpus `{args.name}`; kgwalk git {kgwalk_commit()}",
        "- relation names on: a path's content words also carry the words of its relations' names that its phrases lack "
        "(`starred_actors` read as \"starred\" gains \"actors\"); automatic phrases are made from the names, so little changes there",
        "- walk texts and vectors are the corpus's (phrase map) in every row: the phrases setting changes the prior's path questions only",
    ]
    save_report("relation_names", "Zero-shot ranking: the relations' own names in the synthetic prior (MetaQA dev)", facts, body)


if __name__ == "__main__":
    main()
