"""Development question sets besides MetaQA (issue 42), written to a folder: each a KB and its
questions, generated from hand-written templates with answers computed from the KB.

    .venv/bin/python bench/dev_sets.py --out /tmp/devsets/data [--seed 0]

writes, per set (synth, synth-dbpedia, synth-places, metaqa-dotted, metaqa-opaque, metaqa-upper, metaqa-ids:
kgwalk/eval/dev_templates.py; people, people-freebase: kgwalk/eval/people.py; football, football-verbs:
kgwalk/eval/football.py):

    <out>/<set>/kb.txt                       head|relation|tail
    <out>/<set>/dev.txt, held.txt            1- to 3-step questions, `question with [topic]<TAB>answer|answer`
    <out>/<set>/dev-1hop.txt ... held-3hop.txt   the same by step count
    <out>/<set>/dev-conj.txt, held-conj.txt  questions naming two topics: what both lead to
    <out>/<set>/stats.json                   questions per split, step count and style; the KB's size

and <out>/sets.md, the same counts as a table. dev is for tuning; held (30% of the topics, by a
seeded hash of the label) is never tuned on. The same arguments give the same files. MetaQA's KB
is read (its question files are not); the synthetic KG is `kgwalk synth --edges <synth-edges> --seed <seed>`.
Questions whose relation path passes through a node of more than --hub-degree edges are left out:
walks never pass through such hubs (walks.hub_degree), so their answers would be on no walk of the
topic's and they would measure the walks, not the ranking.

`--wordings fresh` (or `fresh2` to `fresh10`) writes the MetaQA, people and football sets again with the same paths and topics in
words the dev templates never used (kgwalk/eval/*_REWORDINGS), to another folder: the same KB files, so
bench/zero_shot_dev.py evaluates them on the corpora already built, and each question's topic is asked in both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import get_args

from common import DATA

from kgwalk.eval.dev_templates import metaqa_sets, synth_sets
from kgwalk.eval.devsets import DevSet, Wordings, read_triples
from kgwalk.eval.football import football_sets
from kgwalk.eval.people import people_sets
from kgwalk.kg.synth import parse_size, synth_kg

GROUPS = ("1-hop", "2-hop", "3-hop", "conj")
STYLES = ("terse", "plain", "verbose", "passive", "nested", "possessive")


def summary(sets: list[DevSet]) -> list[str]:
    """The sets' sizes as a Markdown table: KB, then questions per split and group."""
    lines = ["| set | KB edges | entities | relations | " + " | ".join(f"{s} {g}" for s in ("dev", "held") for g in GROUPS) + " | topics with punctuation |",
             "|---|---:|---:|---:|" + "---:|" * (2 * len(GROUPS)) + "---:|"]
    for s in sets:
        stats = s.stats()
        kb, counts = stats["kb"], stats["questions"]
        per_group = [counts[f"{split} by group"].get(g, 0) for split in ("dev", "held") for g in GROUPS]
        lines.append(f"| {s.name} | {kb['edges']:,} | {kb['entities']:,} | {kb['relations']} | " + " | ".join(map(str, per_group))
                     + f" | {stats['punctuated_topics']} |")
    return lines


def styles(sets: list[DevSet]) -> list[str]:
    """Questions per step count and style (dev + held), one row per distinct question set."""
    lines = ["| questions of | group | " + " | ".join(STYLES) + " |", "|---|---|" + "---:|" * len(STYLES)]
    seen = set()
    for s in sets:
        if id(s.questions) in seen:
            continue
        seen.add(id(s.questions))
        for g in GROUPS:
            counts = {style: sum(q.group == g and q.style == style for q in s.questions) for style in STYLES}
            lines.append(f"| {s.name} | {g} | " + " | ".join(str(counts[style]) for style in STYLES) + " |")
    return lines



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder to write the sets to")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--synth-edges", default="60k", help="size of the synthetic KG (default 60k)")
    parser.add_argument("--per-path", type=int, default=40, help="questions per relation path template (default 40)")
    parser.add_argument("--per-conjunction", type=int, default=60, help="questions per two-topic template (default 60)")
    parser.add_argument("--hub-degree", type=int, default=50,
                        help="pass over questions whose path goes through a node of more edges (walks.hub_degree's default; 0: keep all)")
    parser.add_argument("--metaqa", default=str(DATA), help="MetaQA's folder (its kb.txt is read)")
    parser.add_argument("--wordings", choices=get_args(Wordings), default="dev",
                        help="fresh, fresh2 ... fresh10: the same paths and topics in other words (*_REWORDINGS; no synth sets, no two-topic "
                             "questions), for checking that a figure is the KG's, not the dev templates'")
    args = parser.parse_args()
    hubs = args.hub_degree or None
    sets = []
    if args.wordings == "dev":
        table = synth_kg(parse_size(args.synth_edges), args.seed)
        synth = list(zip(*(table.column(c).to_pylist() for c in ("head", "relation", "tail"))))
        sets += synth_sets(synth, args.seed, args.per_path, args.per_conjunction, hubs)
    sets += metaqa_sets(list(read_triples(Path(args.metaqa) / "kb.txt")), args.seed, args.per_path, args.per_conjunction, hubs,
                        wordings=args.wordings)
    sets += people_sets(args.seed, args.per_path, args.per_conjunction, hubs, wordings=args.wordings)
    sets += football_sets(args.seed, args.per_path, args.per_conjunction, hubs, wordings=args.wordings)
    out = Path(args.out)
    for s in sets:
        counts = s.stats()["questions"]
        print(f"{s.write(out)}: {json.dumps(counts['dev by group'])} dev, {json.dumps(counts['held by group'])} held")
    report = ["# Development sets", "", f"`python bench/dev_sets.py --out {args.out} --seed {args.seed} --synth-edges {args.synth_edges} "
              f"--per-path {args.per_path} --per-conjunction {args.per_conjunction} --hub-degree {args.hub_degree} --wordings {args.wordings}`", "", *summary(sets), "", *styles(sets)]
    (out / "sets.md").write_text("\n".join(report) + "\n")
    print("\n".join(report))


if __name__ == "__main__":
    main()
