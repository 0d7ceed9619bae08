"""Topic-entity linking on MetaQA dev from the label lexicon alone (no embeddings): bracketed vs
plain questions, the lexicon of a git revision (baseline) vs the working tree's, in one run; and
the automatic relation phrases of both revisions for real relation names.

    .venv/bin/python bench/zero_shot_linking.py [--baseline HEAD] [--limit N]

Questions: qa_dev per hop (never test), the first `limit` lines if given. Variants of what a user types:
`bracketed` (MetaQA's own `who directed [Kismet]`), `plain` (brackets stripped), `plain lower`
(also lower-cased), and `plain, _ labels`: the KG spelling its labels with underscores
(`Abra_Catastrophe!`-style: every space in an entity label replaced by `_`) while the user types
spaces. Per variant: recall (the topic among the linked entities), top-1 (it is the first),
extra (share of questions with some other entity linked), links per question, the lexicon's
p50/p99 per question. Topics absent from the KG (MetaQA's dev has a few) count as misses.

Writes bench/results/zero_shot_linking.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from report import save_report

from kgwalk.eval.metaqa import METAQA_DIR, Question, load_questions, question_file
from kgwalk.kg.ingest import build_tables
from kgwalk.kg.readers import read_kg
from kgwalk.kg.relations import inverse_relation_pairs

ROOT = Path(__file__).resolve().parents[1]
HOPS = (1, 2, 3)
_BRACKETS = re.compile(r"\[([^\[\]]+)\]")


# Relation names as KGs spell them: MetaQA's, `kgwalk synth`'s, and others seen in the wild.
RELATION_NAMES = [
    "directed_by", "written_by", "starred_actors", "has_tags", "in_language", "release_year", "plays_for_country",
    "plays_for_country_inverse", "aged", "people.person.gender", "film.film.directed_by", "isPartOf", "birthPlace",
    "http://dbpedia.org/ontology/birthPlace", "capital_of", "located_in", "headquartered_in", "plays_for", "has_ceo",
]


def module_at(revision: str, path: str):
    """A module of kgwalk as it was at `revision`, imported under a name of its own."""
    source = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    name = Path(path).stem + "_baseline"
    file = Path(tempfile.mkdtemp()) / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


def make_lexicon(module, entities: pa.Table, relations: pa.Table):
    try:
        return module.EntityLexicon(entities, relations)
    except TypeError:  # a lexicon from before relation names were read
        return module.EntityLexicon(entities)


def score(lexicon, questions: list[Question], texts: list[str]) -> dict[str, float]:
    recall = top1 = extra = links = 0
    ms = []
    for q, text in zip(questions, texts):
        start = time.perf_counter()
        found = [m.entity for m in lexicon.mentions(text)]
        ms.append((time.perf_counter() - start) * 1000)
        recall += q.topic in found
        top1 += bool(found) and found[0] == q.topic
        extra += any(e != q.topic for e in found)
        links += len(found)
    n = len(questions)
    return {"recall": recall / n, "top1": top1 / n, "extra": extra / n, "links": links / n,
            "p50": float(np.percentile(ms, 50)), "p99": float(np.percentile(ms, 99))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="HEAD", help="git revision of the baseline lexicon")
    parser.add_argument("--limit", type=int, help="dev questions per hop (default: all)")
    args = parser.parse_args()

    tables = build_tables(read_kg(METAQA_DIR / "kb.txt"), "metaqa")
    entities, relations = tables.entities, tables.relations
    src, dst = tables.edges.column("src").to_numpy(), tables.edges.column("dst").to_numpy()
    loop = src == dst
    loop_only = np.setdiff1d(src[loop], np.concatenate([src[~loop], dst[~loop]]))
    underscored = entities.set_column(2, "label", pc.replace_substring(entities.column("label"), " ", "_"))
    import kgwalk.query.lexicon as candidate

    baseline = module_at(args.baseline, "kgwalk/query/lexicon.py")
    lexicons = {
        name: {"labels": make_lexicon(module, entities, relations), "_ labels": make_lexicon(module, underscored, relations)}
        for name, module in (("baseline", baseline), ("candidate", candidate))
    }
    rows = []
    for hops in HOPS:
        questions = load_questions(question_file(METAQA_DIR, hops, "dev"))[: args.limit or None]
        bracketed = [q.text for q in questions]
        plain = [_BRACKETS.sub(r"\1", t) for t in bracketed]
        variants = [("bracketed", "labels", bracketed), ("plain", "labels", plain),
                    ("plain lower", "labels", [t.lower() for t in plain]), ("plain, _ labels", "_ labels", plain)]
        for variant, which, texts in variants:
            for name in ("baseline", "candidate"):
                s = score(lexicons[name][which], questions, texts)
                rows.append(f"| {hops} | {variant} | {name} | {s['recall']:.3f} | {s['top1']:.3f} | {s['extra']:.3f} | {s['links']:.2f} "
                            f"| {s['p50']:.2f} / {s['p99']:.2f} |")
                print(rows[-1], file=sys.stderr)
    from kgwalk.verbalize import template

    old_template = module_at(args.baseline, "kgwalk/verbalize/template.py")
    phrases = [f"| `{r}` | {' / '.join(old_template.fallback_phrases(r))} | {' / '.join(template.fallback_phrases(r))} |" for r in RELATION_NAMES]
    save_report(
        "zero_shot_linking",
        "Topic-entity linking from the label lexicon on plain questions (MetaQA dev)",
        [f"- MetaQA dev, {f'first {args.limit}' if args.limit else 'all'} questions per hop; KB {entities.num_rows:,} entities, {relations.num_rows} relations",
         f"- baseline: kgwalk/query/lexicon.py at `{args.baseline}`; candidate: the working tree; same questions, one run",
         ("- recall: topic among linked entities (a topic absent from the KB, 1% of 2-hop dev, is a miss); top-1: topic linked first; "
         "extra: questions with a non-topic entity linked"),
         (f"- the KB's self-loops: {int(loop.sum())} edges; {len(loop_only)} entities whose only edges are self-loops (no walk before, "
         f"a walk per loop now); explicit inverse relation pairs: {len(inverse_relation_pairs(relations))}")],
        ["| hops | questions | lexicon | recall | top-1 | extra | links/q | lexicon ms p50 / p99 |",
         "|---|---|---|---|---|---|---|---|", *rows, "",
         "## Automatic relation phrases (no `verbalize.phrases` map): forward / inverse", "",
         "`{}` marks where the next entity goes (\"Turkey is the country Dirk_KUYT plays for\").", "",
         "| relation | baseline | candidate |", "|---|---|---|", *phrases],
    )


if __name__ == "__main__":
    main()
