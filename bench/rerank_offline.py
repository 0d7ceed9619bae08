"""The synthetic prior's settings tried in seconds, not minutes: each dev question's candidate walks are
captured once (a real retrieval at the defaults), then ranked again under each variant of
query.synthetic.* by the real prior (kgwalk/query/synthetic.py), as the retriever ranks them.

    .venv/bin/python bench/rerank_offline.py --data /tmp/devsets/data --warehouse /tmp/devsets/wh \\
        --metaqa-warehouse /tmp/mq --scratch /tmp/rerank-offline \\
        --variant off:answer_type=0 --variant margin0:answer_type_margin=0 [--report rerank_offline_answer_type]

The prior only reorders the walks a question's nodes already fetched (query.candidates by cosine), so
the candidates do not depend on its settings: a variant's Hits@1 here is the eval's. The capture is
kept in --scratch (`<set>.pkl`, taken again with --recapture) and the first row, the defaults, is
checked against the capture's own best walks. Scope: the 1-3 step dev files of every development set
(bench/dev_sets.py), MetaQA's KB with the metaqa-dotted questions, and --metaqa-per-hop questions of
each MetaQA qa_dev hop file, evenly spaced; what the joint term and a time filter add after the prior
(kgwalk/query/steps.py) is kept per walk. Two-topic files are left out. A variant names query.synthetic settings only;
what it finds is confirmed with `bench/zero_shot_dev.py --ablate` or `--sweep`, a real run. A change to the prior's
code (not its settings) is tried with `--code-change` on a capture taken before it: the first row is then the
capture's own Hits@1, the code before, and `defaults` this code's. A second table counts, per set, the questions
each row wins and loses against the capture: a mean can hide losses that wins make up for.
"""

from __future__ import annotations

import argparse
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from common import DATA, DEV_SETS
from report import save_report

import kgwalk.query.retriever as retriever_module
from kgwalk.config import load_config
from kgwalk.eval.questions import load_kg_questions, read_question_lines
from kgwalk.query import Retriever
from kgwalk.query.synthetic import SyntheticPrior
from kgwalk.storage import read_table

STEP_FILES = ("dev-1hop.txt", "dev-2hop.txt", "dev-3hop.txt")
MQ_OWN = "metaqa (its own relation names)"


@dataclass
class Candidate:
    """What the prior reads of a walk, and what ranking it needs."""

    walk_id: int
    signature: str
    cosine: float
    score: float  # as ranked at the defaults
    joint: float  # what the joint term and a time filter (kgwalk/query/steps.py) added after the prior
    end: int
    node_labels: list[str]  # the walk's end label last (all the prior reads)


@dataclass
class Captured:
    group: str
    masked: str
    vectors: np.ndarray
    topic: list[Candidate]  # the walks the prior reranks
    others: list[Candidate]  # the other nodes' walks, ranked by cosine
    answers: frozenset[int]
    best: int | None  # the end of the best walk at the defaults


def capture(warehouse: Path, name: str, files: list[tuple[str, Path, int | None]]) -> list[Captured]:
    """Retrieve every question once at the defaults, recording the prior's input and every candidate."""
    retriever = Retriever(load_config(None, [f"warehouse={warehouse}", f"name={name}"]))
    prior = retriever.prior
    seen: dict = {}

    def rerank(masked: str, vectors: np.ndarray, walks: list, weight: float) -> None:
        seen.update(masked=masked, vectors=np.asarray(vectors), topic=[w.walk_id for w in walks])
        SyntheticPrior.rerank(prior, masked, vectors, walks, weight)

    def joint(candidates: dict, reach: dict, weight: float) -> None:  # after the prior: every candidate, its score so far
        seen["prior_scores"] = {w.walk_id: w.score for walks in candidates.values() for w in walks}
        seen["walks"] = {w.walk_id: w for walks in candidates.values() for w in walks}
        reward_joint_ends(candidates, reach, weight)

    def in_time(candidates: dict, judge: Callable, penalty: float) -> dict:  # a time filter drops walks
        kept = restrict_in_time(candidates, judge, penalty)
        seen["walks"] = {w.walk_id: w for walks in kept.values() for w in walks}
        return kept

    prior.rerank = rerank  # type: ignore[method-assign]
    reward_joint_ends, retriever_module.reward_joint_ends = retriever_module.reward_joint_ends, joint
    restrict_in_time, retriever_module.restrict_in_time = retriever_module.restrict_in_time, in_time
    entities = read_table(warehouse / name / "entities", ["id", "label"])
    out = []
    try:
        for group, path, limit in files:
            questions = load_kg_questions(read_question_lines(path), entities)[0]
            if limit:
                questions = questions[:: max(1, len(questions) // limit)][:limit]
            for q in questions:
                seen.clear()
                result = retriever.retrieve(q.plain)
                before = seen.get("prior_scores", {})
                walks = {i: Candidate(i, w.signature, w.cosine, w.score, w.score - before[i], w.end_node, w.node_labels)
                         for i, w in seen.get("walks", {}).items()}
                topic = set(seen.get("topic", []))
                out.append(Captured(group, seen.get("masked", ""), seen.get("vectors", np.zeros((0, 0))), [walks[i] for i in walks if i in topic],
                                    [walks[i] for i in walks if i not in topic], q.answers, result.best.end_node if result.best else None))
    finally:
        retriever_module.reward_joint_ends, retriever_module.restrict_in_time = reward_joint_ends, restrict_in_time
        retriever.close()
    return out


def hits(warehouse: Path, name: str, rows: list[Captured], overrides: list[str]) -> list[bool]:
    """Per row, whether its best walk ends at a gold answer with the prior loaded under these query.synthetic overrides."""
    retriever = Retriever(load_config(None, [f"warehouse={warehouse}", f"name={name}", *overrides]))
    prior, weight = retriever.prior, retriever.cfg.query.rerank_weight
    assert isinstance(prior, SyntheticPrior), "a variant ranks with the synthetic prior"
    found = []
    for row in rows:
        scores = {w.walk_id: (w.score, w.end) for w in row.others}
        if row.topic:
            shares = prior.shares(row.masked, row.vectors, row.topic)  # type: ignore[arg-type]
            scores.update({w.walk_id: (w.cosine + weight * float(s) + w.joint, w.end) for w, s in zip(row.topic, shares)})
        best = min(scores, key=lambda i: (-scores[i][0], i)) if scores else None
        found.append(best is not None and scores[best][1] in row.answers)
    retriever.close()
    return found


def per_group(rows: list[Captured], found: list[bool]) -> dict[str, float]:
    """Per group, Hits@1 (%)."""
    by_group: dict[str, list[bool]] = {}
    for row, hit in zip(rows, found):
        by_group.setdefault(row.group, []).append(hit)
    return {group: 100 * float(np.mean(h)) for group, h in by_group.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="the folder bench/dev_sets.py wrote")
    p.add_argument("--warehouse", required=True, help="the sets' finished builds (bench/zero_shot_dev.py), only read")
    p.add_argument("--metaqa-warehouse", help="a finished build of MetaQA's whole KB named metaqa, only read")
    p.add_argument("--metaqa-per-hop", type=int, default=500)
    p.add_argument("--sets", default=",".join(DEV_SETS), help="comma-separated development sets (default: all)")
    p.add_argument("--scratch", required=True, type=Path, help="where the captures are kept")
    p.add_argument("--recapture", action="store_true")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=V[,KEY=V]", help="query.synthetic settings, a row each")
    p.add_argument("--code-change", action="store_true",
                   help="the prior's code differs from the code that captured (a change to kgwalk/query/synthetic.py, say): no check of "
                        "the defaults' row, which is then this code's, and a first row `captured` with the capture's own Hits@1")
    p.add_argument("--report", help="a bench/results/ name for the table (else printed only)")
    args = p.parse_args()
    data = Path(args.data)
    sets = {name: (Path(args.warehouse), name, [(f.split(".")[0].removeprefix("dev-"), data / name / f, None) for f in STEP_FILES])
            for name in args.sets.split(",")}
    if args.metaqa_warehouse:
        mq = Path(args.metaqa_warehouse)
        sets[MQ_OWN] = (mq, "metaqa", [(f.split(".")[0].removeprefix("dev-"), data / "metaqa-dotted" / f, None) for f in STEP_FILES])
        sets["MetaQA dev"] = (mq, "metaqa", [(f"{h}hop", DATA / f"{h}-hop" / "qa_dev.txt", args.metaqa_per_hop) for h in (1, 2, 3)])
    variants: dict[str, list[str] | None] = {"captured": None} if args.code_change else {}  # None: the capture's own best walks
    variants["defaults"] = []
    for spec in args.variant:
        label, _, settings = spec.partition(":")
        variants[label] = [f"query.synthetic.{kv}" for kv in settings.split(",") if kv]
    table: dict[str, dict[str, float]] = {label: {} for label in variants}
    changed: dict[str, dict[str, tuple[int, int]]] = {label: {} for label in variants}  # questions won and lost against the capture
    args.scratch.mkdir(parents=True, exist_ok=True)
    for label, (warehouse, name, files) in sets.items():
        saved = args.scratch / f"{label.replace(' ', '_').replace('(', '').replace(')', '')}.pkl"
        if args.recapture or not saved.exists():
            saved.write_bytes(pickle.dumps(capture(warehouse, name, files)))
        rows = pickle.loads(saved.read_bytes())
        before = [r.best in r.answers for r in rows]
        captured = per_group(rows, before)
        for variant, overrides in variants.items():
            found = before if overrides is None else hits(warehouse, name, rows, overrides)
            groups = per_group(rows, found)
            if variant == "defaults" and not args.code_change and not np.allclose(list(groups.values()), list(captured.values())):
                raise SystemExit(f"{label}: ranked again at the defaults {groups} != captured {captured}: was the capture taken at other settings?")
            table[variant][label] = float(np.mean(list(groups.values())))
            changed[variant][label] = (sum(f and not b for f, b in zip(found, before)), sum(b and not f for f, b in zip(found, before)))
            print(label, variant, {g: round(h, 1) for g, h in groups.items()}, flush=True)
    labels = list(sets)
    body = ["Hits@1 (%), extractive, averaged over each set's step counts (1-3), plain questions; the candidates captured once at the",
            "defaults, ranked again by the synthetic prior under each row's settings.", "",
            "| variant | settings | " + " | ".join(labels) + " | mean |", "|---|---|" + "---:|" * (len(labels) + 1)]
    for variant, overrides in variants.items():
        cells = [table[variant][label] for label in labels]
        settings = "the code that captured, at its defaults" if overrides is None else ", ".join(o.removeprefix("query.") for o in overrides) or "-"
        body.append(f"| {variant} | {settings} | " + " | ".join(f"{c:.1f}" for c in cells)
                    + f" | {np.mean(cells):.1f} |")
    body += ["", "Questions each row wins and loses against the capture (won / lost):", "",
             "| variant | " + " | ".join(labels) + " | all |", "|---|" + "---:|" * (len(labels) + 1)]
    for variant in variants:
        pairs = [changed[variant][label] for label in labels]
        body.append(f"| {variant} | " + " | ".join(f"{w} / {lo}" for w, lo in pairs) + f" | {sum(w for w, _ in pairs)} / {sum(lo for _, lo in pairs)} |")
    print("\n".join(body))
    if args.report:
        save_report(args.report, "The synthetic prior's settings ranked again on captured candidates", [f"- data: {data}; corpora: {args.warehouse}"
                    + (f"; MetaQA: {args.metaqa_warehouse}, {args.metaqa_per_hop} questions a hop" if args.metaqa_warehouse else "")], body)


if __name__ == "__main__":
    main()
