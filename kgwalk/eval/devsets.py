"""Development question sets generated from a KG's own triples: questions written by hand per
relation path, answers computed from the KG.

A `PathQuestions` is a relation path from a topic (`Path`: which nodes may start it, and its steps,
each a relation walked forwards or backwards and which nodes it may land on) with templates in
several styles. Its questions take topics the path starts from, in a seeded order, and as answers
every node the path reaches from the topic by a simple path, as a walk goes: no node twice, the topic
not again ("the other films of the director of X" leave X out). A `Conjunction` names two topics and
asks for what both of its paths reach: the answers are the intersection, and both topics must narrow it.

With `hub_degree`, a question whose path passes through a node of more edges than that (a hub:
`walks.hub_degree`, whose walks end at hubs but never pass through them) is passed over, so that
its answers are on the topic's walks and what the set measures is the ranking.

Questions are split by topic entity (the first topic of a conjunction), so no topic of a held
question is asked about in dev: `dev_share` of the topics go to dev, by a seeded hash of the label.
Everything is deterministic in (KG, templates, seed).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path as FilePath
from typing import Literal

import numpy as np

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64

MAX_ANSWERS = 20
DEV_SHARE = 0.7
_UNWRITABLE = re.compile(r"[\[\]|\t\n]")  # a label with these cannot stand in a question line


@dataclass(frozen=True)
class Kind:
    """Which nodes a path may start from or a step land on: a label that `label` (a regex) is found
    in, and at least one of the edges `has` names ("rel>": the node is a head of rel, "<rel": a tail)."""

    label: str | None = None
    has: tuple[str, ...] = ()


ANY = Kind()


@dataclass(frozen=True)
class Step:
    relation: str
    forward: bool = True  # head to tail; False: tail to head
    lands: Kind = ANY

    @property
    def signature(self) -> str:
        return f"{self.relation}>" if self.forward else f"<{self.relation}"


def step(signature: str, lands: Kind = ANY) -> Step:
    """A step from its signature: "directed_by>" walks head to tail, "<directed_by" tail to head."""
    if signature.endswith(">"):
        return Step(signature[:-1], True, lands)
    if signature.startswith("<"):
        return Step(signature[1:], False, lands)
    raise ValueError(f"a step is 'relation>' or '<relation', got {signature!r}")


@dataclass(frozen=True)
class Path:
    start: Kind
    steps: tuple[Step, ...]

    @property
    def hops(self) -> int:
        return len(self.steps)

    def reversed(self) -> Path:
        """The same edges walked from the other end: its start is this one's last landing, each step lands where
        this one's step before it started."""
        kinds = [self.start, *(s.lands for s in self.steps)]
        back = tuple(Step(s.relation, not s.forward, kinds[i]) for i, s in reversed(list(enumerate(self.steps))))
        return Path(kinds[-1], back)


def path(start: Kind, *steps: str | Step) -> Path:
    return Path(start, tuple(s if isinstance(s, Step) else step(s) for s in steps))


@dataclass(frozen=True)
class PathQuestions:
    """Questions about one topic (`{e}` in each template) whose answers are where `path` leads."""

    name: str
    path: Path
    templates: tuple[tuple[str, str], ...]  # (style, text with {e})


@dataclass(frozen=True)
class Conjunction:
    """Questions naming two topics, `{a}` and `{b}`: the answers are what `first` reaches from a and `second` from b."""

    name: str
    first: Path
    second: Path
    templates: tuple[tuple[str, str], ...]  # (style, text with {a} and {b})


class Kb:
    """A KG's triples as adjacency lists, by label, for walking relation paths."""

    def __init__(self, triples: Iterable[tuple[str, str, str]]) -> None:
        self._next: dict[tuple[str, bool], dict[str, set[str]]] = {}
        self.degree: Counter[str] = Counter()  # edges at a node, both directions (the walks' hub rule counts these)
        for head, relation, tail in dict.fromkeys(triples):
            self._next.setdefault((relation, True), {}).setdefault(head, set()).add(tail)
            self._next.setdefault((relation, False), {}).setdefault(tail, set()).add(head)
            self.degree.update((head, tail))

    @classmethod
    def read(cls, path: str | FilePath) -> Kb:
        return cls(read_triples(path))

    @property
    def relations(self) -> list[str]:
        return sorted({relation for relation, _ in self._next})

    def _nodes(self, signature: str) -> dict[str, set[str]]:
        s = step(signature)
        return self._next.get((s.relation, s.forward), {})

    def is_kind(self, node: str, kind: Kind) -> bool:
        if kind.label is not None and re.search(kind.label, node) is None:
            return False
        return not kind.has or any(node in self._nodes(signature) for signature in kind.has)

    def starts(self, path: Path) -> list[str]:
        """The nodes `path` may start from, sorted."""
        first = path.steps[0]
        return sorted(n for n in self._next.get((first.relation, first.forward), {}) if self.is_kind(n, path.start))

    def frontiers(self, topic: str, path: Path) -> list[set[str]]:
        """The nodes each step of `path` reaches from `topic`, never through `topic` again."""
        out, frontier = [], {topic}
        for s in path.steps:
            edges = self._next.get((s.relation, s.forward), {})
            frontier = {n for node in frontier for n in edges.get(node, ()) if n != topic and self.is_kind(n, s.lands)}
            out.append(frontier)
        return out

    def reach(self, topic: str, path: Path) -> set[str]:
        """Every node `path` leads to from `topic` by a simple path: no node twice, `topic` included. A walk never passes a
        node again, so an answer reached only by going back (the nationality of the coach of a player's national team,
        where the coach is of that team's country) is on no walk of that path."""
        partial: set[tuple[str, ...]] = {(topic,)}
        for s in path.steps:
            edges = self._next.get((s.relation, s.forward), {})
            partial = {p + (n,) for p in partial for n in edges.get(p[-1], ()) if n not in p and self.is_kind(n, s.lands)}
        return {p[-1] for p in partial}

    def through_hub(self, topic: str, path: Path, hub_degree: int | None) -> bool:
        """Whether `path` from `topic` passes through a node of more than `hub_degree` edges on its way (None: never)."""
        return hub_degree is not None and any(self.degree[n] > hub_degree for f in self.frontiers(topic, path)[:-1] for n in f)


def read_triples(path: str | FilePath) -> Iterator[tuple[str, str, str]]:
    """`head|relation|tail` lines (MetaQA's kb.txt, `kgwalk synth --out x.txt`)."""
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("|")
            if len(parts) != 3:
                raise KgwalkError(f"{path} line {number}: expected head|relation|tail")
            yield parts[0], parts[1], parts[2]


@dataclass(frozen=True)
class DevQuestion:
    template: str  # text with {e}, or {a} and {b}
    topics: tuple[str, ...]
    answers: tuple[str, ...]  # sorted
    group: str  # "1-hop", "2-hop", "3-hop" or "conj"
    style: str
    source: str  # the PathQuestions' or Conjunction's name

    def line(self, label: Callable[[str], str] = str) -> str:
        """The question file line, with the labels as `label` spells them."""
        text = self.template
        for key, topic in zip(("{a}", "{b}") if len(self.topics) > 1 else ("{e}",), self.topics):
            text = text.replace(key, f"[{label(topic)}]")
        return f"{text}\t{'|'.join(label(a) for a in self.answers)}"


def _writable(labels: Iterable[str]) -> bool:
    return not any(_UNWRITABLE.search(label) for label in labels)


def path_questions(kb: Kb, spec: PathQuestions, count: int, rng: np.random.Generator, max_answers: int = MAX_ANSWERS,
                   hub_degree: int | None = None) -> list[DevQuestion]:
    """Up to `count` questions of `spec`, topics in a seeded order; topics with no answer or more
    than `max_answers`, or whose path passes a hub, are passed over. Styles take turns."""
    starts = kb.starts(spec.path)
    out: list[DevQuestion] = []
    for i in rng.permutation(len(starts)):
        topic = starts[i]
        answers = kb.reach(topic, spec.path)
        if not 1 <= len(answers) <= max_answers or not _writable([topic, *answers]) or kb.through_hub(topic, spec.path, hub_degree):
            continue
        style, template = spec.templates[len(out) % len(spec.templates)]
        out.append(DevQuestion(template, (topic,), tuple(sorted(answers)), f"{spec.path.hops}-hop", style, spec.name))
        if len(out) == count:
            break
    return out


def conjunction_questions(kb: Kb, spec: Conjunction, count: int, rng: np.random.Generator,
                          max_answers: int = MAX_ANSWERS, hub_degree: int | None = None) -> list[DevQuestion]:
    """Up to `count` questions of `spec`: a topic a, one of the nodes its path reaches, and a topic b
    from which `second` reaches that node too; kept where both topics narrow the answers."""
    starts, back = kb.starts(spec.first), spec.second.reversed()
    out: list[DevQuestion] = []
    for i in rng.permutation(len(starts) if count > 0 else 0):  # none asked: no topic is tried (the 10M-edge KG's 3.7M)
        a = starts[i]
        from_a = sorted(kb.reach(a, spec.first))
        if not from_a:
            continue
        meeting = from_a[int(rng.integers(len(from_a)))]
        bs = sorted(b for b in kb.reach(meeting, back) if b != a and kb.is_kind(b, spec.second.start))
        if not bs:
            continue
        b = bs[int(rng.integers(len(bs)))]
        from_b = kb.reach(b, spec.second)
        answers = set(from_a) & from_b - {a, b}
        if not 1 <= len(answers) <= max_answers or answers in (set(from_a), from_b) or not _writable([a, b, *answers]):
            continue
        if kb.through_hub(a, spec.first, hub_degree) or kb.through_hub(b, spec.second, hub_degree):
            continue
        style, template = spec.templates[len(out) % len(spec.templates)]
        out.append(DevQuestion(template, (a, b), tuple(sorted(answers)), "conj", style, spec.name))
        if len(out) == count:
            break
    return out


# Which templates a set's questions are written from: those the ranking was developed on, or one of two fresh
# wordings (per family, *_REWORDINGS) that ask the same paths of the same topics in other words, for checking: "fresh"
# was written after session 49's tuning and measured, "fresh2" written before any of fresh's misses were looked at,
# "fresh3" at session 51's start, before any change it could judge, and run once at its end; "fresh4" at session 53's
# start, before any of its misses were read; "fresh5" then by someone who had read none of the prior's word rules
# (only the paths), kept untuned: run at session 53's start and end, its misses not read; "fresh6" by another such
# writer at session 54's start, in styles the others lack (chatty, keyword, non-native, quiz), its misses read.
# "fresh7" written at session 58's start by a writer shown only the paths, its misses read (it is a development wording).
# "fresh8" written at session 61 by a writer shown only the paths, kept untuned (its misses not read).
# "fresh9" written at session 62 by a writer shown only the paths and the earlier wordings, its misses read (a development wording).
# "fresh10" written at session 65 by a writer shown only the paths, kept untuned (its misses not read).
Wordings = Literal["dev", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8", "fresh9", "fresh10"]
Rewordings = dict[str, dict[str, tuple[tuple[str, str], ...]]]  # wording -> path name -> (style, template with {e})


def worded(paths: Iterable[PathQuestions], conjunctions: Iterable[Conjunction], rewordings: Rewordings, wordings: Wordings) -> tuple[list[PathQuestions], list[Conjunction]]:
    """The paths and conjunctions to generate: as they are ("dev"), or the paths `rewordings[wordings]` rewords, each
    with those templates, and no conjunctions. A path keeps its name, so its questions take the same topics."""
    paths = list(paths)
    if wordings == "dev":
        return paths, list(conjunctions)
    fresh = rewordings[wordings]
    unknown = set(fresh) - {p.name for p in paths}
    if unknown:
        raise KgwalkError(f"{wordings} wordings for no path: {', '.join(sorted(unknown))}")
    return [replace(p, templates=fresh[p.name]) for p in paths if p.name in fresh], []


def is_dev(topic: str, seed: int, dev_share: float = DEV_SHARE) -> bool:
    """Whether questions about `topic` are in the dev split (else held): a seeded hash of its label."""
    return hash64(f"{seed}|{topic}") % 10_000 < dev_share * 10_000


@dataclass
class DevSet:
    """A set's questions and the KG they are asked of, as its files spell relations and labels."""

    name: str
    triples: list[tuple[str, str, str]]
    questions: list[DevQuestion]
    seed: int
    relation: Callable[[str], str] = str  # how its KB names a relation of the source KG
    label: Callable[[str], str] = str  # how its KB spells a label
    notes: list[str] = field(default_factory=list)

    def split(self, name: str) -> list[DevQuestion]:
        return [q for q in self.questions if is_dev(q.topics[0], self.seed) == (name == "dev")]

    def files(self) -> dict[str, list[str]]:
        """File name -> lines: dev.txt and held.txt (the path questions), the same by hop count
        (dev-1hop.txt ...), and the conjunctions (dev-conj.txt, held-conj.txt)."""
        out: dict[str, list[str]] = {}
        for split in ("dev", "held"):
            questions = self.split(split)
            out[f"{split}.txt"] = [q.line(self.label) for q in questions if q.group != "conj"]
            for group in sorted({q.group for q in questions}):
                name = f"{split}-{group.replace('-', '')}.txt"
                out[name] = [q.line(self.label) for q in questions if q.group == group]
        return out

    def stats(self) -> dict[str, object]:
        entities = {n for h, _, t in self.triples for n in (h, t)}
        counts: dict[str, dict[str, int]] = {}
        for split in ("dev", "held"):
            questions = self.split(split)
            counts[split] = dict(sorted(Counter(f"{q.group} {q.style}" for q in questions).items()))
            counts[split + " by group"] = dict(sorted(Counter(q.group for q in questions).items()))
        return {"set": self.name, "seed": self.seed, "kb": {"edges": len(set(self.triples)), "entities": len(entities),
                                                            "relations": len({r for _, r, _ in self.triples})},
                "questions": counts, "punctuated_topics": sum(bool(re.search(r"[^\w\s]", q.topics[0])) for q in self.questions),
                "notes": self.notes}

    def write(self, folder: str | FilePath) -> FilePath:
        """kb.txt (pipe format), the question files and stats.json, in folder/<name>."""
        target = FilePath(folder) / self.name
        target.mkdir(parents=True, exist_ok=True)
        with open(target / "kb.txt", "w", encoding="utf-8") as f:
            f.writelines(f"{self.label(h)}|{self.relation(r)}|{self.label(t)}\n" for h, r, t in self.triples)
        for name, lines in self.files().items():
            (target / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        (target / "stats.json").write_text(json.dumps(self.stats(), indent=1) + "\n", encoding="utf-8")
        return target


def generate(kb: Kb, paths: Iterable[PathQuestions], conjunctions: Iterable[Conjunction], seed: int,
             per_path: int, per_conjunction: int, hub_degree: int | None = None) -> list[DevQuestion]:
    """Every template's questions; each draws topics from its own seeded generator, so adding a
    template leaves the others' questions as they were."""
    out: list[DevQuestion] = []
    for spec in paths:
        rng = np.random.default_rng([seed, hash64(spec.name) & 0xFFFFFFFF])
        out += path_questions(kb, spec, per_path, rng, hub_degree=hub_degree)
    for conj in conjunctions:
        rng = np.random.default_rng([seed, hash64(conj.name) & 0xFFFFFFFF])
        out += conjunction_questions(kb, conj, per_conjunction, rng, hub_degree=hub_degree)
    return out
