"""MetaQA questions and how much of them a walk corpus can answer.

Question lines look like `who directed [Kismet]<TAB>William Dieterle|...`: the bracketed span
is the topic entity. Tune on `qa_dev`; report on `qa_test`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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
    context_recall: a gold answer entity is on a retrieved walk (by entity id);
    extractive_hits1: the end entity of the best-scoring retrieved walk is a gold answer.
    """

    hops: int
    questions: int
    topic_recall: float
    context_recall: float
    extractive_hits1: float
    seconds: float


def score_retrieval(retriever, questions: list[Question], hops: int, k_nodes: int | None = None, k_walks: int | None = None) -> RetrievalScores:
    import time

    topic = context = hits1 = 0
    start = time.perf_counter()
    for q in questions:
        nodes = retriever.retrieve(q.text, k_nodes, k_walks)
        walks = [w for n in nodes for w in n.walks]
        topic += any(n.id == q.topic for n in nodes)
        context += any(not q.answers.isdisjoint(w.nodes) for w in walks)
        if walks:
            hits1 += max(walks, key=lambda w: w.score).end_node in q.answers
    n = max(len(questions), 1)
    return RetrievalScores(hops, len(questions), topic / n, context / n, hits1 / n, time.perf_counter() - start)
