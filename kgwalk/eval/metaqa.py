"""MetaQA questions and how much of them a walk corpus can answer.

Question lines look like `who directed [Kismet]<TAB>William Dieterle|...`: the bracketed span
is the topic entity. Users do not bracket entities: `plain` questions drop the brackets
(`who directed Kismet`), which is what zero-shot retrieval is scored on. Tune on `qa_dev`;
report on `qa_test`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64, normalize_label
from kgwalk.walks.graph import fold64

_TOPIC = re.compile(r"\[([^\]]+)\]")


@dataclass(frozen=True)
class Question:
    text: str
    topic: int  # entity id of the bracketed topic
    answers: frozenset[int]  # entity ids of the gold answers
    answer_labels: tuple[str, ...] = ()

    @property
    def plain(self) -> str:
        """The question as a user types it: the topic's brackets dropped."""
        return plain_question(self.text)


def plain_question(text: str) -> str:
    return _TOPIC.sub(r"\1", text)


def load_questions(path: str | Path) -> list[Question]:
    questions = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        text, answers = line.split("\t")
        topic = _TOPIC.search(text)
        if topic is None:
            continue
        questions.append(
            Question(
                text=text,
                topic=hash64(normalize_label(topic.group(1))),
                answers=frozenset(hash64(normalize_label(a)) for a in answers.split("|")),
                answer_labels=tuple(answers.split("|")),
            )
        )
    return questions


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return fold64(fold64(np.zeros(len(a), np.uint64), a), b)


class AnswerReachability:
    """Share of questions with a gold answer on some walk rooted at the topic entity: the ceiling
    of what node-then-walk retrieval can answer from a corpus. Feed walk tables with `add`."""

    def __init__(self, questions: list[Question]) -> None:
        index = [(i, q.topic, a) for i, q in enumerate(questions) for a in q.answers if a != q.topic]
        qi, topics, answers = (np.array(col, np.int64) for col in zip(*index)) if index else (np.empty(0, np.int64),) * 3
        self._question_of_pair = qi
        self._pair_keys = _pair_keys(topics, answers)
        self.reached = np.zeros(len(questions), bool)

    def add(self, walks: pa.Table) -> None:
        nodes = walks.column("nodes")
        lengths = pc.list_value_length(nodes).to_numpy()
        roots = np.repeat(walks.column("root").to_numpy(), lengths)
        members = pc.list_flatten(nodes).to_numpy()
        keys = np.unique(_pair_keys(roots, members))
        self.reached[self._question_of_pair[np.isin(self._pair_keys, keys)]] = True

    @property
    def share(self) -> float:
        return float(self.reached.mean()) if len(self.reached) else 0.0


METAQA_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "metaqa"


def question_file(data_dir: str | Path, hops: int, split: str) -> Path:
    path = Path(data_dir) / f"{hops}-hop" / f"qa_{split}.txt"
    if not path.exists():
        raise KgwalkError(f"eval: no MetaQA file {path} (--data names the folder holding 1-hop/ 2-hop/ 3-hop/)")
    return path


def topics_missing(questions: list[Question], entity_ids: pa.ChunkedArray) -> int:
    """How many questions' topic entities are not in the KG (`entity_ids`: its entities' ids)."""
    topics = pa.array([q.topic for q in questions], pa.int64())
    return int(pc.sum(pc.invert(pc.is_in(topics, value_set=entity_ids.combine_chunks()))).as_py() or 0)


def missing_topics_warning(asked: dict[int, list[Question]], entity_ids: pa.ChunkedArray, kg: str) -> str | None:
    """One line for questions (by hop count) whose topics the KG lacks, or None when it has them
    all: a corpus built from another KG scores zeros, which read as a retrieval failure."""
    missing = {h: topics_missing(qs, entity_ids) for h, qs in asked.items()}
    total = sum(len(qs) for qs in asked.values())
    if not any(missing.values()):
        return None
    per_hop = ", ".join(f"{h}-hop {n:,} of {len(asked[h]):,}" for h, n in missing.items())
    return (f"warning: {sum(missing.values()):,} of {total:,} questions name a topic that is not an entity of the KG {kg!r} ({per_hop}); "
            "they score 0: is the KG the one the questions are about (MetaQA's kb.txt)?")


def sample(questions: list[Question], limit: int | None, seed: int = 0) -> list[Question]:
    """A deterministic sample of `limit` questions (all when None): the same every run."""
    if not limit or limit >= len(questions):
        return questions
    keep = np.sort(np.random.default_rng(seed).choice(len(questions), limit, replace=False))
    return [questions[i] for i in keep]


@dataclass
class RetrievalScores:
    """Per hop count: the share of questions where ...

    topic_recall: the bracketed topic entity is among the top-k nodes;
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
    """

    hops: int
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


def score_retrieval(retriever, questions: list[Question], hops: int, k_nodes: int | None = None,
                    k_walks: int | None = None, answerer=None, plain: bool = False) -> RetrievalScores:
    """Retrieval scores for these questions (as users type them with `plain`); with an
    `answerer`, the LLM's too, one call per question."""
    import time

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
        in_context = q.answers.intersection(node for w in walks for node in (*w.nodes, *w.also))
        topic += any(n.id == q.topic for n in result.nodes)
        context += bool(in_context)
        share = len(in_context) / max(len(q.answers), 1)
        answer_share += share
        if len(q.answers) > 1:
            multi += 1
            multi_share += share
        chars += len(context_text(result))
        hits1 += result.best is not None and result.best.end_node in q.answers
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
