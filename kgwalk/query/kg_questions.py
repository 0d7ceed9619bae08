"""Questions generated from the KG's own relation paths, with no labelled question: what `kgwalk
fit-paths --generated N` fits the path prior (kgwalk/query/paths.py) on.

Each question is one relation path of the corpus's walks asked from one of its roots. The step
count is drawn uniformly among those the walks have, the path uniformly among that step count's
distinct paths (a rare relation gets as many questions as a common one: the prior's vote can only
favour a path that has examples), and the topic among the walks that take that path. The answers
are every entity the path reaches from the topic in the KG, found by following its edges (a walks
table keeps only some walks per root and path). The question is written from the relation names
alone, in one of three generic shapes drawn at random, none of them a development set's template:

- nested: "what is the birth place of the directed by of [E]?", an inverse step as "what has [E] as its directed by";
- from the answer and from the topic: the verbalizer's automatic phrases (verbalize.phrases where
  mapped), as the synthetic prior reads paths (kgwalk/query/corpus_paths.py): "what directed [E]?".

A terse shape (the steps' words alone, "birth place directed by of [E]?") was dropped: a bag of relation
words sits near every question that uses them, so its examples outvoted the rest (synth dev, 80/20
split: Hits@1 67.8 with it, 68.7 without; bench/results/zero_shot_vs_fitted.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.kg.relations import relation_words
from kgwalk.query.corpus_paths import path_keys, path_questions
from kgwalk.query.paths import Example
from kgwalk.verbalize.template import TemplateVerbalizer
from kgwalk.walks.graph import Graph

SHAPES = ("nested", "from_answer", "from_topic")
# a path question with more answers than this is left out: nobody asks for a list that long, and fitting
# looks for every (topic, answer) pair's paths; a step whose entities outnumber it tenfold stops the search
MAX_ANSWERS = 100
DRAWS_PER_QUESTION = 10  # draws before giving up on `count` questions (a small KG has fewer distinct ones)
_MASK = re.compile(r"\bE\b")  # path_questions' masked topic
_UNWRITABLE = ("[", "]", "\t", "\n", "|")  # a label with one of these cannot be a [topic] of a question line


@dataclass(frozen=True)
class PathQuestion:
    """A generated question: its text with the topic in [brackets], the path it asks along (relation
    labels, and True for a step taken backwards along an edge) and the entities that path reaches."""

    text: str
    topic: int
    answers: frozenset[int]
    relations: tuple[str, ...]
    inverse: tuple[bool, ...]
    shape: str

    def example(self) -> Example:
        return Example(self.text, (self.topic,), self.answers)


_LINKING_VERBS = frozenset(("has", "have", "is", "was", "are", "were"))


def step_words(relation: str) -> str:
    """A relation's name as words, less a leading linking verb that 'the ... of' cannot take
    ("people.person.place_of_birth" -> "place of birth", "has_genre" -> "genre")."""
    words = relation_words(relation)
    if len(words) > 1 and words[0].lower() in _LINKING_VERBS:
        words = words[1:]
    return " ".join(words) or relation


def nested_question(topic: str, relations: tuple[str, ...], inverse: tuple[bool, ...]) -> str:
    """'what is the r2 of the r1 of [E]?'; a backward step reads 'what has X as its r'."""
    text = topic
    for relation, backward in zip(relations, inverse):
        words = step_words(relation)
        text = f"what has {text} as its {words}" if backward else f"the {words} of {text}"
    return (text if text.startswith("what ") else f"what is {text}") + "?"


def phrase(shape: str, topic: str, relations: tuple[str, ...], inverse: tuple[bool, ...], verbalizer: TemplateVerbalizer) -> str:
    """The question of this path from `topic` (a label in [brackets]) in one of SHAPES."""
    if shape == "nested":
        return nested_question(topic, relations, inverse)
    from_answer, from_topic = path_questions(list(relations), list(inverse), verbalizer)
    text = from_answer if shape == "from_answer" else from_topic
    return _MASK.sub(lambda _: topic, text, count=1)


def path_ends(graph: Graph, topic: int, steps: list[tuple[int, bool]], limit: int) -> np.ndarray | None:
    """The node indices the path (relation index, backward) reaches from node index `topic`; None
    where some step's entities outnumber `limit`."""
    frontier = np.array([topic], np.int64)
    for rel, backward in steps:
        reached = []
        for u in frontier.tolist():
            lo, hi = graph.indptr[u], graph.indptr[u + 1]
            reached.append(graph.nbr[lo:hi][(graph.rel[lo:hi] == rel) & (graph.inverse[lo:hi] == backward)])
        frontier = np.unique(np.concatenate(reached)) if reached else frontier[:0]
        if len(frontier) > limit:
            return None
    return frontier


def draw_questions(walks: pa.Table, graph: Graph, labels: dict[int, str], relation_labels: dict[int, str],
                   verbalizer: TemplateVerbalizer, count: int, rng: np.random.Generator) -> list[PathQuestion]:
    """Up to `count` distinct questions (topic and path) drawn from these walks (columns walk_id,
    root, rels, inverse) over `graph`; `labels`: entity labels by id."""
    walks = walks.sort_by("walk_id")  # a table's file order is no order: the draw must not depend on it
    keys = path_keys(walks, graph.rel_ids)
    steps_of = walks.column("rels").combine_chunks().value_lengths().to_numpy(zero_copy_only=False)
    order = np.argsort(keys, kind="stable")
    distinct, first, sizes = np.unique(keys[order], return_index=True, return_counts=True)
    path_steps = steps_of[order[first]]
    step_counts = np.unique(path_steps)
    if not len(step_counts):
        raise KgwalkError("fit-paths --generated: the walks table holds no walks to ask about")
    paths_of = {s: np.flatnonzero(path_steps == s) for s in step_counts.tolist()}
    roots, rels, inverse = walks.column("root").to_numpy(), walks.column("rels"), walks.column("inverse")
    seen: set[tuple[int, int]] = set()
    questions: list[PathQuestion] = []
    for _ in range(count * DRAWS_PER_QUESTION):
        if len(questions) == count:
            break
        path = int(rng.choice(paths_of[int(rng.choice(step_counts))]))
        walk = int(order[first[path] + rng.integers(sizes[path])])
        topic, shape = int(roots[walk]), SHAPES[int(rng.integers(len(SHAPES)))]
        if (topic, path) in seen or any(c in labels[topic] for c in _UNWRITABLE):
            continue
        seen.add((topic, path))
        rel_ids, backward = rels[walk].as_py(), inverse[walk].as_py()
        steps = list(zip(np.searchsorted(graph.rel_ids, rel_ids).tolist(), backward))
        ends = path_ends(graph, int(graph.index_of(np.array([topic]))[0]), steps, MAX_ANSWERS * 10)
        answers = frozenset(graph.node_ids[ends].tolist()) - {topic} if ends is not None else frozenset()
        if not answers or len(answers) > MAX_ANSWERS:
            continue
        names = tuple(relation_labels[r] for r in rel_ids)
        text = phrase(shape, f"[{labels[topic]}]", names, tuple(backward), verbalizer)
        questions.append(PathQuestion(text, topic, answers, names, tuple(backward), shape))
    return questions


def generate_questions(cfg: Config, count: int, seed: int = 0) -> list[PathQuestion]:
    """Up to `count` questions from the corpus's walks and KG (fewer where it has fewer distinct
    ones), the same for the same tables and seed."""
    from kgwalk.storage import read_table

    if count < 1:
        raise KgwalkError(f"fit-paths: --generated takes a number of questions of at least 1, got {count}")
    tables = {t: read_table(cfg.table(t), what="ingest") for t in ("edges", "entities", "relations")}
    walks = read_table(cfg.table("walks"), ["walk_id", "root", "rels", "inverse"], what="walks")
    graph = Graph.from_arrow(tables["edges"], tables["entities"], tables["relations"], cfg.walks.direction)
    entities, relations = tables["entities"], tables["relations"]
    roots = set(np.unique(walks.column("root").to_numpy()).tolist())
    labels = {i: label for i, label in zip(entities.column("id").to_pylist(), entities.column("label").to_pylist()) if i in roots}
    relation_labels = dict(zip(relations.column("id").to_pylist(), relations.column("label").to_pylist()))
    return draw_questions(walks, graph, labels, relation_labels, TemplateVerbalizer(cfg.verbalize.phrases), count, np.random.default_rng(seed))
