"""Benchmark: `kgwalk query` from the shell, end to end (process start to exit), by question encoder.

    .venv/bin/python bench/query_cli.py [--warehouse /tmp/kgwalk-q] [--runs 5]
        [--row "MiniLM, ONNX encoder=metaqa_float32:"] [--row "static=metaqa_static:embed.model=static"]
        [--baseline-src /tmp/kgwalk-snap-a]

Each row is `label=KG name:settings` (settings comma-separated `key=value`); the defaults are the
two KGs bench/embed_quality.py builds with `--precisions float32 --models static` (the same
132K-walk MetaQA sub-corpus, MiniLM and static vectors, each with its own path prior). Per row:
one untimed run (file cache, ONNX export), then `--runs` timed runs of the CLI as a user types it;
the median, and which heavy modules the process imported (`python -X importtime`).
`--baseline-src` (a checkout of older kgwalk, e.g. `git worktree add --detach /tmp/kgwalk-snap-a
<ref>`) runs every row with that source too, beside this checkout's, runs interleaved.
Writes bench/results/query_cli.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from pathlib import Path

from report import save_report

REPO = Path(__file__).resolve().parent.parent

QUESTIONS = ["what movies did [Emir Kusturica] direct", "who is the director of the movie that [Kismet] shares its writer with"]
HEAVY = ("torch", "transformers", "sentence_transformers", "onnxruntime", "model2vec")


def cli(source: Path, warehouse: str, name: str, settings: list[str], question: str, importtime: bool = False) -> subprocess.CompletedProcess:
    """`kgwalk query` with the kgwalk package of `source` (run from there: `-m` puts the working
    folder first on the path)."""
    sets = [a for kv in settings for a in ("--set", kv)]
    python = [sys.executable, "-X", "importtime"] if importtime else [sys.executable]
    return subprocess.run([*python, "-m", "kgwalk.cli", "query", "--warehouse", warehouse, "--name", name, *sets, question],
                          check=True, capture_output=True, text=True, cwd=source, env=source_env(source))


def source_env(source: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(source))


def imported_from(source: Path) -> str:
    done = subprocess.run([sys.executable, "-c", "import kgwalk; print(kgwalk.__file__)"], check=True, capture_output=True,
                          text=True, cwd=source, env=source_env(source))
    return done.stdout.strip()


def git_head(source: Path) -> str:
    done = subprocess.run(["git", "-C", str(source), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--row", action="append", help="label=KG name:key=value,key=value")
    p.add_argument("--baseline-src", help="a checkout of older kgwalk to run each row with as well (the baseline)")
    args = p.parse_args()
    rows = args.row or ["MiniLM (ONNX question encoder, the default)=metaqa_float32:", "static=metaqa_static:embed.model=static"]
    sources = {"candidate": REPO} | ({"baseline": Path(args.baseline_src).resolve()} if args.baseline_src else {})
    for side, source in sources.items():
        if not imported_from(source).startswith(str(source)):
            sys.exit(f"{side}: kgwalk is not imported from {source}")
    body = ["| question encoder | KG | side | median s (end to end) | min s | max s | heavy modules imported |", "|---|---|---|---:|---:|---:|---|"]
    for row in rows:
        label, _, rest = row.partition("=")
        name, _, settings_text = rest.partition(":")
        settings = [s for s in settings_text.split(",") if s]
        imported, seconds = {}, {side: [] for side in sources}
        for side, source in sources.items():
            trace = cli(source, args.warehouse, name, settings, QUESTIONS[0], importtime=True)  # untimed: warms caches
            imported[side] = {line.rsplit("|", 1)[-1].strip() for line in trace.stderr.splitlines() if line.startswith("import time:")}
        for run in range(args.runs):
            for side, source in sources.items():  # interleaved: a busy moment costs both sides alike
                start = time.perf_counter()
                cli(source, args.warehouse, name, settings, QUESTIONS[run % len(QUESTIONS)])
                seconds[side].append(time.perf_counter() - start)
        for side in sorted(sources):
            print(label, side, seconds[side], flush=True)
            runs = seconds[side]
            body.append(f"| {label} | {name} | {side} | {statistics.median(runs):.2f} | {min(runs):.2f} | {max(runs):.2f} "
                        f"| {', '.join(m for m in HEAVY + ('pandas',) if m in imported[side]) or 'none'} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; `kgwalk query` (python -m kgwalk.cli) as a subprocess, {args.runs} runs a row "
        f"after one untimed run, questions alternating: {'; '.join(QUESTIONS)}",
        f"- KGs under {args.warehouse} (edge index); each run loads the model, the label lexicon and the prior, as a CLI query does",
        *([f"- baseline: kgwalk from {args.baseline_src} (git {git_head(Path(args.baseline_src))}); candidate: this checkout (git {git_head(REPO)})"]
          if args.baseline_src else []),
    ]
    save_report("query_cli", "`kgwalk query` from the shell, end to end, by question encoder", facts, body)


if __name__ == "__main__":
    main()
