"""Zero-shot retrieval settings one at a time (--key), foremost the synthetic prior's terms that read a
path's words against the question's: word coverage (query.synthetic.coverage: each word of a path's
question should be one the question speaks of), answer focus (query.synthetic.focus: the path's last
step should be the relation the words beside the question's wh-word name) or relation mentions
(query.synthetic.mention_hops: a question asks for as many steps as relations it names, where its word count
says fewer); and the walk places (query.unnamed_walks: the top nodes the question names show the
places of those it does not). On MetaQA dev, plain
questions, zero-shot: the setting off against the default, with MetaQA's phrase map and with
automatic phrases for the path questions, on the eval's 1,000-question sample per hop count (where
the defaults were chosen) and on 1,500 other dev questions per hop count (not looked at while
choosing); with `--test`, on MetaQA test, once (the eval's 1,000 test questions per hop count;
nothing chosen there).

    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/path_words.py --warehouse /tmp/s19/mq --name metaqa
                                                                   # bench/results/path_words.md, ~15 min
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/path_words.py --warehouse /tmp/s19/mq --name metaqa --test
                                                                   # bench/results/path_words_test.md
    git worktree add --detach /tmp/kgwalk-base 8dd7f64             # "has" was a content word there
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/path_words.py --warehouse /tmp/s19/mq --name metaqa \
        --baseline-src /tmp/kgwalk-base --report path_words_function_words      # (run at f7d705d)
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/path_words.py --warehouse /tmp/s19/mq --name metaqa \
        --key synthetic.focus [--test]                             # bench/results/answer_focus[_test].md
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/path_words.py --warehouse /tmp/s19/mq --name metaqa \
        --key synthetic.mention_hops --baseline-src /tmp/kgwalk-base [--test] # bench/results/relation_mentions[_test].md
    git worktree add --detach /tmp/kgwalk-base fa5778f             # diversity ends, k_walks per node
    flock /tmp/kgwalk-heavy.lock .venv/bin/python bench/path_words.py --warehouse /tmp/s19/mq --name metaqa \
        --key unnamed_walks --baseline-src /tmp/kgwalk-base [--test] # bench/results/walk_places[_test].md

With `--baseline-src` (a checkout of older kgwalk, e.g. `git worktree add --detach /tmp/kgwalk-base
<ref>`), that code's default rows run beside these, in the same alternation.

Each row is its own process (`--row`), before and after alternating; every process asks its
questions twice with one retriever, in walk mode (the retrieval API: context recall@3 of its
3 x 3 walks) and in ego mode (`kgwalk answer`'s context: its answer-set recall); the ranking, and
so extractive Hits@1, is the same in both. The warehouse is any MetaQA corpus; the rows force
query.rerank=synthetic, so a fitted prior there is not used.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from common import DATA
from report import git_head, save_report

from kgwalk.eval.metaqa import Question, load_questions, question_file, sample, score_retrieval
from kgwalk.query import Retriever

HOPS = (1, 2, 3)
PHRASES = {"map": ("MetaQA's phrase map", []), "automatic": ("automatic (verbalize.phrases emptied)", ["verbalize.phrases={}"])}
QUESTIONS = {"sample": "the eval's 1,000 per hop count (chosen on)", "other": "1,500 other dev questions per hop count",
             "test": "MetaQA **test**: the eval's 1,000 per hop count, once"}
SETTING = {"off": "off", "default": "the default"}
OFF = {"unnamed_walks": "null"}  # a setting's value in its off rows where not 0
# per term: the results file, its title, and what it does
TERMS = {
    "synthetic.coverage": ("path_words", "The synthetic prior's word coverage (query.synthetic.coverage)",
                           "coverage: per path, the mean over its question's content words (read from the answer) of the best match among the "
                           "question's (cosine of embed.model's word vectors; 1 for one stem); the path's cosine gains query.synthetic.coverage x that"),
    "synthetic.focus": ("answer_focus", "The synthetic prior's answer focus (query.synthetic.focus)",
                        "focus: the question's content words weighted by nearness to its wh-word (0.3 per rank); per step of a path, their "
                        "weighted best match among the words of the step's relation phrases (both ways); the path's cosine gains "
                        "query.synthetic.focus x (its last step's less the mean over its steps)"),
    "synthetic.mention_hops": ("relation_mentions", "The synthetic prior's step count from relation mentions (query.synthetic.mention_hops)",
                     "mentions: the relations a question names by words of the KG's relation phrases (per relation, its most repeated "
                     "word; a compound's last part counts); a path loses query.synthetic.hop_weight per step it differs from the larger of "
                     "content words / query.synthetic.words_per_hop and query.synthetic.mention_hops x mentions (off: the words alone)"),
    "unnamed_walks": ("walk_places", "Walk places for the nodes a question names (query.unnamed_walks)",
                      "walk places: where the question names some of the 3 top nodes (hybrid search), each other one shows "
                      "query.unnamed_walks walks (1), in ego mode its ego-graph is built from that walk, and the named ones share the places freed (off: 3 each, the paper's); "
                      "query.diversity paths (the default with it; the baseline's ends) passes over a walk whose relation path "
                      "from its root a shown walk has, since that walk's answer-set list names the other ends"),
}


def questions(hops: int, which: str) -> list[Question]:
    every = load_questions(question_file(DATA, hops, "test" if which == "test" else "dev"))
    chosen = sample(every, 1000)  # what `kgwalk eval --limit 1000` asks
    if which != "other":
        return chosen
    seen = {q.text for q in chosen}
    return sample([q for q in every if q.text not in seen], 1500, seed=1)


def run_row(warehouse: str, name: str, key: str, phrases: str, which: str, setting: str) -> list[dict]:
    settings = ["query.rerank=synthetic", *([f"query.{key}={OFF.get(key, 0)}"] if setting == "off" else []), *PHRASES[phrases][1]]
    retriever = Retriever.from_config(None, settings, name=name, warehouse=warehouse)
    retriever.warm_up()
    rows = []
    for hops in HOPS:
        asked = questions(hops, which)
        for mode in ("walks", "ego"):
            class InMode:  # score_retrieval asks in the configured mode; this row's asks in `mode`
                @staticmethod
                def retrieve(text: str, k_nodes: int | None = None, k_walks: int | None = None):
                    return retriever.retrieve(text, k_nodes, k_walks, mode=mode)

            rows.append({"mode": mode} | asdict(score_retrieval(InMode(), asked, hops, plain=True)))
    return rows


def tabulate(results: dict[tuple[str, str, str, str], list[dict]], commit: str, key: str, test: bool, report: str | None) -> None:
    name, title, what = TERMS[key]
    body = [f"| path questions | questions | kgwalk | {key.removeprefix('synthetic_')} | extractive Hits@1 (1/2/3) | Hits@1 mean | context recall@3, walks (1/2/3) "
            "| context recall, answer's context (1/2/3) | multi-answer answer-set recall, walks (1/2/3) "
            "| multi-answer answer-set recall, answer's context (1/2/3) | context characters, walks (1/2/3) | retrieval ms p50, walks (1/2/3) |",
            "|---|---|---|---|---|---:|---|---|---|---|---|---|"]
    for (phrases, which, source, setting), rows in results.items():
        walks = [r for r in rows if r["mode"] == "walks"]
        ego = [r for r in rows if r["mode"] == "ego"]

        def per_hop(rs: list[dict], key: str) -> str:
            return " / ".join(f"{r[key]:.3f}" for r in rs)

        mean = 100 * sum(r["extractive_hits1"] for r in walks) / len(walks)
        p50 = " / ".join(f"{r['latency_ms']['retrieval']['p50']:.1f}" for r in walks)
        chars = " / ".join(f"{r['context_chars']:.0f}" for r in walks)
        body.append(f"| {PHRASES[phrases][0]} | {QUESTIONS[which]} | {source} | {SETTING[setting]} | {per_hop(walks, 'extractive_hits1')} | {mean:.1f} "
                    f"| {per_hop(walks, 'context_recall')} | {per_hop(ego, 'context_recall')} | {per_hop(walks, 'multi_answer_recall')} "
                    f"| {per_hop(ego, 'multi_answer_recall')} | {chars} | {p50} |")
    facts = [
        "- measured " + time.strftime("%Y-%m-%d") + f"; kgwalk git {commit}; MetaQA **{'test' if test else 'dev'}**, plain questions (brackets dropped), zero-shot "
        "(query.rerank=synthetic, no labelled data); the whole MetaQA KB's corpus (static walk vectors, MiniLM prior encoder, `paths` BFS)",
        f"- {what}",
        "- the phrase setting changes the prior's path questions only: walk texts and vectors are the corpus's (phrase map)",
        "- walks: the retrieval API's 3 x 3 walks with their answer-set lists; answer's context: ego mode, the top nodes' ego-graph lines "
        "(what `kgwalk answer` reads); multi-answer: questions with more than one gold answer",
        "- one process per row, before and after alternating, under the heavy-job lock; 2 shared cores",
    ]
    facts += [f"- {label}: that commit's code at its defaults, run from its own checkout"
              for label in dict.fromkeys(key[2] for key in results) if label.startswith("baseline")]
    split = "test once" if test else "dev"
    save_report(report or (f"{name}_test" if test else name), f"{title}, MetaQA {split}, zero-shot", facts, body)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", required=True)
    p.add_argument("--name", required=True, help="a MetaQA corpus")
    p.add_argument("--baseline-src", help="a checkout of older kgwalk: its rows at its defaults beside these")
    p.add_argument("--key", choices=list(TERMS), default="synthetic.coverage", help="the setting off (0; OFF's value) in the rows beside the defaults")
    p.add_argument("--test", action="store_true", help="MetaQA test, once: bench/results/<the term's name>_test.md")
    p.add_argument("--report", help="the results file's name (default: the term's, e.g. path_words; path_words_test with --test)")
    p.add_argument("--row", nargs=3, metavar=("PHRASES", "QUESTIONS", "SETTING"), help="run one row, print its JSON")
    args = p.parse_args()
    if args.row:
        print(json.dumps(run_row(args.warehouse, args.name, args.key, *args.row)))
        return
    commit = git_head(Path(__file__).parent)
    runs = [(f"baseline ({git_head(args.baseline_src)})", args.baseline_src, "default")] if args.baseline_src else []
    runs += [(f"this checkout ({commit})", None, setting) for setting in SETTING]
    results = {}
    for phrases in PHRASES:
        for which in ["test"] if args.test else ["sample", "other"]:
            for source_label, source, setting in runs:
                command = [sys.executable, __file__, "--warehouse", args.warehouse, "--name", args.name, "--key", args.key,
                           "--row", phrases, which, setting]
                env = dict(os.environ, PYTHONPATH=source) if source else None
                done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env)
                results[(phrases, which, source_label, setting)] = json.loads(done.stdout.splitlines()[-1])
                print(phrases, which, source_label, setting, "done", flush=True)
    tabulate(results, commit, args.key, args.test, args.report)


if __name__ == "__main__":
    main()
