"""Benchmark: `make demo`'s build (`kgwalk build`, the bundled MetaQA sample) per embedder, in one run.

    .venv/bin/python bench/build_demo.py [--models static,all-MiniLM-L6-v2] [--warehouse /tmp/kgwalk-demo-bench]

Each row is a fresh build into its own warehouse by the CLI as a user runs it (process start to
exit, Spark and Ray start-up included), with the stage times the build prints.
Writes bench/results/build_demo.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from report import save_report

BUILD = re.compile(r"^\[kgwalk\] build: .* in ([\d.]+) s \((.*)\);")
WALKS = re.compile(r"^\[kgwalk\] walks: ([\d,]+) walks")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="static,all-MiniLM-L6-v2", help="comma-separated embed.model values, one row each")
    p.add_argument("--warehouse", default="/tmp/kgwalk-demo-bench")
    args = p.parse_args()
    kgwalk = str(Path(sys.executable).parent / "kgwalk")
    body = ["| embed.model | end to end (s) | build (s) | stages (s) |", "|---|---:|---:|---|"]
    for model in args.models.split(","):
        warehouse = Path(args.warehouse) / model
        shutil.rmtree(warehouse, ignore_errors=True)
        start = time.perf_counter()
        out = subprocess.run([kgwalk, "build", "--warehouse", str(warehouse), "--set", f"embed.model={model}"],
                             capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
        lines = (out.stdout + out.stderr).splitlines()
        build = next(m for m in map(BUILD.match, lines) if m)
        walks = next(m for m in map(WALKS.match, lines) if m).group(1)
        body.append(f"| {model} | {seconds:.1f} | {float(build.group(1)):.1f} | {build.group(2)} |")
        print(body[-1], flush=True)
    facts = [f"- measured {time.strftime('%Y-%m-%d')}; `kgwalk build` of data/sample/metaqa_sample.txt (2,705 triples, {walks} walks), "
             "the default config but embed.model, each row a fresh warehouse",
             f"- load average at the end: {os.getloadavg()[0]:.1f} on 2 cores (above 2, other jobs shared the machine and the times are upper bounds)"]
    save_report("build_demo", "`make demo`'s build per embedder", facts, body)


if __name__ == "__main__":
    main()
