"""Calibrate query.weak_cosine, the 'no good match' signal: a retrieval says it found no good match
where the question names no entity of the KG and its best walk's cosine is below the threshold.

    .venv/bin/python bench/no_good_match.py --warehouse /tmp/mq --name metaqa [--per-hop 300]

On MetaQA dev (plain questions, as users type them) and on off-topic questions no KG of films can
answer (written here; a control, not tuning data for ranking), it records each retrieval's best walk
cosine and whether the question named an entity, and reports how many of each the signal flags at
candidate thresholds. The threshold chosen is the largest at which the signal flags under 1% of dev
questions (every one of them answerable); it writes bench/results/no_good_match.md.
"""

from __future__ import annotations

import argparse

import numpy as np
from common import DATA
from report import save_report

from kgwalk.eval.metaqa import load_questions, question_file, sample
from kgwalk.query import Retriever
from kgwalk.query.steps import names_an_entity

OFF_TOPIC = [
    "?!?", "asdf qwerty zxcv", "hello", "what is the boiling point of water", "how many legs does a spider have",
    "what is the capital of australia", "how do i bake sourdough bread", "what is 17 times 23", "which planet is largest",
    "how tall is mount everest", "who invented the telephone", "what is the speed of light", "how do vaccines work",
    "what causes rain", "how many bones are in the human body", "what is the chemical symbol for gold",
    "which ocean is the deepest", "how do i reset my router", "what is the population of tokyo", "when do swallows migrate",
    "what is photosynthesis", "how far is the moon", "what language is spoken in brazil", "how do magnets work",
    "recommend a good laptop under 1000 dollars", "what is the interest rate on a mortgage", "fix my python import error",
    "what's the weather tomorrow", "translate good morning to german", "how many calories in an apple",
    "what time zone is chicago in", "define entropy", "who won the 2010 world cup", "what is the gdp of france",
    "how do i change a flat tire", "is coffee bad for you", "what is a prime number", "how do bees make honey",
    "what is the tallest building in the world", "explain quantum entanglement",
]
THRESHOLDS = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65]


def observe(retriever: Retriever, questions: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per question: the best walk's cosine, and whether it names an entity of the KG as the signal reads it."""
    cosines, named = [], []
    for q in questions:
        r = retriever.retrieve(q)
        cosines.append(r.best.cosine if r.best else -1.0)
        named.append(any(map(names_an_entity, retriever.lexicon.mentions(q))))
    return np.array(cosines), np.array(named)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--warehouse", required=True)
    p.add_argument("--name", default="metaqa")
    p.add_argument("--per-hop", type=int, default=300)
    args = p.parse_args()
    retriever = Retriever.from_config(None, None, name=args.name, warehouse=args.warehouse)
    dev = [q.plain for h in (1, 2, 3) for q in sample(load_questions(question_file(DATA, h, "dev")), args.per_hop)]
    dev_cos, dev_named = observe(retriever, dev)
    off_cos, off_named = observe(retriever, OFF_TOPIC)
    flagged_dev = {t: ((~dev_named) & (dev_cos < t)).mean() for t in THRESHOLDS}
    chosen = max((t for t in THRESHOLDS if flagged_dev[t] < 0.01), default=min(THRESHOLDS))
    body = ["| threshold | dev flagged by cosine alone | dev flagged (no entity named, cosine below) | off-topic flagged |",
            "|---:|---:|---:|---:|"]
    for t in THRESHOLDS:
        mark = " (chosen)" if t == chosen else ""
        body.append(f"| {t}{mark} | {(dev_cos < t).mean():.3f} | {((~dev_named) & (dev_cos < t)).mean():.3f} | "
                    f"{((~off_named) & (off_cos < t)).mean():.3f} |")
    body += ["", f"- dev: best-walk cosine p1 {np.percentile(dev_cos, 1):.3f}, p5 {np.percentile(dev_cos, 5):.3f}, median {np.median(dev_cos):.3f}; "
             f"{dev_named.mean():.3f} name an entity",
             f"- off-topic: best-walk cosine median {np.median(off_cos):.3f}, max {off_cos.max():.3f}; {off_named.mean():.3f} name an entity "
             f"(named, as the signal reads it: {', '.join(q for q, n in zip(OFF_TOPIC, off_named) if n) or 'none'})"]
    save_report("no_good_match", "The 'no good match' signal: query.weak_cosine on MetaQA dev",
                [f"- {len(dev)} plain MetaQA dev questions ({args.per_hop} per hop count, sampled as `kgwalk eval` does), "
                 f"{len(OFF_TOPIC)} off-topic questions; the whole MetaQA KB's default corpus",
                 f"- chosen: the largest threshold at which the signal flags under 1% of dev questions (all answerable): {chosen}"], body)
    retriever.close()


if __name__ == "__main__":
    main()
