"""Benchmark: `kgwalk query` from the shell, end to end (process start to exit), by question encoder.

    .venv/bin/python bench/query_cli.py [--warehouse /tmp/kgwalk-q] [--runs 5]
        [--row "MiniLM, ONNX encoder=metaqa_float32:"] [--row "static=metaqa_static:embed.model=static"]

Each row is `label=KG name:settings` (settings comma-separated `key=value`); the defaults are the
two KGs bench/embed_quality.py builds with `--precisions float32 --models static` (the same
132K-walk MetaQA sub-corpus, MiniLM and static vectors, each with its own path prior). Per row:
one untimed run (file cache, ONNX export), then `--runs` timed runs of the CLI as a user types it;
the median, and which heavy modules the process imported (`python -X importtime`).
Writes bench/results/query_cli.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from report import save_report

QUESTIONS = ["what movies did [Emir Kusturica] direct", "who is the director of the movie that [Kismet] shares its writer with"]
HEAVY = ("torch", "transformers", "sentence_transformers", "onnxruntime", "model2vec")


def cli(warehouse: str, name: str, settings: list[str], question: str, importtime: bool = False) -> subprocess.CompletedProcess:
    sets = [a for kv in settings for a in ("--set", kv)]
    python = [sys.executable, "-X", "importtime"] if importtime else [sys.executable]
    return subprocess.run([*python, "-m", "kgwalk.cli", "query", "--warehouse", warehouse, "--name", name, *sets, question],
                          check=True, capture_output=True, text=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--row", action="append", help="label=KG name:key=value,key=value")
    args = p.parse_args()
    rows = args.row or ["MiniLM (ONNX question encoder, the default)=metaqa_float32:", "static=metaqa_static:embed.model=static"]
    body = ["| question encoder | KG | median s (end to end) | min s | max s | heavy modules imported |", "|---|---|---:|---:|---:|---|"]
    for row in rows:
        label, _, rest = row.partition("=")
        name, _, settings_text = rest.partition(":")
        settings = [s for s in settings_text.split(",") if s]
        trace = cli(args.warehouse, name, settings, QUESTIONS[0], importtime=True)  # untimed: warms caches
        imported = {line.rsplit("|", 1)[-1].strip() for line in trace.stderr.splitlines() if line.startswith("import time:")}
        seconds = []
        for run in range(args.runs):
            start = time.perf_counter()
            cli(args.warehouse, name, settings, QUESTIONS[run % len(QUESTIONS)])
            seconds.append(time.perf_counter() - start)
        print(label, seconds, flush=True)
        body.append(f"| {label} | {name} | {statistics.median(seconds):.2f} | {min(seconds):.2f} | {max(seconds):.2f} "
                    f"| {', '.join(m for m in HEAVY if m in imported) or 'none'} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; `kgwalk query` (python -m kgwalk.cli) as a subprocess, {args.runs} runs a row "
        f"after one untimed run, questions alternating: {'; '.join(QUESTIONS)}",
        f"- KGs under {args.warehouse}: the MetaQA sub-corpus of bench/embed_quality.py (hybrid node search, path prior fitted "
        "with the row's encoder), edge index; each run loads the model, the label lexicon and the prior, as a CLI query does",
    ]
    save_report("query_cli", "`kgwalk query` from the shell, end to end, by question encoder", facts, body)


if __name__ == "__main__":
    main()
