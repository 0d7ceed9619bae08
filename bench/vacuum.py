"""What `kgwalk vacuum` frees on a refreshed warehouse, and what it costs.

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/vacuum.py --warehouse /tmp/kgwalk-bench/succ-new --name synth \\
        --note "the 1M-edge KG after N 0.1% refreshes since its last vacuum"      # bench/results/vacuum.md

Per Delta table: bytes on disk before, the files and bytes a dry run lists (`--keep-hours 0`),
bytes on disk after the vacuum; and the vacuum's seconds. The index folder is not a Delta table
and is left as it is (the edge backend drops old generations itself).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from report import git_head, save_report  # noqa: E402

from kgwalk.config import load_config  # noqa: E402
from kgwalk.refresh.vacuum import vacuum  # noqa: E402


def table_bytes(root: Path) -> dict[str, int]:
    return {d.name: sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) for d in sorted(root.iterdir()) if (d / "_delta_log").is_dir()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--note", default="", help="what the warehouse is (how many refreshes since its last vacuum)")
    args = ap.parse_args()
    cfg = load_config(None, [], name=args.name, warehouse=args.warehouse)
    before = table_bytes(cfg.root)
    listed = vacuum(cfg, keep_hours=0, dry_run=True)
    start = time.perf_counter()
    done = vacuum(cfg, keep_hours=0)
    seconds = time.perf_counter() - start
    after = table_bytes(cfg.root)
    mib = lambda n: f"{n / 2**20:,.1f}"  # noqa: E731
    facts = [f"- corpus `{args.name}` under {args.warehouse}: {args.note}", f"- kgwalk {git_head(str(REPO))}; `kgwalk vacuum --keep-hours 0`: {done.summary()} in {seconds:.1f} s"]
    body = ["| table | MiB before | files listed (dry run) | MiB listed | MiB after |", "|---|---:|---:|---:|---:|"]
    body += [f"| {t} | {mib(before[t])} | {listed.files.get(t, 0):,} | {mib(listed.bytes.get(t, 0))} | {mib(after.get(t, 0))} |" for t in before]
    body.append(f"| all | {mib(sum(before.values()))} | {sum(listed.files.values()):,} | {mib(sum(listed.bytes.values()))} | {mib(sum(after.values()))} |")
    save_report("vacuum", "What kgwalk vacuum frees on a refreshed warehouse", facts, body)


if __name__ == "__main__":
    main()
