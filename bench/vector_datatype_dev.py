"""Walk-vector datatypes (index.vector_datatype: float16, turbo8, turbo4) on the development sets
besides MetaQA (issue 42's rule: a ranking change is measured on KGs of several shapes), zero-shot.

    .venv/bin/python bench/vector_datatype_dev.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh --scratch /tmp/vdt \
        [--datatypes turbo8] [--baseline-src <checkout>]

Each set's finished build (bench/zero_shot_dev.py) is copied per datatype into `--scratch`, without
its index; `kgwalk index --set index.vector_datatype=D` indexes the copy (the same code for every
datatype), and `kgwalk eval questions --plain` scores the set's dev files on it with the default
query settings. `--baseline-src` adds a first column, `before`: the index made and scored by the
code of that checkout at its defaults, so a change of how vectors are stored is compared with the
code before it in one run. MetaQA itself is in bench/results/bytes_per_walk.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

from common import DEV_SETS, HEAVY_LOCK, eval_under_lock, source_env
from report import save_report

DATATYPES = ("float16", "turbo8", "turbo4")
GROUPS = ("1hop", "2hop", "3hop", "conj")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--warehouse", type=Path, required=True)
    p.add_argument("--scratch", type=Path, default=Path("/tmp/vdt"))
    p.add_argument("--datatypes", default=",".join(DATATYPES), help=f"of {', '.join(DATATYPES)}")
    p.add_argument("--baseline-src", type=Path, help="a checkout whose code makes and scores a `before` column at its defaults")
    p.add_argument("--report", default="vector_datatype_dev")
    args = p.parse_args()
    columns = [(d, [f"index.vector_datatype={d}"], None) for d in args.datatypes.split(",")]
    if args.baseline_src:
        columns.insert(0, ("before", [], args.baseline_src))
    results: dict[str, dict[str, list[dict]]] = {}
    for name in DEV_SETS:
        results[name] = {}
        for column, settings, source in columns:
            copy = args.scratch / column / name
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(args.warehouse / name, copy, ignore=shutil.ignore_patterns("qdrant", "_logs", "path_prior"))
            subprocess.run(["flock", HEAVY_LOCK, sys.executable, "-m", "kgwalk.cli", "index", "--warehouse", str(copy.parent), "--name", name,
                            *[a for kv in settings for a in ("--set", kv)]], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           cwd=source, env=source_env(source) if source else None)
            files = [a for g in GROUPS for a in ("--file", str(args.data / name / f"dev-{g}.txt"))]
            results[name][column] = eval_under_lock(["questions", "--warehouse", str(copy.parent), "--name", name, *files], settings, source)
            (args.scratch / "results.json").write_text(json.dumps(results, indent=1))
    names = [c for c, _, _ in columns]
    body = ["Extractive Hits@1 (%) / context recall, dev files, plain questions, default query settings (zero-shot).", "",
            "| set | group | n | " + " | ".join(names) + f" | {names[-1]} - {names[0]} |", "|---|---|---:|" + "---:|" * (len(names) + 1)]
    for name, rows in results.items():
        for i, group in enumerate(GROUPS):
            cells = [rows[c][i] for c in names]
            delta = 100 * (cells[-1]["extractive_hits1"] - cells[0]["extractive_hits1"])
            body.append(f"| {name} | {group} | {cells[0]['questions']} | "
                        + " | ".join(f"{100 * c['extractive_hits1']:.1f} / {c['context_recall']:.3f}" for c in cells) + f" | {delta:+.1f} |")
    facts = [f"- sets: {args.data}; builds: {args.warehouse} (bench/zero_shot_dev.py), re-indexed per column in {args.scratch}"]
    if args.baseline_src:
        commit = subprocess.run(["git", "-C", str(args.baseline_src), "rev-parse", "--short", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
        facts.append(f"- before: the index made and scored by commit {commit} at its defaults")
    save_report(args.report, "Vector datatypes on the development sets (zero-shot)", facts, body)


if __name__ == "__main__":
    main()
