"""Zero-shot against a fitted path prior on the development sets and MetaQA dev (issue 42's two
missing measurements): per set, its labelled dev questions (every group's file pooled: 1-3 steps
and two-topic) split 80/20 by group with a fixed seed, and on the 20% part three rankings:

* zero-shot: the query defaults, no fitted prior (query.rerank=auto is the synthetic prior);
* labels: `kgwalk fit-paths --questions` on the 80% part, then query.rerank=paths;
* generated: `kgwalk fit-paths --generated N` (questions generated from the corpus's own relation
  paths, no labels: kgwalk/query/kg_questions.py), then query.rerank=paths.

    .venv/bin/python bench/zero_shot_vs_fitted.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh \
        --metaqa-warehouse /tmp/mq --scratch /tmp/zsvf [--sets synth,metaqa-dotted] [--generated 5000] \
        [--rankings zero-shot] [--set KEY=VALUE --report NAME]

`--rankings zero-shot` measures only the zero-shot ranking again (after a change to the synthetic
prior, which a fitted prior does not use) and keeps the fitted rankings' rows of the last run.

The corpora are the finished builds bench/zero_shot_dev.py made (`<warehouse>/<set>`; MetaQA's whole
KB at `<metaqa-warehouse>/metaqa`), only read: each ranking gets a scratch KG under --scratch whose
entries link to the build's, so that the prior fit-paths writes (the table `path_prior`) lands in
the scratch KG alone. MetaQA's questions are qa_dev's (never qa_test), `--metaqa-per-hop` of each hop
file drawn with the split's seed. Fits and evals run one at a time under the heavy-work lock.
`--report-only` writes the report again from the last run's results (<scratch>/results.json).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from common import DATA, DEV_SETS, HEAVY_LOCK, REPO, eval_under_lock
from report import git_head, save_report

SEED = 0
TEST_SHARE = 0.2
GROUPS = ("1hop", "2hop", "3hop", "conj")
RANKINGS = {"zero-shot": [], "labels": ["query.rerank=paths"], "generated": ["query.rerank=paths"]}
TARGET_POINTS = 5.0  # issue 42: zero-shot Hits@1 within 5 points of the prior fitted on 80% of the labels
METAQA = "metaqa"


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def set_lines(data: Path, name: str, metaqa_per_hop: int) -> dict[str, list[str]]:
    """A set's labelled dev lines by group (MetaQA: qa_dev's hop files, a seeded draw of each)."""
    if name == METAQA:
        rng = np.random.default_rng(SEED)
        lines = {}
        for hops in (1, 2, 3):
            every = _lines(DATA / f"{hops}-hop" / "qa_dev.txt")
            lines[f"{hops}hop"] = [every[i] for i in np.sort(rng.permutation(len(every))[:metaqa_per_hop])]
        return lines
    return {g: _lines(data / name / f"dev-{g}.txt") for g in GROUPS if (data / name / f"dev-{g}.txt").exists()}


def split(lines: dict[str, list[str]]) -> tuple[list[str], dict[str, list[str]]]:
    """(the 80% part, pooled; the 20% part by group): each group shuffled with the fixed seed."""
    rng = np.random.default_rng(SEED)
    fit, test = [], {}
    for group, group_lines in lines.items():
        order = rng.permutation(len(group_lines))
        cut = round(len(group_lines) * TEST_SHARE)
        test[group] = [group_lines[i] for i in np.sort(order[:cut])]
        fit += [group_lines[i] for i in np.sort(order[cut:])]
    return fit, test


def scratch_kg(source: Path, warehouse: Path) -> Path:
    """A KG folder in `warehouse` named as `source`, each entry a link to source's, no path prior."""
    target = warehouse / source.name
    if target.exists():
        for entry in target.iterdir():
            if entry.is_symlink():
                entry.unlink()
        shutil.rmtree(target / "path_prior", ignore_errors=True)
    target.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        if entry.name not in ("path_prior", "_writer.lock"):
            (target / entry.name).symlink_to(entry.resolve())
    return target


def fit(kg: Path, args: list[str], settings: list[str]) -> str:
    """`kgwalk fit-paths` into the scratch KG, under the heavy-work lock; its output."""
    out = subprocess.run(["flock", HEAVY_LOCK, "nice", "-n", "5", sys.executable, "-m", "kgwalk.cli", "fit-paths",
                          "--warehouse", str(kg.parent), "--name", kg.name, *args, *(a for kv in settings for a in ("--set", kv))],
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO).stdout
    return out.strip().splitlines()[-1]


def measure(source: Path, lines: dict[str, list[str]], scratch: Path, generated: int, rankings: list[str], saved: dict,
            common: list[str]) -> dict:
    """The rankings' eval rows on the 20% part, and what each fit said; those not in `rankings` as `saved` has them.
    `common`: settings of every fit and eval."""
    fit_lines, test = split(lines)
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "fit.txt").write_text("\n".join(fit_lines) + "\n", encoding="utf-8")
    files = []
    for group, group_lines in test.items():
        (scratch / f"test-{group}.txt").write_text("\n".join(group_lines) + "\n", encoding="utf-8")
        files += ["--file", str(scratch / f"test-{group}.txt")]
    fitted = {r: f for r, f in saved.get("fits", {}).items() if r not in rankings}
    rows = {r: v for r, v in saved.get("rows", {}).items() if r not in rankings}
    commits = {r: c for r, c in saved.get("commits", {}).items() if r in rows}
    for ranking in rankings:
        settings = common + RANKINGS[ranking]
        commits[ranking] = git_head(REPO)
        kg = scratch_kg(source, scratch / ranking)
        if ranking == "labels":
            fitted[ranking] = fit(kg, ["--questions", str(scratch / "fit.txt")], common)
        elif ranking == "generated":
            fitted[ranking] = fit(kg, ["--generated", str(generated), "--seed", str(SEED)], common)
        rows[ranking] = eval_under_lock(["questions", "--warehouse", str(kg.parent), "--name", kg.name, *files], settings)
    return {"fit_questions": len(fit_lines), "test_questions": {g: len(t) for g, t in test.items()}, "fits": fitted,
            "rows": {r: rows[r] for r in RANKINGS if r in rows}, "commits": commits}


def scores(rows: list[dict]) -> dict[str, tuple[float, float, int]]:
    """Per group and overall (pooled over the 20% part's questions): (Hits@1 in %, context recall@3, questions)."""
    out = {}
    for s in rows:
        group = Path(s["file"]).stem.removeprefix("test-")
        out[group] = (100 * s["extractive_hits1"], s["context_recall"], s["questions"])
    n = sum(q for _, _, q in out.values())
    out["overall"] = (sum(h * q for h, _, q in out.values()) / n, sum(r * q for _, r, q in out.values()) / n, n)
    return out


def report(results: dict[str, dict], generated: int, metaqa_per_hop: int) -> list[str]:
    body = ["Each set's labelled dev questions split 80/20 by group (seed 0); every figure is on the 20% part, plain questions",
            "(brackets dropped). zero-shot: query defaults, no fitted prior (the synthetic prior). labels: `kgwalk fit-paths",
            f"--questions` on the 80% part, then query.rerank=paths. generated: `kgwalk fit-paths --generated {generated}` (no labels:",
            "questions generated from the corpus's own relation paths), then query.rerank=paths. Hits@1 is extractive (the best",
            "walk's end is a gold answer), in %; recall is context recall@3; overall pools the groups' questions.", "",
            "| set | group | n | zero-shot Hits@1 | labels Hits@1 | generated Hits@1 | labels - zero-shot | generated - zero-shot "
            "| zero-shot recall | labels recall | generated recall |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    verdicts, within, wins = [], [], []
    for name, r in results.items():
        by = {ranking: scores(rows) for ranking, rows in r["rows"].items()}
        for group in by["zero-shot"]:
            z, lab, gen = (by[k][group] for k in RANKINGS)
            label = f"**{group}**" if group == "overall" else group.replace("hop", "-hop")
            body.append(f"| {name} | {label} | {z[2]:,} | {z[0]:.1f} | {lab[0]:.1f} | {gen[0]:.1f} | {lab[0] - z[0]:+.1f} | {gen[0] - z[0]:+.1f} "
                        f"| {z[1]:.3f} | {lab[1]:.3f} | {gen[1]:.3f} |")
        z, lab, gen = (by[k]["overall"][0] for k in RANKINGS)
        within += [name] if lab - z <= TARGET_POINTS else []
        wins += [name] if gen > z else []
        verdicts.append(f"| {name} | {z:.1f} | {lab:.1f} | {lab - z:.1f} | {'yes' if lab - z <= TARGET_POINTS else 'no'} "
                        f"| {gen:.1f} | {gen - z:+.1f} | {'yes' if gen > z else 'no'} |")
    body += ["", f"Targets, overall Hits@1: zero-shot within {TARGET_POINTS:.0f} points of the labelled prior; does the label-free "
             "fitted prior beat zero-shot?", "",
             "| set | zero-shot | labels | gap | within 5 | generated | generated - zero-shot | generated wins |",
             "|---|---:|---:|---:|---|---:|---:|---|", *verdicts, "",
             f"Zero-shot is within {TARGET_POINTS:.0f} points of the labelled prior on {len(within)} of {len(results)} sets"
             + (f" ({', '.join(within)})" if within else "") + f"; the prior fitted on generated questions beats zero-shot on {len(wins)} of "
             f"{len(results)}" + (f" ({', '.join(wins)})" if wins else "") + ".", "", "What each fit kept (fit-paths' last line):", ""]
    body += [f"- {name}, {ranking}: {line}" for name, r in results.items() for ranking, line in r["fits"].items()]
    body += ["", "Questions fitted (80% part) / scored (20% part): "
             + "; ".join(f"{name} {r['fit_questions']:,} / {sum(r['test_questions'].values()):,}" for name, r in results.items()),
             f"MetaQA: {metaqa_per_hop:,} questions of each qa_dev hop file, drawn with seed {SEED}; no two-topic group."]
    return body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the folder bench/dev_sets.py wrote")
    parser.add_argument("--warehouse", required=True, help="the sets' finished builds (bench/zero_shot_dev.py), only read")
    parser.add_argument("--metaqa-warehouse", help="a finished build of MetaQA's whole KB named metaqa, only read")
    parser.add_argument("--scratch", required=True, help="where the scratch KGs, their priors and the split files go")
    parser.add_argument("--sets", default=",".join(DEV_SETS), help="comma-separated dev sets (default: all)")
    parser.add_argument("--generated", type=int, default=5000, help="questions fit-paths --generated draws (default 5000)")
    parser.add_argument("--metaqa-per-hop", type=int, default=2000, help="qa_dev questions per hop file (default 2000)")
    parser.add_argument("--rankings", default=",".join(RANKINGS),
                        help="comma-separated rankings to measure again (default: all); the others' rows are kept from the last run")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting for every fit and eval (the prior's encoder, say; give each its own --scratch)")
    parser.add_argument("--report", default="zero_shot_vs_fitted", help="the report's name in bench/results")
    parser.add_argument("--report-only", action="store_true", help="no fits or evals: the report from the last run's results")
    args = parser.parse_args()
    data, scratch = Path(args.data), Path(args.scratch)
    saved = scratch / "results.json"
    results = json.loads(saved.read_text()) if saved.exists() else {}
    if not args.report_only:
        sources = {name: Path(args.warehouse) / name for name in args.sets.split(",") if name}
        if args.metaqa_warehouse:
            sources[METAQA] = Path(args.metaqa_warehouse) / METAQA
        for name, source in sources.items():
            if not source.exists():
                sys.exit(f"no build of {name} at {source}: run bench/zero_shot_dev.py first")
            rankings = [r for r in args.rankings.split(",") if r]
            if unknown := set(rankings) - set(RANKINGS):
                sys.exit(f"--rankings: unknown {sorted(unknown)}; known: {', '.join(RANKINGS)}")
            results[name] = measure(source, set_lines(data, name, args.metaqa_per_hop), scratch / name, args.generated, rankings,
                                    results.get(name, {}), args.settings)
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(json.dumps(results))  # each set kept as it finishes
            print(f"{name}: done", flush=True)
    facts = [f"- data: {data} (bench/dev_sets.py); corpora: {args.warehouse}" + (f"; MetaQA: {args.metaqa_warehouse}" if args.metaqa_warehouse else ""),
             f"- scratch KGs (links to the builds, each with its own path_prior): {scratch}",
             f"- settings of every fit and eval: {', '.join(args.settings) or 'the defaults'}",
             "- the split is by question, not by topic: an entity may be asked about in both parts (the prior masks it)",
             f"- load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (no timings here: Hits@1 and recall do not "
             "depend on the load)",
             "- each ranking measured at: " + "; ".join(
                 f"{name} " + ", ".join(f"{r} {r_commits.get(r, 'an earlier run')}" for r in RANKINGS)
                 for name, r_commits in ((name, result.get("commits", {})) for name, result in results.items()))]
    save_report(args.report, "Zero-shot against a fitted path prior: labelled and generated questions", facts,
                report(results, args.generated, args.metaqa_per_hop))


if __name__ == "__main__":
    main()
