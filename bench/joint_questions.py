"""Questions that name several entities (issue 42): the joint term (query.joint_weight, query.joint_hops)
off and at its default, side by side in one run, on each development set's two-topic questions
("which films did [A] direct that [B] starred in", "which movies directed by [A] feature [B]", ...).

    .venv/bin/python bench/dev_sets.py --out /tmp/devsets/data        # the sets
    .venv/bin/python bench/zero_shot_dev.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh   # their builds
    .venv/bin/python bench/joint_questions.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh

Plain questions (brackets dropped), zero-shot defaults otherwise. The weight was chosen on generated
MetaQA two-topic questions of another seed; the held files were never looked at to choose it.
Writes bench/results/joint_questions.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import DEV_SETS, eval_under_lock
from report import save_report

ROWS = {"off": ["query.joint_weight=0"], "default": []}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the folder bench/dev_sets.py wrote")
    parser.add_argument("--warehouse", required=True, help="where bench/zero_shot_dev.py built the sets")
    parser.add_argument("--sets", default=",".join(DEV_SETS))
    args = parser.parse_args()
    body = ["| set | split | questions | joint term | topic recall | context recall@3 | answer-set recall | extractive Hits@1 | p50 ms |",
            "|---|---|---:|---|---:|---:|---:|---:|---:|"]
    gains = []
    for name in args.sets.split(","):
        files = [str(Path(args.data) / name / f"{split}-conj.txt") for split in ("dev", "held")]
        eval_args = ["questions", "--warehouse", args.warehouse, "--name", name, *(a for f in files for a in ("--file", f))]
        results = {row: eval_under_lock(eval_args, settings) for row, settings in ROWS.items()}
        for i, split in enumerate(("dev", "held")):
            for row, rows in results.items():
                s = rows[i]
                body.append(f"| {name} | {split} | {s['questions']:,} | {row} | {s['topic_recall']:.3f} | {s['context_recall']:.3f} | "
                            f"{s['answer_recall']:.3f} | {100 * s['extractive_hits1']:.1f} | {s['latency_ms']['retrieval']['p50']:.1f} |")
            gains.append(100 * (results["default"][i]["extractive_hits1"] - results["off"][i]["extractive_hits1"]))
    save_report("joint_questions", "Questions that name several entities: the joint term off and on",
                ["- plain questions; `kgwalk eval questions` per set's dev-conj.txt and held-conj.txt; defaults otherwise "
                 "(query.joint_weight 4, query.joint_hops 2)",
                 f"- Hits@1 gained by the joint term: {', '.join(f'{g:+.1f}' for g in gains)} points (dev, held per set in order)"], body)


if __name__ == "__main__":
    main()
