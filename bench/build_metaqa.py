"""Benchmark: `kgwalk build` of the MetaQA KB with the default config, as a user runs it.

    .venv/bin/python bench/build_metaqa.py [--kb ../shared/data/metaqa/kb.txt] [--warehouse /tmp/wh] --report build_metaqa_default
    .venv/bin/python bench/build_metaqa.py --set embed.model=all-MiniLM-L6-v2 --report build_metaqa   # ~50 min on 2 cores
    .venv/bin/python bench/build_metaqa.py --log build.log    # tabulate a run made by hand

Runs the CLI under /usr/bin/time -v, reads the per-stage lines it prints, and writes
bench/results/build_metaqa.md with the machine and versions.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from report import save_report

from kgwalk.stages import folder_bytes

HERE = Path(__file__).resolve().parent
STAGE = re.compile(r"^\[kgwalk\] (\w+): (.*) in ([\d.]+) s$")


def run_build(kb: str, warehouse: str, settings: list[str], log: Path) -> None:
    sets = [a for kv in settings for a in ("--set", kv)]
    cmd = [str(Path(sys.executable).parent / "kgwalk"), "build", "--kg", kb, "--name", "metaqa", "--warehouse", warehouse, *sets]
    if shutil.which("/usr/bin/time"):
        cmd = ["/usr/bin/time", "-v", *cmd]
    with open(log, "w") as out:
        subprocess.run(cmd, stderr=out, stdout=out, check=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--kb", default=str(HERE.parent.parent / "shared" / "data" / "metaqa" / "kb.txt"))
    p.add_argument("--warehouse", default="/tmp/kgwalk-bench")
    p.add_argument("--log", help="tabulate this existing build log instead of running a build")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for the build (as `kgwalk build --set`)")
    p.add_argument("--report", default="build_metaqa", help="bench/results/<report>.md")
    args = p.parse_args()
    log = Path(args.log) if args.log else Path(args.warehouse) / "build.log"
    if not args.log:
        log.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(Path(args.warehouse) / "metaqa", ignore_errors=True)  # a full build, not a rerun
        run_build(args.kb, args.warehouse, args.set, log)
    text = log.read_text()
    rows = [m.groups() for m in map(STAGE.match, text.splitlines()) if m]
    if not rows:
        sys.exit(f"no stage lines in {log}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    root = Path(args.warehouse) / "metaqa"
    sizes = {name: folder_bytes(root / name) for name in ("walks", "texts", "vectors", "qdrant")}
    total = sum(float(s) for _, _, s in rows)
    body = [
        "| stage | seconds | share | result |",
        "|---|---:|---:|---|",
        *[f"| {stage} | {float(s):,.1f} | {float(s) / total:.0%} | {what} |" for stage, what, s in rows],
        f"| **total** | **{total:,.1f}** | | |",
        "",
        "| on disk | MiB |",
        "|---|---:|",
        *[f"| {name} | {b / 2**20:,.1f} |" for name, b in sizes.items()],
    ]
    if rss:
        body += ["", f"Peak RSS of the driver process and its children (the Spark JVM; not Ray's workers): {int(rss.group(1)) / 2**20:.1f} GiB"]
    measured = time.strftime("%Y-%m-%d", time.gmtime(log.stat().st_mtime))
    config = f"`kgwalk build --kg kb.txt {' '.join('--set ' + kv for kv in args.set)}`" if args.set else "the default config (`kgwalk build --kg kb.txt`)"
    save_report(args.report, f"MetaQA build with {config}", [f"- measured {measured}; KB: {args.kb}"], body)

if __name__ == "__main__":
    main()
