"""Benchmark: temporal filters (`query.temporal`) against the default on MetaQA dev, plain questions.

    .venv/bin/python bench/temporal.py --stage source   # whole KB: ingest, walks, fit-paths (static)
    .venv/bin/python bench/temporal.py --stage corpus   # the sub-corpus: verbalize, embed, index
    .venv/bin/python bench/temporal.py --stage run      # the rows (rerun until all are done), then the report
    [--warehouse /tmp/kgwalk-options] [--per-hop 500] [--distractors 4000]

Each stage is a few minutes (one hold of the shared heavy-work lock); bench/align.py scores
entity alignment on the same sub-corpus.

MetaQA's questions name years only inside titles ("who stars in [1984]", "[Gold Diggers of
1935]"): no dev question constrains time. So two question sets, both from MetaQA dev:

- **named years**: every dev question (1-3 hops) whose text holds a year. The filter must leave
  them alone (a year in a title is a name); the rows count where it fired and what it cost.
- **time-constrained (derived)**: dev questions whose answers are films (1-hop `*_to_movie`,
  2-hop `movie_to_*_to_movie`) with a time expression appended, drawn with a fixed seed from the
  gold films' release years (KB `release_year`): "in Y", "before Y", "after Y", "in the Ds",
  "between Y1 and Y2", always keeping some gold films and dropping others. Gold = the films whose
  release year is in range. `wrong period` is the share of the context's original-gold films
  that are outside the range (what an LLM would wrongly list).

One build serves every row: the whole KB ingested and walked (defaults) in `<warehouse>/metaqa`
with the path prior (`kgwalk fit-paths` on the three qa_dev files, static encoder); the
sub-corpus `<warehouse>/metaqa_options` holds the walks of every question's topic (these and
bench/align.py's) plus `--distractors` other roots, verbalized (template), embedded with
`embed.model: static` (a MiniLM build of the whole KB takes ~50 min here) and indexed. Rows: filter off/on x path prior
(zero-shot, `query.rerank: none`) / with the prior (`auto`), same questions, one run.
Writes bench/results/temporal.md.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
from common import DATA, OPTIONS_SUBCORPUS, OPTIONS_WAREHOUSE, alignment_topics, copy_subcorpus, kgwalk
from report import save_report

from kgwalk.eval.metaqa import Question, load_questions, question_file, sample, score_retrieval
from kgwalk.kg.ids import hash64, normalize_label
from kgwalk.query import Retriever
from kgwalk.query.temporal import constraint

STATIC = ["--set", "embed.model=static"]
YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
FILM_TYPES = {1: ("actor_to_movie", "director_to_movie", "writer_to_movie", "tag_to_movie"),
              2: ("movie_to_actor_to_movie", "movie_to_director_to_movie", "movie_to_writer_to_movie")}


def release_years() -> dict[int, list[int]]:
    """Film entity id -> its release years, from the KB."""
    years: dict[int, list[int]] = {}
    for line in (DATA / "kb.txt").read_text(encoding="utf-8").splitlines():
        head, rel, tail = line.split("|")
        if rel == "release_year":
            years.setdefault(hash64(normalize_label(head)), []).append(int(tail))
    return years


def with_time(question: Question, years: dict[int, list[int]], rng: np.random.Generator) -> tuple[Question, frozenset[int]] | None:
    """The question with a time expression appended and its gold cut to the films in range (with
    the original gold), or None when no expression keeps some gold films and drops others."""
    dated = {a: years[a] for a in question.answers if a in years}
    if len(dated) < 2:
        return None
    all_years = sorted(y for ys in dated.values() for y in ys)
    pick = int(rng.choice(all_years))
    mid = int(np.median(all_years))
    decade = pick // 10 * 10
    lo, hi = sorted(int(y) for y in rng.choice(all_years, 2))
    options = [(f"in {pick}", pick, pick), (f"before {mid}", -10**6, mid - 1), (f"after {mid}", mid + 1, 10**6),
               (f"in the {decade}s", decade, decade + 9), (f"between {lo} and {hi}" if lo < hi else f"in {lo}", lo, hi)]
    for at in rng.permutation(len(options)):
        phrase, first, last = options[at]
        gold = frozenset(a for a, ys in dated.items() if any(first <= y <= last for y in ys))
        if gold and gold != frozenset(question.answers):
            labels = tuple(a for a in question.answer_labels if hash64(normalize_label(a)) in gold)
            return Question(f"{question.text} {phrase}", question.topic, gold, labels), frozenset(question.answers)
    return None


def question_sets(per_hop: int) -> dict[str, list[tuple[Question, frozenset[int]]]]:
    years, rng = release_years(), np.random.default_rng(0)
    sets: dict[str, list[tuple[Question, frozenset[int]]]] = {}
    for hops in (1, 2, 3):
        qs = load_questions(question_file(DATA, hops, "dev"))
        sets[f"named years, {hops}-hop"] = [(q, q.answers) for q in qs if YEAR.search(q.text)]
    for hops, types in FILM_TYPES.items():
        qtypes = (DATA / f"{hops}-hop" / "qa_dev_qtype.txt").read_text().split()
        lines = [line for line in (DATA / f"{hops}-hop" / "qa_dev.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
        films = [q for q, t, line in zip(load_questions(question_file(DATA, hops, "dev")), qtypes, lines) if t in types]
        derived = [d for q in films if (d := with_time(q, years, rng)) is not None]
        sets[f"time-constrained, {hops}-hop"] = sample(derived, per_hop)
    return sets


def build_source(warehouse: Path) -> None:
    where = ["--warehouse", str(warehouse), "--name", "metaqa"]
    if not (warehouse / "metaqa" / "walks").exists():
        kgwalk("ingest", *where, "--kg", str(DATA / "kb.txt"))
        kgwalk("walks", *where)
    if not (warehouse / "metaqa" / "path_prior").exists():
        kgwalk("fit-paths", *where, *STATIC, *(a for h in (1, 2, 3) for a in ("--questions", str(question_file(DATA, h, "dev")))))


def build(warehouse: Path, topics: np.ndarray, distractors: int) -> dict[str, int]:
    """The sub-corpus: these topics' walks and `distractors` other roots', verbalized, embedded, indexed."""
    kept, roots = copy_subcorpus(warehouse, "metaqa", OPTIONS_SUBCORPUS, topics, distractors)
    stage_seconds = {}
    for stage in ("verbalize", "embed", "index"):
        start = time.perf_counter()
        kgwalk(stage, "--warehouse", str(warehouse), "--name", OPTIONS_SUBCORPUS, *STATIC)
        stage_seconds[stage] = round(time.perf_counter() - start, 1)
    return {"walks": kept.num_rows, "roots": len(roots), "topics": len(topics), **stage_seconds}


def wrong_period(retriever: Retriever, pairs: list[tuple[Question, frozenset[int]]]) -> tuple[float, int]:
    """Mean share of the context's original-gold films that are outside the range, and how many
    questions the filter found a time expression in."""
    shares, fired = [], 0
    for q, original in pairs:
        if retriever.cfg.query.temporal:
            fired += constraint(q.plain, retriever.lexicon.mentions, retriever.temporal.is_name) is not None
        context = {n for w in retriever.retrieve(q.plain).walks for n in w.nodes}
        named = context & original
        if named:
            shares.append(len(named - q.answers) / len(named))
    return (float(np.mean(shares)) if shares else 0.0), fired


def run(warehouse: Path, sets: dict[str, list[tuple[Question, frozenset[int]]]], saved: Path, max_seconds: float) -> None:
    """Score every row not saved yet, saving each as it finishes; no new row after `max_seconds`."""
    rows = json.loads(saved.read_text()) if saved.exists() else {}
    start = time.perf_counter()
    for rerank in ("none", "auto"):
        for temporal in (False, True):
            key = f"{rerank}/{temporal}"
            if key in rows or time.perf_counter() - start > max_seconds:
                continue
            retriever = Retriever.from_config(None, ["embed.model=static", f"query.rerank={rerank}", f"query.temporal={str(temporal).lower()}"],
                                              name=OPTIONS_SUBCORPUS, warehouse=str(warehouse))
            retriever.warm_up()
            rows[key] = []
            for name, pairs in sets.items():
                hops = int(name.split(", ")[1][0])
                scores = score_retrieval(retriever, [q for q, _ in pairs], hops, plain=True)
                wrong, fired = wrong_period(retriever, pairs)
                rows[key].append({"set": name, "rerank": retriever.rerank, "temporal": temporal, "fired": fired, "wrong_period": wrong, **asdict(scores)})
            retriever.close()
            saved.write_text(json.dumps(rows))
            print(key, "done", flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--stage", choices=("source", "corpus", "run", "report"), required=True)
    p.add_argument("--warehouse", default=OPTIONS_WAREHOUSE)
    p.add_argument("--per-hop", type=int, default=500, help="time-constrained questions per hop count")
    p.add_argument("--distractors", type=int, default=4000)
    p.add_argument("--max-seconds", type=float, default=150, help="--stage run: start no new row after this long")
    args = p.parse_args()
    warehouse = Path(args.warehouse)
    sets = question_sets(args.per_hop)
    corpus_file, runs_file = warehouse / f"{OPTIONS_SUBCORPUS}.json", warehouse / "temporal.runs.json"
    if args.stage == "source":
        return build_source(warehouse)
    if args.stage == "corpus":
        # the sub-corpus serves bench/align.py too: the entities the alignment pairs with the dev sample's topics
        topics = np.unique(np.concatenate([[q.topic for qs in sets.values() for q, _ in qs], alignment_topics(warehouse)]))
        corpus_file.write_text(json.dumps(build(warehouse, topics, args.distractors)))
        return
    if args.stage == "run":
        run(warehouse, sets, runs_file, args.max_seconds)
    corpus, rows = json.loads(corpus_file.read_text()), [r for rs in json.loads(runs_file.read_text()).values() for r in rs]
    if len(rows) < 4 * len(sets):
        print("some rows are not done: run --stage run again")
        return
    body = ["| questions | n | path prior | temporal | expression found | topic recall | context recall@3 | answer-set recall | extractive Hits@1 | wrong period | p50 ms |",
            "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in sorted(rows, key=lambda r: (not r["set"].startswith("time"), r["set"], r["rerank"], r["temporal"])):
        body.append(f"| {r['set']} | {r['questions']} | {'fitted' if r['rerank'] == 'paths' else 'none (zero-shot)'} | "
                    f"{'on' if r['temporal'] else 'off'} | {r['fired'] if r['temporal'] else ''} | {r['topic_recall']:.3f} | "
                    f"{r['context_recall']:.3f} | {r['answer_recall']:.3f} | {r['extractive_hits1']:.3f} | {r['wrong_period']:.3f} | "
                    f"{r['latency_ms']['retrieval']['p50']:.1f} |")
    facts = [f"- corpus: MetaQA sub-corpus of {corpus['walks']:,} walks ({corpus['roots']:,} roots: the {corpus['topics']:,} questions' "
             f"topics plus {corpus['roots'] - corpus['topics']:,} others), template sentences, `embed.model: static`; "
             f"stages {corpus['verbalize']} / {corpus['embed']} / {corpus['index']} s (verbalize / embed / index)",
             "- questions: MetaQA dev, plain (brackets dropped), k 3x3; see bench/temporal.py for how the time-constrained set is derived",
             "- wrong period: share of the context's films that answer the question without its time expression but fall outside the range"]
    save_report("temporal", "Temporal filters (query.temporal) vs the default, MetaQA dev", facts, body)


if __name__ == "__main__":
    main()
