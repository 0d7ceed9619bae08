"""Zero-shot retrieval on the development sets besides MetaQA (issue 42), beside MetaQA dev: each
set's corpus built with `kgwalk build` at its defaults, then `kgwalk eval questions --plain` on its
dev and held files (one row per set, split and step count, and the two-topic questions), all with
the default query settings (no fitted prior: query.rerank=auto is the synthetic prior).

    .venv/bin/python bench/dev_sets.py --out /tmp/devsets/data
    .venv/bin/python bench/zero_shot_dev.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh \
        [--metaqa-warehouse /tmp/mq] [--sets synth,metaqa-dotted] [--set KEY=VALUE ...]

Builds run one at a time under `flock /tmp/kgwalk-heavy.lock nice -n 5` and are skipped where the
warehouse holds a finished build of the set's kb.txt (<warehouse>/<set>.built). MetaQA itself is not
built here: `--metaqa-warehouse` names a finished build of MetaQA's whole KB (KG name `metaqa`),
which is only read: `kgwalk eval metaqa --split dev --limit 1000 --plain` on it, and the
metaqa-dotted questions (their labels are MetaQA's) asked of it, which tells a renamed relation's
cost from a rewritten question's. `--set` settings go to every eval (not to builds), for comparing
a ranking change on all sets: the report is then named zero_shot_dev_sets_<tag>.md (--tag). With
`--baseline TAG`, the report sets each row beside the same row of the run saved under that tag
(run just before, on the same machine: the change off, say):

    .venv/bin/python bench/zero_shot_dev.py ... --set query.synthetic.link_hops=0 --tag link_hops_off
    .venv/bin/python bench/zero_shot_dev.py ... --tag link_hops --baseline link_hops_off

`--sweep KEY=V1,V2,...` runs the evals once per value of one query setting, on the dev files only
(the held ones are never tuned on), and writes zero_shot_dev_sweep_<key>.md: per value, each
set's Hits@1 and context recall@3 averaged over its step counts, beside MetaQA dev's. What shows
whether a constant holds on KGs of other shapes. `--ablate KEY=VALUE ...` likewise runs the
defaults, then each setting changed alone (a term turned off, say): zero_shot_dev_ablation.md.

Beside each row, "on a walk": the share of its questions with a gold answer on some walk rooted at
a topic, the most node-then-walk retrieval can find in that corpus (walks.depth and
walks.hub_degree bound it: a walk never passes through a hub). `--report-only` writes the report
again from the last run's results.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
from pathlib import Path

import pyarrow as pa

from common import DATA, DEV_SETS, build_under_lock, eval_under_lock
from report import save_report

from kgwalk.eval.metaqa import AnswerReachability, load_questions, question_file
from kgwalk.eval.questions import Question, load_kg_questions, read_question_lines, sample
from kgwalk.storage import read_table, scan

FILES = [f"{split}-{group}.txt" for split in ("dev", "held") for group in ("1hop", "2hop", "3hop", "conj")]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def build(data: Path, warehouse: Path, name: str) -> float | None:
    """Build the set's corpus unless the warehouse holds a finished build of this kb.txt; the seconds it took."""
    kb = data / name / "kb.txt"
    marker = warehouse / f"{name}.built"
    if marker.exists() and json.loads(marker.read_text())["kb"] == _digest(kb):
        return json.loads(marker.read_text())["seconds"]
    seconds = build_under_lock(kb, warehouse, name)
    marker.write_text(json.dumps({"kb": _digest(kb), "seconds": seconds}))
    return seconds


def on_walks(kg: Path, question_sets: dict[str, list[Question]]) -> dict[str, float]:
    """Per question set, the share with a gold answer on a walk rooted at a topic (kg: the KG's table folder)."""
    reach = {name: AnswerReachability(questions) for name, questions in question_sets.items()}
    for batch in scan(kg / "walks", columns=["root", "nodes"]):
        walks = pa.Table.from_batches([batch])
        for r in reach.values():
            r.add(walks)
    return {name: r.share for name, r in reach.items()}


def file_questions(kg: Path, files: list[Path]) -> dict[str, list[Question]]:
    entities = read_table(kg / "entities", ["id", "label"])
    return {f.name: load_kg_questions(read_question_lines(f), entities)[0] for f in files}


def _row(label: str, split: str, group: str, s: dict, reachable: float) -> str:
    lat = s["latency_ms"].get("retrieval", {})
    return (f"| {label} | {split} | {group} | {s['questions']:,} | {reachable:.3f} | {s['topic_recall']:.3f} | {s['context_recall']:.3f} "
            f"| {s['answer_recall']:.3f} | {100 * s['extractive_hits1']:.1f} | {lat.get('p50', 0):.1f} |")


def _file_rows(label: str, rows: list[dict], reachable: dict[str, float]) -> list[str]:
    out = []
    for s in rows:
        split, group = re.fullmatch(r"(dev|held)-(\w+)\.txt", s["file"]).groups()
        out.append(_row(label, split, group.replace("hop", "-hop"), s, reachable[s["file"]]))
    return out


def _means(results: dict[str, list[dict]]) -> list[str]:
    """Per set and split: Hits@1 and context recall averaged over the step counts (conj apart)."""
    lines = ["| set | split | Hits@1, 1-3 steps (mean of the step counts) | context recall@3, same | conj Hits@1 | conj context recall@3 |",
             "|---|---|---:|---:|---:|---:|"]
    for label, rows in results.items():
        for split in ("dev", "held"):
            means = _step_means([s for s in rows if "file" in s], split)
            conj = [s for s in rows if s.get("file") == f"{split}-conj.txt"]
            if means is None:
                continue
            hits, recall = means
            conj_cells = f"{100 * conj[0]['extractive_hits1']:.1f} | {conj[0]['context_recall']:.3f}" if conj else "- | -"
            lines.append(f"| {label} | {split} | {hits:.1f} | {recall:.3f} | {conj_cells} |")
    return lines


def run_evals(kgs: dict[str, tuple[Path, Path]], files: list[str], metaqa_warehouse: str | None, settings: list[str]) -> tuple[dict, list[dict]]:
    """Each set's rows (`kgwalk eval questions` on its `files`), and MetaQA dev's where its warehouse is given."""
    results = {}
    for label, (kg, questions) in kgs.items():
        given = [a for f in files if (questions / f).exists() for a in ("--file", str(questions / f))]
        results[label] = eval_under_lock(["questions", "--warehouse", str(kg.parent), "--name", kg.name, *given], settings)
    metaqa_rows = []
    if metaqa_warehouse:
        metaqa_rows = eval_under_lock(["metaqa", "--warehouse", metaqa_warehouse, "--name", "metaqa", "--split", "dev", "--limit", "1000"], settings)
    return results, metaqa_rows


def _step_means(rows: list[dict], split: str) -> tuple[float, float] | None:
    """Hits@1 (%) and context recall@3 averaged over a split's step counts (two-topic questions apart)."""
    # a question file's row names its file (dev-2hop.txt); `kgwalk eval metaqa`'s, its hops (of the split asked for)
    steps = [s for s in rows if (s["file"].startswith(f"{split}-") and "hop" in s["file"] if "file" in s else "hops" in s)]
    if not steps:
        return None
    return 100 * sum(s["extractive_hits1"] for s in steps) / len(steps), sum(s["context_recall"] for s in steps) / len(steps)


def sweep(args: argparse.Namespace, kgs: dict[str, tuple[Path, Path]], warehouse: Path) -> None:
    key, values = args.sweep.split("=", 1)
    name = key.removeprefix("query.").replace(".", "_")
    compare(args, kgs, warehouse, {value: [f"{key}={value}"] for value in values.split(",")}, key, f"zero_shot_dev_sweep_{name}",
            f"{key} on the development sets", f"query settings at their defaults but {key}")


def ablate(args: argparse.Namespace, kgs: dict[str, tuple[Path, Path]], warehouse: Path) -> None:
    """The defaults, then each `--ablate` setting changed alone."""
    variants = {"defaults": [], **{setting: [setting] for setting in args.ablate}}
    report = "zero_shot_dev_ablation" + (f"_{args.tag}" if args.tag else "")
    compare(args, kgs, warehouse, variants, "setting", report, "Each synthetic-prior setting changed alone, on the development sets",
            "query settings at their defaults but the row's")


def compare(args: argparse.Namespace, kgs: dict[str, tuple[Path, Path]], warehouse: Path, variants: dict[str, list[str]], header: str,
            report: str, title: str, what: str) -> None:
    """The evals on the dev files once per variant (settings on top of --set), a row each: each set's Hits@1 and
    context recall@3 averaged over its step counts, beside MetaQA dev's. Results: <warehouse>/<report>.json."""
    runs = {}
    for label, settings in variants.items():
        results, metaqa_rows = run_evals(kgs, [f for f in FILES if f.startswith("dev-")], args.metaqa_warehouse, [*args.settings, *settings])
        runs[label] = {"MetaQA dev": metaqa_rows, **results} if metaqa_rows else results
        (warehouse / f"{report}.json").write_text(json.dumps(runs))  # each variant as it ends: a long run stopped keeps what it did
    labels = list(next(iter(runs.values())))
    body = [f"Dev files only; zero-shot, {what}" + (f" and {', '.join(args.settings)}" if args.settings else "") + ".",
            "Each cell: extractive Hits@1 (%) / context recall@3, averaged over the set's step counts (1-3; two-topic questions apart);",
            "the last column averages the sets' Hits@1.", "",
            f"| {header} | " + " | ".join(labels) + " | mean Hits@1 |", "|---|" + "---:|" * (len(labels) + 1)]
    for label, by_set in runs.items():
        means = {name: _step_means(rows, "dev") for name, rows in by_set.items()}
        cells = [f"{m[0]:.1f} / {m[1]:.3f}" if m else "-" for m in means.values()]
        hits = [m[0] for m in means.values() if m]
        body.append(f"| {label} | " + " | ".join(cells) + f" | {sum(hits) / len(hits):.1f} |")
    save_report(report, title, [f"- data: {args.data}; corpora: {warehouse}"], body)


def _comparison(baseline: dict, results: dict[str, list[dict]], metaqa_rows: list[dict]) -> list[str]:
    """Hits@1 and context recall@3 of each row, the baseline run's beside this run's."""
    def keyed(results: dict[str, list[dict]], metaqa_rows: list[dict]) -> dict[tuple[str, str], dict]:
        rows = {("MetaQA (qa_dev, 1,000 a hop)", f"dev-{s['hops']}hop"): s for s in metaqa_rows}
        rows.update({(label, s["file"].removesuffix(".txt")): s for label, set_rows in results.items() for s in set_rows})
        return rows

    before, after = keyed(baseline["results"], baseline["metaqa"]), keyed(results, metaqa_rows)
    lines = ["| set | questions | Hits@1 before | after | change | context recall@3 before | after |", "|---|---|---:|---:|---:|---:|---:|"]
    for key in (k for k in after if k in before):
        b, a = before[key], after[key]
        change = 100 * (a["extractive_hits1"] - b["extractive_hits1"])
        lines.append(f"| {key[0]} | {key[1]} | {100 * b['extractive_hits1']:.1f} | {100 * a['extractive_hits1']:.1f} | {change:+.1f} "
                     f"| {b['context_recall']:.3f} | {a['context_recall']:.3f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the folder bench/dev_sets.py wrote")
    parser.add_argument("--warehouse", required=True, help="where the sets' corpora are built")
    parser.add_argument("--metaqa-warehouse", help="a finished build of MetaQA's whole KB named metaqa (read only)")
    parser.add_argument("--sets", default=",".join(DEV_SETS), help="comma-separated sets (default: all)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE", help="a query setting for every eval")
    parser.add_argument("--tag", help="report name suffix, for runs with --set or --ablate")
    parser.add_argument("--sweep", metavar="KEY=V1,V2", help="one query setting at each value, on the dev files; its own report")
    parser.add_argument("--ablate", nargs="+", metavar="KEY=VALUE", help="the defaults, then each setting changed alone, on the dev files; "
                                                                           "zero_shot_dev_ablation.md")
    parser.add_argument("--baseline", metavar="TAG", help="set each row beside the run saved under this tag")
    parser.add_argument("--report-only", action="store_true", help="no builds or evals: the report from the last run's results")
    args = parser.parse_args()
    data, warehouse = Path(args.data), Path(args.warehouse)
    names = args.sets.split(",")
    saved = warehouse / f"results{'_' + args.tag if args.tag else ''}.json"
    mq_label = "metaqa (its own relation names)"
    kgs = {name: (warehouse / name, data / name) for name in names}
    if args.metaqa_warehouse:
        kgs[mq_label] = (Path(args.metaqa_warehouse) / "metaqa", data / "metaqa-dotted")
    if args.sweep or args.ablate:
        for name in names:
            build(data, warehouse, name)
        (sweep if args.sweep else ablate)(args, kgs, warehouse)
        return
    if args.report_only:
        saved_run = json.loads(saved.read_text())
        results, metaqa_rows, seconds = saved_run["results"], saved_run["metaqa"], saved_run["build_seconds"]
        if (metaqa_rows or mq_label in results) and not args.metaqa_warehouse:  # its rows' "on a walk" reads MetaQA's walks
            parser.error(f"{saved} has MetaQA rows: --report-only needs the --metaqa-warehouse they were run on")
    else:
        seconds = {name: build(data, warehouse, name) for name in names}
        results, metaqa_rows = run_evals(kgs, FILES, args.metaqa_warehouse, args.settings)
        saved.write_text(json.dumps({"results": results, "metaqa": metaqa_rows, "build_seconds": seconds, "settings": args.settings}))
    reachable = {label: on_walks(kg, file_questions(kg, [questions / f for f in FILES if (questions / f).exists()])) for label, (kg, questions) in kgs.items()}
    if metaqa_rows:
        mq = {str(s["hops"]): sample(load_questions(question_file(DATA, s["hops"], "dev")), 1000) for s in metaqa_rows}
        reachable["MetaQA"] = on_walks(Path(args.metaqa_warehouse) / "metaqa", mq)

    rerank = next((s["rerank"] for rows in results.values() for s in rows), "?")
    body = ["Plain questions (brackets dropped), zero-shot: no fitted prior (rerank " + rerank + "), "
            "query settings at their defaults" + (f" but {', '.join(args.settings)}" if args.settings else "") + ".",
            "Hits@1 is extractive (the best walk's end is a gold answer), in %; p50 is retrieval ms per question.", "",
            "| set | split | questions | n | on a walk | topic recall | context recall@3 | answer-set recall | Hits@1 | p50 ms |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    body += [_row("MetaQA (qa_dev, 1,000 a hop)", "dev", f"{s['hops']}-hop", s, reachable["MetaQA"][str(s["hops"])]) for s in metaqa_rows]
    for label, rows in results.items():
        body += _file_rows(label, rows, reachable[label])
    body += ["", "Means over the step counts (each step count weighs the same):", "", *_means(results)]
    if args.baseline:
        baseline = json.loads((warehouse / f"results_{args.baseline}.json").read_text())
        body += ["", f"## Beside the run tagged {args.baseline} ({', '.join(baseline.get('settings', [])) or 'its defaults'})", "",
                 *_comparison(baseline, results, metaqa_rows),
                 "", "Its means over the step counts:", "", *_means(baseline["results"])]
    sets_md = data / "sets.md"
    if sets_md.exists():
        body += ["", "## The sets", "", *sets_md.read_text().splitlines()[2:]]
    body += ["", "Build seconds (`kgwalk build` at its defaults; None: built before): "
             + ", ".join(f"{n} {s:.0f}" if s else f"{n} -" for n, s in seconds.items())]
    facts = [f"- data: {data} (bench/dev_sets.py); corpora: {warehouse}" + (f"; MetaQA: {args.metaqa_warehouse}" if args.metaqa_warehouse else ""),
             f"- load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (each eval holds the heavy-job lock; a load "
             "above the cores means lighter jobs shared the machine, and p50 is an upper bound)"]
    save_report("zero_shot_dev_sets" + (f"_{args.tag}" if args.tag else ""), "Zero-shot retrieval on the development sets", facts, body)


if __name__ == "__main__":
    main()
