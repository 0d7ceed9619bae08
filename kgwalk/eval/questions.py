"""Question files and how much of them a walk corpus answers: the scorer every eval shares.

A question file has one question a line, `question with [topic]<TAB>answer|answer` (MetaQA's
format, the one `kgwalk fit-paths` reads): the bracketed spans name the topic entities (one or
several), the answers are entity labels. Users do not bracket entities: `plain` questions drop the
brackets (`who directed Kismet`), which is what zero-shot retrieval is scored on.

Labels become entity ids as the KG has them (`KgLabels`, from its entities table). A label the KG
does not have keeps the id its label would hash to, which names no entity: such a question stays
in the scores and counts as a miss (`Coverage` says how many there are).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64, normalize_label

if TYPE_CHECKING:
    from kgwalk.query.hits import Retrieval

TOPIC = re.compile(r"\[([^\[\]]+)\]")
LINE_FORMAT = "`question with [topic]<TAB>answer|answer`"
MISS_ANSWERS = 5  # gold labels a miss record lists (answer_count has them all)


@dataclass(frozen=True)
class Question:
    text: str
    topic: int  # entity id of the (first) bracketed topic
    answers: frozenset[int]  # entity ids of the gold answers
    answer_labels: tuple[str, ...] = ()
    other_topics: tuple[int, ...] = ()  # the other bracketed topics of a question that names several

    @property
    def plain(self) -> str:
        """The question as a user types it: the topics' brackets dropped."""
        return plain_question(self.text)

    @property
    def topics(self) -> tuple[int, ...]:
        return (self.topic, *self.other_topics)


def plain_question(text: str) -> str:
    return TOPIC.sub(r"\1", text)


@dataclass(frozen=True)
class QuestionLine:
    """One line of a question file, as labels."""

    text: str
    topics: tuple[str, ...]  # the bracketed labels, in order, each once
    answers: tuple[str, ...]


def parse_line(line: str) -> QuestionLine:
    """A question line's parts; ValueError saying what is wrong with it."""
    text, tab, answers = line.rstrip("\r\n").partition("\t")
    if not tab:
        raise ValueError("no tab between the question and its answers")
    if "\t" in answers:
        raise ValueError("more than one tab")
    topics = tuple(dict.fromkeys(t.strip() for t in TOPIC.findall(text)))
    if not topics:
        raise ValueError("no [bracketed] topic entity in the question")
    labels = tuple(a.strip() for a in answers.split("|") if a.strip())
    if not labels:
        raise ValueError("no answers after the tab")
    return QuestionLine(text, topics, labels)


def read_question_lines(path: str | Path) -> list[QuestionLine]:
    """Every question of a file (blank lines skipped); a KgwalkError naming the first bad line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise KgwalkError(f"eval: no question file {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise KgwalkError(f"eval: cannot read {path}: {e}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(parse_line(line))
        except ValueError as e:
            raise KgwalkError(f"eval: {path} line {number}: {e}; expected {LINE_FORMAT}") from None
    return out


def label_id(label: str) -> int:
    """The id ingest gives an entity keyed by this label (every KG format but N-Triples)."""
    return hash64(normalize_label(label))


def to_question(line: QuestionLine, id_of: Callable[[str], int]) -> Question:
    first, *others = (id_of(t) for t in line.topics)
    return Question(line.text, first, frozenset(id_of(a) for a in line.answers), line.answers, tuple(others))


class KgLabels:
    """These labels' entity ids as a built KG has them: the entity with exactly that label (after
    normalize_label; the lowest id where several share it), else `label_id`, which names none."""

    def __init__(self, entities: pa.Table, labels: Iterable[str]) -> None:
        wanted = pa.array(sorted({normalize_label(label) for label in labels}), pa.string())
        found = entities.select(["id", "label"]).filter(pc.is_in(entities.column("label"), value_set=wanted)).sort_by("id")
        self._ids: dict[str, int] = {}
        for entity, label in zip(found.column("id").to_pylist(), found.column("label").to_pylist()):
            self._ids.setdefault(label, entity)

    def __contains__(self, label: str) -> bool:
        return normalize_label(label) in self._ids

    def __call__(self, label: str) -> int:
        return self._ids.get(normalize_label(label), label_id(label))


@dataclass(frozen=True)
class Coverage:
    """How many of a file's labels the KG has."""

    questions: int
    unknown_topics: int  # questions naming a topic the KG does not have
    answers: int
    unknown_answers: int  # answer labels the KG does not have
    unanswerable: int  # questions none of whose answers the KG has

    @classmethod
    def of(cls, lines: list[QuestionLine], labels: KgLabels) -> Coverage:
        known = [[a in labels for a in line.answers] for line in lines]
        return cls(len(lines), sum(not all(t in labels for t in line.topics) for line in lines),
                   sum(map(len, known)), sum(k.count(False) for k in known), sum(not any(k) for k in known))

    @property
    def complete(self) -> bool:
        return not (self.unknown_topics or self.unknown_answers)

    def note(self) -> str:
        return (f"{self.unknown_topics:,} of {self.questions:,} questions name a topic the KG does not have, "
                f"{self.unknown_answers:,} of {self.answers:,} answers are not in it ({self.unanswerable:,} questions with none)")


def load_kg_questions(lines: list[QuestionLine], entities: pa.Table) -> tuple[list[Question], Coverage]:
    """Questions with entity ids from a KG's entities table (columns id, label), and how many of
    their labels it has. Questions with labels it lacks stay: they count as misses."""
    labels = KgLabels(entities, (label for line in lines for label in (*line.topics, *line.answers)))
    return [to_question(line, labels) for line in lines], Coverage.of(lines, labels)


def sample(questions: list[Question], limit: int | None, seed: int = 0) -> list[Question]:
    """A deterministic sample of `limit` questions (all when None): the same every run."""
    if not limit or limit >= len(questions):
        return questions
    keep = np.sort(np.random.default_rng(seed).choice(len(questions), limit, replace=False))
    return [questions[i] for i in keep]


@dataclass
class RetrievalScores:
    """Per question set (a hop count, a file): the share of questions where ...

    topic_recall: every bracketed topic entity is among the top-k nodes (a question naming two
        counts only when both are);
    context_recall: a gold answer entity is on a retrieved walk or in its answer set's list
        (WalkHit.also, query.also_chars), by entity id;
    answer_recall: the share of the question's gold answers in the context (walks and lists),
        averaged over questions (a question with 12 answers and 3 in the context counts 0.25);
    multi_answer_recall: answer_recall over the `multi_answer_questions` with more than one gold answer;
    context_chars: the answer prompt's context (kgwalk/query/answer.py's context_text) in characters, mean;
    extractive_hits1: the end entity of the best-scoring retrieved walk is a gold answer (in ego
        mode, of the best candidate walk: the ranking is the same in both modes);
    and with an LLM (answers > 0), per the paper's three-way scheme: hits1 (the reply names a gold
    answer), accurate (names one and is not a refusal), hallucinated (neither a gold answer nor a
    refusal), missing (the refusal sentence, matched case-insensitively).
    latency_ms: p50 and p99 of each retrieval phase (and the LLM's), per question.
    hops: MetaQA's hop count; None for a question file.
    """

    hops: int | None
    questions: int
    topic_recall: float
    context_recall: float
    extractive_hits1: float
    seconds: float
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)
    answer_recall: float = 0.0
    multi_answer_recall: float = 0.0
    multi_answer_questions: int = 0
    context_chars: float = 0.0
    plain: bool = False  # scored on plain questions (brackets dropped)
    answers: int = 0
    hits1: float = 0.0
    accurate: float = 0.0
    hallucinated: float = 0.0
    missing: float = 0.0


def percentiles(timings: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    phases = list(dict.fromkeys(k for t in timings for k in t))
    total = [sum(v for k, v in t.items() if k not in ("llm", "total")) for t in timings]
    out = {p: [t.get(p, 0.0) for t in timings] for p in phases if p != "total"}
    out["retrieval"] = total
    return {p: {"p50": round(float(np.percentile(v, 50)), 3), "p99": round(float(np.percentile(v, 99)), 3)} for p, v in out.items() if v}


def names_answer(reply: str, labels: list[str]) -> bool:
    """Hits@1 as the paper counts it: the reply contains a gold answer's label (case-insensitive)."""
    reply = reply.casefold()
    return any(label.casefold() in reply for label in labels)


def miss_record(question: Question, asked: str, result: Retrieval) -> dict[str, object]:
    """Why a question's best walk ends in no gold answer, as far as the retrieval tells: what it ranked first, and the
    relation path of the best-ranked shown walk to an answer, if any (`_path_to_answer`). The pairs of
    relation paths are what to read across a file's misses: "keyPerson> ranked below stockExchange> for 'who is
    the CEO of E'" says the questions word a relation as its name does not (a `verbalize.phrases` entry mends that)."""
    best, walks = result.best, result.walks
    return {"question": asked, "answers": list(question.answer_labels[:MISS_ANSWERS]), "answer_count": len(question.answers),
            "topics_found": topics_found(question, result),
            "best_path": best.signature if best else None, "best_end": best.node_labels[-1] if best else None,
            "answer_path": _path_to_answer(walks, question.answers),
            "answer_in_context": bool(answers_in_context(question, walks))}


def topics_found(question: Question, result: Retrieval) -> bool:
    """Whether every topic the question brackets is among the retrieval's nodes."""
    found = {n.id for n in result.nodes}
    return all(t in found for t in question.topics)


def answers_in_context(question: Question, walks: list) -> frozenset[int]:
    """The question's gold answers on the walks or in their answer-set lists."""
    return question.answers.intersection(node for w in walks for node in (*w.nodes, *w.also))


def _path_to_answer(walks: list, answers: frozenset[int]) -> str | None:
    """The relation path from its root to an answer of the best-ranked walk that reaches one: on the walk (cut where
    the answer is), else in its answer-set list."""
    for w in walks:
        at = next((i for i, node in enumerate(w.nodes) if i and node in answers), None)
        if at is not None:
            return "|".join(w.signature.split("|")[:at])
    return next((w.signature for w in walks if answers.intersection(w.also)), None)


def common_misses(records: list[dict[str, object]], top: int = 5) -> list[tuple[int, str, str, str]]:
    """The most frequent (best path, path to an answer) pairs among miss records: (count, best path, answer path,
    an example question), most frequent first; "-" where a record has no such path."""
    keys = [(str(r["best_path"] or "-"), str(r["answer_path"] or "-")) for r in records]
    pairs = Counter(keys)
    example: dict[tuple[str, str], str] = {}
    for key, r in zip(keys, records):
        example.setdefault(key, str(r["question"]))
    return [(count, best, reaching, example[(best, reaching)]) for (best, reaching), count in pairs.most_common(top)]


def score_retrieval(retriever, questions: list[Question], hops: int | None = None, k_nodes: int | None = None,
                    k_walks: int | None = None, answerer=None, plain: bool = False,
                    misses: list[dict[str, object]] | None = None) -> RetrievalScores:
    """Retrieval scores for these questions (as users type them with `plain`); with an
    `answerer`, the LLM's too, one call per question. `misses`, where given, gets a `miss_record`
    for each question whose best walk's end is no gold answer."""
    from kgwalk.query.answer import context_text

    topic = context = hits1 = multi = 0
    answer_share = multi_share = 0.0
    chars = 0
    timings = []
    texts = [q.plain if plain else q.text for q in questions]
    start = time.perf_counter()
    for q, text in zip(questions, texts):
        result = retriever.retrieve(text, k_nodes, k_walks)
        walks = result.walks
        timings.append(result.timings_ms)
        in_context = answers_in_context(q, walks)
        topic += topics_found(q, result)
        context += bool(in_context)
        share = len(in_context) / max(len(q.answers), 1)
        answer_share += share
        if len(q.answers) > 1:
            multi += 1
            multi_share += share
        chars += len(context_text(result))
        hit = result.best is not None and result.best.end_node in q.answers
        hits1 += hit
        if misses is not None and not hit:
            misses.append(miss_record(q, text, result))
    n = max(len(questions), 1)
    scores = RetrievalScores(hops, len(questions), topic / n, context / n, hits1 / n, time.perf_counter() - start,
                             answer_recall=answer_share / n, multi_answer_recall=multi_share / max(multi, 1),
                             multi_answer_questions=multi, context_chars=chars / n, plain=plain)
    if answerer is not None:
        replies = answerer.answer_many(texts, k_nodes, k_walks)
        named = [names_answer(a.answer, list(q.answer_labels)) for q, a in zip(questions, replies)]
        scores.answers = len(replies)
        scores.hits1 = sum(named) / n
        scores.missing = sum(not a.known for a in replies) / n
        scores.accurate = sum(ok and a.known for ok, a in zip(named, replies)) / n
        scores.hallucinated = sum(not ok and a.known for ok, a in zip(named, replies)) / n
        timings = [a.timings_ms for a in replies]
    scores.latency_ms = percentiles(timings)
    return scores
