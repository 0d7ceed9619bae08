"""MetaQA's question files and how much of them a walk corpus can answer.

Question lines look like `who directed [Kismet]<TAB>William Dieterle|...`: the bracketed span
is the topic entity (kgwalk/eval/questions.py reads and scores them, as for any question file).
Tune on `qa_dev`; report on `qa_test`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.errors import KgwalkError
from kgwalk.eval.questions import (Question, RetrievalScores, label_id, names_answer, percentiles, plain_question,
                                   read_question_lines, sample, score_retrieval, to_question)
from kgwalk.walks.graph import fold64

# what the callers of this module (bench scripts, tests) take from it; the scorer lives in questions.py
__all__ = ["METAQA_DIR", "AnswerReachability", "Question", "RetrievalScores", "load_questions", "names_answer", "percentiles",
           "plain_question", "question_file", "sample", "score_retrieval"]


def load_questions(path: str | Path) -> list[Question]:
    """A MetaQA question file's questions, with the ids a pipe KG's ingest gives their labels."""
    return [to_question(line, label_id) for line in read_question_lines(path)]


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return fold64(fold64(np.zeros(len(a), np.uint64), a), b)


class AnswerReachability:
    """Share of questions with a gold answer on some walk rooted at a topic entity (any, where a
    question names several): the ceiling of what node-then-walk retrieval can answer from a corpus.
    Feed walk tables with `add`."""

    def __init__(self, questions: list[Question]) -> None:
        index = [(i, t, a) for i, q in enumerate(questions) for t in q.topics for a in q.answers if a != t]
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
