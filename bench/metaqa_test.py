"""MetaQA **test**, reported once: zero-shot and fitted-prior retrieval, plain and bracketed
questions, per embed model (`--model`: static, the CPU default, whose prior encoder is MiniLM;
or all-MiniLM-L6-v2 for every vector), on a sub-corpus that holds the test questions' topics.

    .venv/bin/python bench/metaqa_test.py --model static --build      # sub-corpus: verbalize, embed, index, fit-paths on dev
    .venv/bin/python bench/metaqa_test.py --model static --row NAME   # one eval row per call (see ROWS)
    .venv/bin/python bench/metaqa_test.py --tabulate                  # bench/results/metaqa_test_zero_shot.md, every model's rows

A full MiniLM build of MetaQA takes ~50 min on 2 cores, so, as bench/embed_quality.py does for
dev, the corpus is the walks rooted at the topic entities of the eval's 1,000-question test
sample per hop count plus 4,000 random other roots (node search still has to choose), cut from a
walked MetaQA warehouse (`--source`: its `walks`, `edges`, `entities`, `relations`). The path
prior of the prior rows is fitted on the three **dev** files; nothing here is tuned on test.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from common import DATA, copy_subcorpus, kgwalk, kgwalk_commit
from report import save_report

from kgwalk.eval.metaqa import load_questions, question_file, sample

MODELS = {"all-MiniLM-L6-v2": "metaqa_test_minilm", "static": "metaqa_test_static"}  # embed.model -> sub-corpus name
ROWS = {  # row -> (label, settings, plain questions)
    "zero_shot_plain": ("zero-shot (no labelled data: rerank synthetic)", ["query.rerank=synthetic"], True),
    "zero_shot_bracketed": ("zero-shot (no labelled data: rerank synthetic)", ["query.rerank=synthetic"], False),
    "cosine_plain": ("the paper's cosine order (rerank none)", ["query.rerank=none"], True),
    "prior_plain": ("path prior fitted on dev (rerank paths)", ["query.rerank=paths"], True),
    "prior_bracketed": ("path prior fitted on dev (rerank paths)", ["query.rerank=paths"], False),
    # what `kgwalk answer` puts in the prompt by default (answer.context ego): the same ranking, as ego-graph lines
    "zero_shot_plain_ego": ("zero-shot (no labelled data: rerank synthetic), answer prompt's context (ego)", ["query.rerank=synthetic", "query.mode=ego"], True),
    "prior_plain_ego": ("path prior fitted on dev (rerank paths), answer prompt's context (ego)", ["query.rerank=paths", "query.mode=ego"], True),
}
LIMIT = 1000


def build(warehouse: Path, source: str, distractors: int, model: str) -> None:
    topics = np.unique([q.topic for hops in (1, 2, 3) for q in sample(load_questions(question_file(DATA, hops, "test")), LIMIT)])
    name = MODELS[model]
    walks, _ = copy_subcorpus(warehouse, source, name, topics, distractors)
    where = ["--warehouse", str(warehouse), "--name", name, "--set", f"embed.model={model}"]
    start = time.perf_counter()
    for stage in ("verbalize", "embed", "index"):
        kgwalk(stage, *where)
    kgwalk("fit-paths", *where, *[a for hops in (1, 2, 3) for a in ("--questions", str(question_file(DATA, hops, "dev")))])
    (warehouse / f"{name}.build.json").write_text(json.dumps({"walks": walks.num_rows, "seconds": time.perf_counter() - start}))


def run_row(warehouse: Path, row: str, model: str) -> None:
    _, settings, plain = ROWS[row]
    name = MODELS[model]
    out = kgwalk("eval", "metaqa", "--warehouse", str(warehouse), "--name", name,
                 *[a for kv in [f"embed.model={model}", *settings] for a in ("--set", kv)],
                 "--split", "test", "--hops", "1,2,3", "--limit", str(LIMIT), "--data", str(DATA), "--json", *(["--plain"] if plain else []))
    (warehouse / f"{name}.{row}.json").write_text(out)


def tabulate(warehouse: Path, before: Path | None = None, before_label: str = "") -> None:
    """Every model's rows in `warehouse`; with `before`, the rows of an earlier run's warehouse too,
    each model's label followed by `before_label` (what that run's corpus or code differed in)."""
    body = ["| embed model | retrieval | questions | hops | topic recall | context recall@3 | answer-set recall "
            "| answer-set recall, multi-answer (n) | extractive Hits@1 | context chars | retrieval ms p50 / p99 |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    summary = ["", "| embed model | retrieval | questions | context recall@3 (1/2/3) | answer-set recall, multi-answer (1/2/3) "
               "| extractive Hits@1 (1/2/3) | Hits@1 mean |", "|---|---|---|---|---|---|---:|"]
    corpora = []
    runs = [(warehouse, "")] + ([(before, f" {before_label}")] if before else [])
    for (where, suffix), (model, name) in ((run, item) for item in MODELS.items() for run in runs):
        if not (where / f"{name}.build.json").exists():
            continue
        corpora.append(f"{model}{suffix}: {json.loads((where / f'{name}.build.json').read_text())['walks']:,} walks")
        shown = (f"{model} (prior encoder all-MiniLM-L6-v2)" if model == "static" else model) + suffix
        for row, (label, _, plain) in ROWS.items():
            path = where / f"{name}.{row}.json"
            if not path.exists():
                continue
            scores = json.loads(path.read_text())
            form = "plain" if plain else "bracketed"
            for s in scores:
                lat = s["latency_ms"]["retrieval"]
                body.append(f"| {shown} | {label} | {form} | {s['hops']} | {s['topic_recall']:.3f} | {s['context_recall']:.3f} "
                            f"| {s['answer_recall']:.3f} | {s['multi_answer_recall']:.3f} ({s['multi_answer_questions']}) "
                            f"| {s['extractive_hits1']:.3f} | {s['context_chars']:.0f} | {lat['p50']:.1f} / {lat['p99']:.1f} |")
            per_hop = {m: " / ".join(f"{s[m]:.3f}" for s in scores) for m in ("context_recall", "multi_answer_recall", "extractive_hits1")}
            summary.append(f"| {shown} | {label} | {form} | {per_hop['context_recall']} | {per_hop['multi_answer_recall']} "
                           f"| {per_hop['extractive_hits1']} | {100 * np.mean([s['extractive_hits1'] for s in scores]):.1f} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; MetaQA **test**, reported once per configuration: the eval's deterministic sample of "
        f"{LIMIT:,} questions per hop count; plain = brackets dropped (as users type), bracketed = MetaQA's form",
        f"- corpora ({'; '.join(corpora)}): the walks of the same roots (the sampled test questions' topic entities plus 4,000 random other roots), "
        "verbalized with the defaults, embedded with the row's model, edge index; static's prior encoder (query.prior_encoder auto) is "
        "all-MiniLM-L6-v2; the path prior of the prior rows is fitted on the three dev files; the zero-shot rows use no labelled data; "
        "nothing was tuned on test",
        f"- defaults otherwise (git {kgwalk_commit()}): hybrid node search, k_nodes 3, k_walks 3, query.candidates 50, walk mode (the retrieval API's; "
        "the rows marked ego read the answer prompt's default context, answer.context ego: the top nodes' pruned ego-graphs, one line per node, "
        "relation and direction, in as many characters as the walks take), "
        "query.diversity ends, query.also_chars 1000 (each shown walk followed by the other ends of its relation path: context chars are the "
        "answer prompt's walk lines with those lists), query.rerank_weight 2.0; the synthetic prior with centred cosines, step count "
        "(query.synthetic.hop_weight 0.16, query.synthetic.words_per_hop 1.75) and content words (query.synthetic.content_mix 0.5)",
        "- multi-answer: the sampled questions with more than one gold answer",
        "- latency: each row one `kgwalk eval` process on 2 cores, no LLM; these rows ran beside other jobs (CI, benchmarks): see "
        "bench/results/query_latency.md for latency on an idle machine",
    ]
    save_report("metaqa_test_zero_shot", "MetaQA test, once: zero-shot vs fitted prior, plain vs bracketed questions", facts, body + summary)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", default="/tmp/kgwalk-bench/mq-static", help="holds --source and receives the sub-corpus")
    p.add_argument("--source", default="metaqa", help="a walked MetaQA KG in --warehouse")
    p.add_argument("--distractors", type=int, default=4000)
    p.add_argument("--model", choices=list(MODELS), default="static", help="the embed.model of --build and --row")
    p.add_argument("--build", action="store_true")
    p.add_argument("--row", choices=list(ROWS))
    p.add_argument("--tabulate", action="store_true")
    p.add_argument("--before", help="with --tabulate: an earlier run's warehouse, whose rows are shown too")
    p.add_argument("--before-label", default="(before)", help="what the --before run differed in, after its model's name")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    if args.build:
        build(warehouse, args.source, args.distractors, args.model)
    if args.row:
        run_row(warehouse, args.row, args.model)
    if args.tabulate:
        tabulate(warehouse, Path(args.before) if args.before else None, args.before_label)


if __name__ == "__main__":
    main()
