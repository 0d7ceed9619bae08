"""What the data-quality gates cost, on the 1M-edge synthetic KG, in one run.

Each guarded stage (ingest, walks, verbalize) runs with `quality.gates` off and on, alternately,
`--repeats` times on the same warehouse; the table gives the median stage time both ways, the
median seconds GX spent validating (from the gate reports), and the ratio to the ungated stage.
The difference is within these machines' noise, so the gate's own work is also timed directly:
check columns and summaries over the stage's whole output on one core, plus GX's validation.
The target (issue 7) is a gate under 10% of the stage it guards.

    .venv/bin/python bench/quality.py [--edges 1M] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import save_report  # noqa: E402

from kgwalk.config import load_config  # noqa: E402
from kgwalk.kg.synth import parse_size, write_synth  # noqa: E402
from kgwalk.stages import run_ingest, run_verbalize, run_walks  # noqa: E402

# where the gate's work runs: the walks gate inside the Spark tasks that make the walks (local[2]:
# two at a time), the others in the one driver thread that assembles the stage's output
GATE_THREADS = {"ingest": 1, "walks": 2, "verbalize": 1}
STAGES = {"ingest": (run_ingest, ["ingest", "entities", "relations", "edges"]), "walks": (run_walks, ["walks"]), "verbalize": (run_verbalize, ["texts"])}


def check_seconds(cfg, stage: str) -> float:
    """The gate's own work besides GX over the stage's whole output, in this process, one core:
    check columns and their summaries (ingest: from its tables, as the gate gets them)."""
    from kgwalk.quality.checks import ingest_checks, summarize, text_checks, walk_checks
    from kgwalk.quality import walk_reference
    from kgwalk.storage import read_table

    if stage == "ingest":
        t = {n: read_table(cfg.table(n)) for n in ("entities", "relations", "edges")}
        start = time.perf_counter()
        rows = ingest_checks(t["entities"], t["relations"], t["edges"], t["edges"].num_rows, 0)
        for name, id_column in (("entities", "key"), ("relations", "key"), ("edges", "src")):
            summarize(rows[name], id_column)
        return time.perf_counter() - start
    table = read_table(cfg.table("walks" if stage == "walks" else "texts"))
    start = time.perf_counter()
    if stage == "walks":
        ref = walk_reference(cfg)
        for batch in table.to_batches(max_chunksize=1 << 16):
            summarize(walk_checks(batch, ref), "walk_id")
    else:
        for batch in table.to_batches(max_chunksize=8192):
            summarize(text_checks(batch), "walk_id")
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--edges", default="1M")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--warehouse", default="/tmp/kgwalk-bench/quality")
    ap.add_argument("--stages", default=",".join(STAGES), help="comma-separated, in order (each needs the ones before it built)")
    args = ap.parse_args()
    kg = REPO / "data" / "synth" / f"synth_{args.edges.lower()}.parquet"
    if not kg.exists():
        write_synth(str(kg), parse_size(args.edges), 0)
    base = ["spark.master=local[2]", "ray.num_cpus=2"]
    start = time.perf_counter()
    import great_expectations  # noqa: F401  (once per process: reported apart from the stages)

    import_seconds = time.perf_counter() - start

    rows = []
    for stage in args.stages.split(","):
        run, reports = STAGES[stage]
        seconds: dict[bool, list[float]] = {False: [], True: []}
        validate: list[float] = []
        for _ in range(args.repeats):
            for gates in (False, True):
                cfg = load_config(None, base + [f"quality.gates={str(gates).lower()}"], name="synth", warehouse=args.warehouse, **{"kg.path": str(kg)})
                start = time.perf_counter()
                result = run(cfg)
                seconds[gates].append(time.perf_counter() - start)
                if gates:
                    validate.append(sum(json.loads((cfg.root / "_quality" / f"{r}.json").read_text())["kgwalk"]["seconds"] for r in reports))
        off, on, gx = (statistics.median(x) for x in (seconds[False], seconds[True], validate))
        size = result.edges.num_rows if stage == "ingest" else result.walks if stage == "walks" else result
        work = check_seconds(cfg, stage) + gx
        rows.append((stage, size, off, on, gx, work))
        print(f"{stage}: off {off:.1f} s, on {on:.1f} s, GX {gx:.2f} s, gate work {work:.2f} s", flush=True)

    body = [
        "| stage | rows checked | stage, gates off (s) | stage, gates on (s) | on - off (s) | GX validation (s) | gate work: checks + summaries + GX, one core (s) | runs on | gate cost / stage |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for stage, size, off, on, gx, work in rows:
        threads = GATE_THREADS[stage]
        body.append(
            f"| {stage} | {size:,} | {off:.1f} | {on:.1f} | {on - off:+.1f} | {gx:.2f} | {work:.2f} | {threads} thread{'s' * (threads > 1)} | {work / threads / off:.1%} |"
        )
    save_report(
        "quality",
        "Data-quality gates: cost per guarded stage (synthetic KG)",
        [
            f"- KG: `kgwalk synth --edges {args.edges}` (seed 0); default walk spec; template verbalizer",
            f"- each stage run {args.repeats}x with `quality.gates` off and on, alternately, on the same warehouse; medians",
            "- GX validation: the seconds the gates' reports record (building the check columns is in the stage time)",
            "- gate work: check columns and summaries over the stage's whole output, timed in this process on one core, plus GX; gate cost = work / the threads it runs on (walks: inside the Spark tasks, two at a time) / the ungated stage",
            f"- `import great_expectations`: {import_seconds:.1f} s once per process, before the runs (a one-stage job pays it once)",
            "- Spark local[2] (a session per walks run, as in a build), Ray with 2 CPUs",
        ],
        body,
    )


if __name__ == "__main__":
    main()
