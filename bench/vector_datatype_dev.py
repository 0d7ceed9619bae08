"""Walk-vector datatypes (index.vector_datatype: float16, turbo8, turbo4) on the development sets
besides MetaQA (issue 42's rule: a ranking change is measured on KGs of several shapes), zero-shot.

    .venv/bin/python bench/vector_datatype_dev.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh --scratch /tmp/vdt

Each set's finished build (bench/zero_shot_dev.py) is copied per datatype into `--scratch`, without
its index; `kgwalk index --set index.vector_datatype=D` indexes the copy (the same code for every
datatype), and `kgwalk eval questions --plain` scores the set's dev files on it with the default
query settings. MetaQA itself is in bench/results/bytes_per_walk.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import DEV_SETS, HEAVY_LOCK, eval_under_lock
from report import save_report

DATATYPES = ("float16", "turbo8", "turbo4")
GROUPS = ("1hop", "2hop", "3hop", "conj")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--warehouse", type=Path, required=True)
    p.add_argument("--scratch", type=Path, default=Path("/tmp/vdt"))
    args = p.parse_args()
    results: dict[str, dict[str, list[dict]]] = {}
    for name in DEV_SETS:
        results[name] = {}
        for datatype in DATATYPES:
            copy = args.scratch / datatype / name
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(args.warehouse / name, copy, ignore=shutil.ignore_patterns("qdrant", "_logs", "path_prior"))
            subprocess.run(["flock", HEAVY_LOCK, sys.executable, "-m", "kgwalk.cli", "index", "--warehouse", str(copy.parent), "--name", name,
                            "--set", f"index.vector_datatype={datatype}"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            files = [a for g in GROUPS for a in ("--file", str(args.data / name / f"dev-{g}.txt"))]
            results[name][datatype] = eval_under_lock(["questions", "--warehouse", str(copy.parent), "--name", name, *files],
                                                      [f"index.vector_datatype={datatype}"])
            (args.scratch / "results.json").write_text(json.dumps(results, indent=1))
    body = ["Extractive Hits@1 (%) / context recall, dev files, plain questions, default query settings (zero-shot).", "",
            "| set | group | n | " + " | ".join(DATATYPES) + " | turbo4 - float16 |", "|---|---|---:|" + "---:|" * (len(DATATYPES) + 1)]
    for name, rows in results.items():
        for i, group in enumerate(GROUPS):
            cells = [rows[d][i] for d in DATATYPES]
            delta = 100 * (cells[-1]["extractive_hits1"] - cells[0]["extractive_hits1"])
            body.append(f"| {name} | {group} | {cells[0]['questions']} | "
                        + " | ".join(f"{100 * c['extractive_hits1']:.1f} / {c['context_recall']:.3f}" for c in cells) + f" | {delta:+.1f} |")
    facts = [f"- sets: {args.data}; builds: {args.warehouse} (bench/zero_shot_dev.py), re-indexed per datatype in {args.scratch}"]
    save_report("vector_datatype_dev", "Walk-vector datatypes on the development sets (zero-shot)", facts, body)


if __name__ == "__main__":
    main()
