"""Benchmark: `kgwalk query` from the shell, end to end (process start to exit), by question encoder.

    .venv/bin/python bench/query_cli.py [--warehouse /tmp/kgwalk-q] [--runs 5]
        [--row "MiniLM, ONNX encoder=metaqa_float32:embed.model=all-MiniLM-L6-v2"] [--row "static alone=metaqa_static:query.prior_encoder=embed"]
        [--baseline-src /tmp/kgwalk-snap-a]

Each row is `label=KG name:settings` (settings comma-separated `key=value`); the defaults are the
three KGs bench/embed_quality.py builds with `--precisions float32 --models
static,static+query.prior_encoder=all-MiniLM-L6-v2` (the same 132K-walk MetaQA sub-corpus: MiniLM
vectors, static vectors, static vectors with a MiniLM prior encoder; each with its own path prior). Per row:
one untimed run (file cache, ONNX export, the table cache), one timed run with an empty table
cache (kgwalk/query/table_cache.py: the first query after a table changed; models and question
vectors stay cached), then `--runs` timed runs of the CLI as a user types it: the median, where it
goes (the CLI's own per-phase ms; the rest is starting, imports and exit), and which heavy modules
the process imported (`python -X importtime`).
`--baseline-src` (a checkout of older kgwalk, e.g. `git worktree add --detach /tmp/kgwalk-snap-a
<ref>`) runs every row with that source too, beside this checkout's, runs interleaved.
Writes bench/results/query_cli.md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from pathlib import Path

from common import REPO, kgwalk_query, phase_ms, source_env
from report import git_head, save_report

from kgwalk.storage import user_cache


QUESTIONS = ["what movies did [Emir Kusturica] direct", "who is the director of the movie that [Kismet] shares its writer with"]
HEAVY = ("torch", "transformers", "sentence_transformers", "onnxruntime", "model2vec", "huggingface_hub")
PHASES = ("lexicon", "embed", "node_search", "walk_search", "rerank")  # the CLI's `ms:` line, in its order


def without_table_cache() -> Path:
    """An XDG cache folder holding the user's kgwalk caches (models, question vectors) but no table cache."""
    real = user_cache("tables").parent
    xdg = Path(tempfile.mkdtemp(prefix="kgwalk-cold-"))
    (xdg / "kgwalk").mkdir()
    for kind in real.iterdir():
        if kind.name != "tables":
            (xdg / "kgwalk" / kind.name).symlink_to(kind)
    return xdg


def imported_from(source: Path) -> str:
    done = subprocess.run([sys.executable, "-c", "import kgwalk; print(kgwalk.__file__)"], check=True, capture_output=True,
                          text=True, cwd=source, env=source_env(source))
    return done.stdout.strip()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-q")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--row", action="append", help="label=KG name:key=value,key=value")
    p.add_argument("--baseline-src", help="a checkout of older kgwalk to run each row with as well (the baseline)")
    args = p.parse_args()
    rows = args.row or ["all-MiniLM-L6-v2 (ONNX question encoder)=metaqa_float32:embed.model=all-MiniLM-L6-v2",
                        "static walks, MiniLM prior encoder (the default)=metaqa_static_query_prior_encoder_all_MiniLM_L6_v2:",
                        "static alone=metaqa_static:query.prior_encoder=embed"]
    sources = {"candidate": REPO} | ({"baseline": Path(args.baseline_src).resolve()} if args.baseline_src else {})
    for side, source in sources.items():
        if not imported_from(source).startswith(str(source)):
            sys.exit(f"{side}: kgwalk is not imported from {source}")
    body = ["| question encoder | KG | side | median s (end to end) | min s | max s | first query after a table change s "
            "| median ms: " + " / ".join(PHASES) + " / rest | heavy modules imported |", "|---|---|---|---:|---:|---:|---:|---|---|"]
    for row in rows:
        label, _, rest = row.partition("=")
        name, _, settings_text = rest.partition(":")
        settings = [s for s in settings_text.split(",") if s]
        imported, cold, seconds, phases = {}, {}, {side: [] for side in sources}, {side: [] for side in sources}
        for side, source in sources.items():
            trace = kgwalk_query(source, args.warehouse, name, settings, QUESTIONS[0], importtime=True)  # untimed: warms caches
            imported[side] = {line.rsplit("|", 1)[-1].strip() for line in trace.stderr.splitlines() if line.startswith("import time:")}
        for side, source in sources.items():
            cache = without_table_cache()
            start = time.perf_counter()
            kgwalk_query(source, args.warehouse, name, settings, QUESTIONS[1], cache=cache)
            cold[side] = time.perf_counter() - start
            shutil.rmtree(cache)
        for run in range(args.runs):
            for side, source in sources.items():  # interleaved: a busy moment costs both sides alike
                start = time.perf_counter()
                done = kgwalk_query(source, args.warehouse, name, settings, QUESTIONS[run % len(QUESTIONS)])
                seconds[side].append(time.perf_counter() - start)
                phases[side].append(phase_ms(done.stdout))
        for side in sorted(sources):
            print(label, side, seconds[side], flush=True)
            runs = seconds[side]
            by_phase = [statistics.median(p.get(phase, 0.0) for p in phases[side]) for phase in PHASES]
            rest = statistics.median(1000 * s - sum(p.values()) for s, p in zip(runs, phases[side]))
            body.append(f"| {label} | {name} | {side} | {statistics.median(runs):.2f} | {min(runs):.2f} | {max(runs):.2f} | {cold[side]:.2f} "
                        f"| {' / '.join(f'{ms:.0f}' for ms in [*by_phase, rest])} "
                        f"| {', '.join(m for m in HEAVY + ('pandas',) if m in imported[side]) or 'none'} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; `kgwalk query` (python -m kgwalk.cli) as a subprocess, {args.runs} runs a row "
        f"after one untimed run, questions alternating: {'; '.join(QUESTIONS)}",
        f"- KGs under {args.warehouse} (edge index); each run loads the model, the label lexicon and the prior, as a CLI query does "
        "(the lexicon and the prior's relation paths from the table cache where the side has one; the first query after a table "
        "change builds them: its own column)",
        "- median ms by phase: the CLI's own `ms:` line (model, lexicon, prior and index shards load inside the phase that first "
        "needs them: the model in embed, the walks shard in walk_search, the prior in rerank); rest = end to end minus the phases "
        "(interpreter start, imports, config, closing, printing)",
        *([f"- baseline: kgwalk from {args.baseline_src} (git {git_head(Path(args.baseline_src))}); candidate: this checkout (git {git_head(REPO)})"]
          if args.baseline_src else []),
    ]
    save_report("query_cli", "`kgwalk query` from the shell, end to end, by question encoder", facts, body)


if __name__ == "__main__":
    main()
