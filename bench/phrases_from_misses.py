"""What a phrase map written from the dev questions' misses gives on the held ones: the loop
docs/evaluation.md describes for a KG whose relation names are not the words its users ask with
(`kgwalk eval questions --misses`, then `verbalize.phrases`, then a build).

    .venv/bin/python bench/phrases_from_misses.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh \\
        --set synth-dbpedia --phrases bench/phrases/synth-dbpedia.yaml --scratch /tmp/phrases

The phrases (bench/phrases/<set>.yaml) were written by hand from the misses of the set's dev files
only; its held files were not looked at. The set is built again with them into --scratch (`kgwalk
build` at its defaults plus verbalize.phrases), and every dev and held file is evaluated on both
builds, each with its own phrases (none: the relations' automatic phrases), zero-shot, plain questions.
--warehouse holds the build without them (bench/zero_shot_dev.py's), only read.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml
from common import build_under_lock, eval_under_lock
from report import save_report

FILES = ("dev-1hop.txt", "dev-2hop.txt", "dev-3hop.txt", "dev-conj.txt", "held-1hop.txt", "held-2hop.txt", "held-3hop.txt", "held-conj.txt")


def scores(warehouse: Path, name: str, files: list[Path], phrases: str | None) -> dict[str, dict]:
    args = ["questions", "--warehouse", str(warehouse), "--name", name, *(a for f in files for a in ("--file", str(f)))]
    return {row["file"]: row for row in eval_under_lock(args, [f"verbalize.phrases={phrases}"] if phrases else [])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the folder bench/dev_sets.py wrote")
    parser.add_argument("--warehouse", required=True, help="the set's build without the phrases (bench/zero_shot_dev.py's), only read")
    parser.add_argument("--set", dest="name", required=True, help="the development set")
    parser.add_argument("--phrases", required=True, type=Path, help="a YAML map: relation -> [forward phrase, inverse phrase]")
    parser.add_argument("--scratch", required=True, type=Path, help="where the build with the phrases goes")
    parser.add_argument("--report", default="phrases_from_misses")
    args = parser.parse_args()
    phrases = json.dumps(yaml.safe_load(args.phrases.read_text()))
    folder = Path(args.data) / args.name
    files = [folder / f for f in FILES]
    seconds = build_under_lock(folder / "kb.txt", args.scratch, args.name, [f"verbalize.phrases={phrases}"])
    before = scores(Path(args.warehouse), args.name, files, None)
    after = scores(args.scratch, args.name, files, phrases)
    lines = ["Zero-shot (the synthetic prior), plain questions; Hits@1 extractive, in %; recall: context recall@3.", "",
             "| file | n | Hits@1 without | with the phrases | change | recall without | with |", "|---|---:|---:|---:|---:|---:|---:|"]
    for f in FILES:
        b, a = before[f], after[f]
        lines.append(f"| {f} | {b['questions']:,} | {100 * b['extractive_hits1']:.1f} | {100 * a['extractive_hits1']:.1f} | "
                     f"{100 * (a['extractive_hits1'] - b['extractive_hits1']):+.1f} | {b['context_recall']:.3f} | {a['context_recall']:.3f} |")
    for split in ("dev", "held"):
        steps = [f"{split}-{h}hop.txt" for h in (1, 2, 3)]
        mean = [sum(s[f]["extractive_hits1"] for f in steps) / len(steps) * 100 for s in (before, after)]
        lines.append(f"| **{split}, mean of the step counts** | | {mean[0]:.1f} | {mean[1]:.1f} | {mean[1] - mean[0]:+.1f} | | |")
    relations = sorted(json.loads(phrases))
    save_report(args.report, f"A phrase map written from the dev misses: {args.name}", [
        f"- set: {folder} (bench/dev_sets.py); without phrases: {args.warehouse}; with them: {args.scratch} (built in {seconds:.0f} s)",
        f"- phrases: {args.phrases} ({len(relations)} relations: {', '.join(relations)}), written from the dev files' "
        "`kgwalk eval questions --misses` only"], lines)


if __name__ == "__main__":
    main()
