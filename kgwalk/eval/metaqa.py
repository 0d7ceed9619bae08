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
