"""How often the synthetic prior's step count (query.synthetic.hop_weight's target) names the right walk
length, on each development set and MetaQA dev: the share of questions with n steps whose
estimate is nearest n among 1-3 (a walk's lengths at walks.depth 3). No retrieval: the estimate
alone, from the question with its topic masked and the KG's relation phrases, as
SyntheticPrior.expected_hops reads them (no phrase map, the relation names' own words).

Rows: content words alone (words_per_hop), with relation mentions (mention_hops, the default),
and with the phrases a nested question links (link_hops): value x (links + 1), the rule until
the link count was narrowed, and value x links, the rule now.
Content words per step fall with the step count on every set here (a 3-step question spends
fewer a step than a 1-step one), so no words_per_hop fits them all; the links count the steps of
a nested question.

    .venv/bin/python bench/dev_sets.py --out /tmp/devsets/data ...   # the sets (see zero_shot_dev.py)
    .venv/bin/python bench/hop_estimate.py --data /tmp/devsets/data   # bench/results/hop_estimate.md, seconds
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from common import DATA, DEV_SETS, HOPS
from report import save_report

from kgwalk.query.corpus_paths import phrase_words
from kgwalk.query.paths import masked_question
from kgwalk.query.words import expected_hops, linked_phrases, relation_mentions, relation_word_matches
from kgwalk.verbalize.template import TemplateVerbalizer

class Counts:
    """A question's counts: content words, relations named (on its KG's relation phrases), phrases linked."""

    def __init__(self, kb: Path) -> None:
        relations = sorted({line.split("|")[1] for line in kb.read_text(encoding="utf-8").splitlines() if line.count("|") >= 2})
        self.relations_of: dict[str, list[str]] = {}
        for relation in relations:
            for word in dict.fromkeys(phrase_words(relation, False, TemplateVerbalizer({}))):
                self.relations_of.setdefault(word, []).append(relation)
        self.matches: dict[str, dict[str, frozenset[str]]] = {}

    def _match(self, word: str) -> dict[str, frozenset[str]]:
        if word not in self.matches:
            self.matches[word] = relation_word_matches(word, self.relations_of)
        return self.matches[word]

    def of(self, line: str) -> tuple[float, int, int]:
        masked = masked_question(line.split("\t")[0], [])
        return expected_hops(masked, 1.0), relation_mentions(masked, self._match), linked_phrases(masked)


Estimate = Callable[[float, int, int], float]


def estimates() -> dict[str, Estimate]:
    rows: dict[str, Estimate] = {
        "content words / 1.75": lambda words, mentions, links: words / 1.75,
        "... or 0.9 x relations named (the default before link_hops)": lambda words, mentions, links: max(words / 1.75, 0.9 * mentions),
    }
    for value in (0.6, 0.65, 0.7, 0.75, 0.8):
        rows[f"... or {value} x (links + 1)"] = (
            lambda words, mentions, links, value=value: max(words / 1.75, 0.9 * mentions, value * (links + 1)))
    for value in (0.9, 1.0, 1.1):
        rows[f"... or {value} x links"] = lambda words, mentions, links, value=value: max(words / 1.75, 0.9 * mentions, value * links)
    return rows


def nearest_length(estimate: float) -> int:
    return min(HOPS, key=lambda n: (abs(n - estimate), n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="bench/dev_sets.py's --out")
    args = parser.parse_args()
    sets = {name: (args.data / name / "kb.txt", {n: args.data / name / f"dev-{n}hop.txt" for n in HOPS}) for name in DEV_SETS}
    sets["MetaQA"] = (DATA / "kb.txt", {n: DATA / f"{n}-hop" / "qa_dev.txt" for n in HOPS})
    counts: dict[str, dict[int, list[tuple[float, int, int]]]] = {}
    for name, (kb, files) in sets.items():
        reader = Counts(kb)
        counts[name] = {n: [reader.of(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
                        for n, path in files.items()}

    body = ["Questions of each step count (dev files; MetaQA: qa_dev, all): their mean content words (topic and function",
            "words left out), relations named and phrases linked.", "",
            "| set | steps | questions | content words | a step | relations named | phrases linked |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, by_steps in counts.items():
        for n, rows in by_steps.items():
            words, mentions, links = (sum(r[i] for r in rows) / len(rows) for i in range(3))
            body.append(f"| {name} | {n} | {len(rows):,} | {words:.2f} | {words / n:.2f} | {mentions:.2f} | {links:.2f} |")
    header = " | ".join(f"{name} {n}" for name in counts for n in HOPS)
    body += ["", "The share of questions whose estimate is nearest their step count (1-3), and its mean over every set's three step counts:", "",
             f"| estimate | {header} | mean |", "|---|" + "---:|" * (3 * len(counts) + 1)]
    for label, estimate in estimates().items():
        shares = [sum(nearest_length(estimate(*r)) == n for r in rows) / len(rows) for by_steps in counts.values() for n, rows in by_steps.items()]
        body.append(f"| {label} | " + " | ".join(f"{s:.2f}" for s in shares) + f" | {sum(shares) / len(shares):.3f} |")
    save_report("hop_estimate", "The synthetic prior's step count against each question's steps",
                [f"- data: {args.data} (bench/dev_sets.py) and MetaQA dev; no retrieval, the estimate alone"], body)


if __name__ == "__main__":
    main()
