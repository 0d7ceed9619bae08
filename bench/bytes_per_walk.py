"""Benchmark: where a warehouse's bytes go, per table and per index file, per walk, before and
after a change of how vectors are kept (issue 45); with `--quality`, MetaQA dev retrieval of
each row, zero-shot and with the path prior.

    .venv/bin/python bench/bytes_per_walk.py --kg metaqa --quality
    .venv/bin/python bench/bytes_per_walk.py --kg synth:1M --report bytes_per_walk_synth1m

Each row is a fresh `kgwalk build` of the same KG in `--warehouse`, with the row's settings:
- `before`: the code of `--baseline-src` (a checkout of the commit before the change measured) at
  its defaults;
- `float16`: today's code with float16 walk vectors (no vectors table, roots in a root map);
- `default`: today's defaults (walk vectors as TurboQuant 8-bit codes);
- `turbo4`: today's defaults with 4-bit codes.
Rows are built one after another under the heavy-work lock, so their times compare; the
stage times are those `kgwalk build` prints. `--quality` (MetaQA only) runs
`kgwalk eval metaqa --split dev --limit 1000 --plain` on each row with the defaults (zero-shot:
the synthetic prior) and with `query.rerank=paths` after `kgwalk fit-paths` on the three dev files
(the prior in-sample, as bench/embed_quality.py scores it: only the rows' difference matters).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

from common import DATA, HEAVY_LOCK, KGWALK, source_env
from report import save_report

from kgwalk.eval.metaqa import question_file

ROWS = {  # the settings of each row; `before` runs the code of --baseline-src, with its defaults
    "before": [],
    "float16": ["index.vector_datatype=float16"],
    "default": [],
    "turbo4": ["index.vector_datatype=turbo4"],
}
# index files by what they hold (qdrant-edge's segment layout): the first pattern a path matches names it
INDEX_PARTS = [
    ("walk vectors", r"_walks/.*/vector_storage/"),
    ("walk payloads (root)", r"_walks/.*/payload_storage/"),
    ("walk root index", r"_walks/.*/payload_index/"),
    ("walk id tracker", r"_walks/.*/id_tracker"),
    ("walk other", r"_walks/"),
    ("node collection", r"_nodes/"),
    ("node sums", r"\.sums"),
    ("index other", r""),
]


def allocated(path: Path) -> int:
    return path.stat().st_blocks * 512


def folder_parts(kg: Path) -> dict[str, int]:
    """Bytes on disk per table, and per kind of index file."""
    parts: dict[str, int] = {}
    for table in sorted(p for p in kg.iterdir() if p.is_dir() and p.name not in ("qdrant", "path_prior")):  # a prior is fitted after the build
        parts[f"table {table.name}"] = sum(allocated(f) for f in table.rglob("*") if f.is_file())
    generation = json.loads((kg / "qdrant" / "CURRENT").read_text())["generation"]
    for f in (kg / "qdrant" / generation).rglob("*"):
        if f.is_file():
            name = next(label for label, pattern in INDEX_PARTS if re.search(pattern, str(f.relative_to(kg / "qdrant"))))
            parts[name] = parts.get(name, 0) + allocated(f)
    return parts


def build(kg_file: str, warehouse: Path, name: str, settings: list[str], env: dict[str, str] | None) -> dict[str, float]:
    """Build the row; its build line's times (seconds per stage and in all). A row built by an
    earlier run of this script in this warehouse is kept, with the times it took then."""
    done = warehouse / f"{name}.times.json"
    if done.exists() and (warehouse / name).exists():
        return json.loads(done.read_text())
    shutil.rmtree(warehouse / name, ignore_errors=True)
    sets = [a for s in settings for a in ("--set", s)]
    out = subprocess.run(["flock", HEAVY_LOCK, KGWALK, "build", "--kg", kg_file, "--name", name, "--warehouse", str(warehouse), *sets],
                         check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env).stderr
    line = next(x for x in re.split(r"[\r\n]", out) if x.startswith("[kgwalk] build:"))  # kgwalk's lines go to stderr
    times = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+) s", line.split(" in ", 1)[1])}
    times["build"] = float(re.search(r" in ([\d.]+) s", line).group(1))
    times["walks_count"] = float(re.search(r"build: ([\d,]+) walks", line).group(1).replace(",", ""))
    done.write_text(json.dumps(times))
    return times


def quality(warehouse: Path, name: str, settings: list[str], env: dict[str, str] | None) -> dict[str, dict]:
    """Hits@1 and context recall per hop count, zero-shot and with the fitted path prior."""
    where = ["--warehouse", str(warehouse), "--name", name, *[a for s in settings for a in ("--set", s)]]
    subprocess.run([KGWALK, "fit-paths", *where, *[a for h in (1, 2, 3) for a in ("--questions", str(question_file(DATA, h, "dev")))]],
                   check=True, stdout=subprocess.DEVNULL, env=env)
    scores = {}
    for label, rerank in (("zero-shot", ["--set", "query.rerank=synthetic"]), ("prior", ["--set", "query.rerank=paths"])):  # auto: the fitted prior, once there is one
        out = subprocess.run(["flock", HEAVY_LOCK, KGWALK, "eval", "metaqa", *where, *rerank, "--data", str(DATA), "--split", "dev", "--hops", "1,2,3",
                              "--limit", "1000", "--plain", "--json"], check=True, stdout=subprocess.PIPE, text=True, env=env).stdout
        scores[label] = json.loads(out)
    return scores


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kg", default="metaqa", help="metaqa, or synth:<edges> (a `kgwalk synth` KG, made once in the warehouse)")
    p.add_argument("--warehouse", default="/tmp/kgwalk-bytes")
    p.add_argument("--rows", default=",".join(ROWS), help=f"of {', '.join(ROWS)}")
    p.add_argument("--quality", action="store_true", help="MetaQA dev retrieval per row (MetaQA only)")
    p.add_argument("--baseline-src", type=Path, help="a checkout of the code the `before` row runs (required for it)")
    p.add_argument("--report", default="bytes_per_walk")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    warehouse.mkdir(parents=True, exist_ok=True)
    if args.kg == "metaqa":
        kg_file = str(DATA / "kb.txt")
    else:
        edges = args.kg.removeprefix("synth:")
        kg_file = str(warehouse / f"synth-{edges}.parquet")
        if not Path(kg_file).exists():
            subprocess.run([KGWALK, "synth", "--edges", edges, "--out", kg_file], check=True)
    results = {}
    for row in args.rows.split(","):
        if row == "before" and not args.baseline_src:
            p.error("the `before` row runs the code of --baseline-src")
        env = source_env(args.baseline_src) if row == "before" else None
        times = build(kg_file, warehouse, row, ROWS[row], env)
        results[row] = {"times": times, "parts": folder_parts(warehouse / row)}
        if args.quality:
            results[row]["quality"] = quality(warehouse, row, ROWS[row], env)
        (warehouse / "results.json").write_text(json.dumps(results, indent=1))
    rows = list(results)
    walks = {r: results[r]["times"]["walks_count"] for r in rows}
    names = sorted({n for r in rows for n in results[r]["parts"]}, key=lambda n: -results[rows[0]]["parts"].get(n, 0))
    body = ["## Bytes on disk per walk", "", "| | " + " | ".join(rows) + " |", "|---|" + "---:|" * len(rows)]
    for n in names:
        body.append(f"| {n} | " + " | ".join(f"{results[r]['parts'].get(n, 0) / walks[r]:,.0f}" for r in rows) + " |")
    totals = {r: sum(results[r]["parts"].values()) for r in rows}
    body.append("| **all** | " + " | ".join(f"**{totals[r] / walks[r]:,.0f}**" for r in rows) + " |")
    body.append("| all, GB | " + " | ".join(f"{totals[r] / 1e9:.2f}" for r in rows) + " |")
    body.append("| ratio to " + rows[0] + " | " + " | ".join(f"{totals[r] / totals[rows[0]]:.2f}" for r in rows) + " |")
    body += ["", "## Build time, seconds", "", "| stage | " + " | ".join(rows) + " |", "|---|" + "---:|" * len(rows)]
    for stage in ("ingest", "walks", "verbalize", "embed", "index", "build"):
        body.append(f"| {stage} | " + " | ".join(f"{results[r]['times'].get(stage, 0):.1f}" for r in rows) + " |")
    if args.quality:
        body += ["", "## MetaQA dev, plain questions (1,000 per hop count): extractive Hits@1 / context recall / retrieval p50 ms", "",
                 "| prior | hops | " + " | ".join(rows) + " |", "|---|---|" + "---:|" * len(rows)]
        for label in ("zero-shot", "prior"):
            for i, hops in enumerate(("1", "2", "3")):
                cells = []
                for r in rows:
                    s = results[r]["quality"][label][i]
                    cells.append(f"{100 * s['extractive_hits1']:.1f} / {s['context_recall']:.3f} / {s['latency_ms']['retrieval']['p50']:.1f}")
                body.append(f"| {label} | {hops} | " + " | ".join(cells) + " |")
    baseline = subprocess.run(["git", "-C", str(args.baseline_src), "rev-parse", "--short", "HEAD"], check=True, stdout=subprocess.PIPE,
                              text=True).stdout.strip() if args.baseline_src else ""
    facts = [f"- measured {time.strftime('%Y-%m-%d')}; KG {args.kg} ({int(walks[rows[0]]):,} walks); rows: "
             + "; ".join(f"{r}: {'commit ' + baseline + ' at its defaults' if r == 'before' else ' '.join(ROWS[r]) or 'the defaults'}" for r in rows),
             "- bytes: allocated blocks of every file of the KG's tables and of the live index generation"]
    save_report(args.report, f"Bytes per walk and build time by how vectors are kept ({args.kg})", facts, body)


if __name__ == "__main__":
    main()
