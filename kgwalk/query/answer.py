"""Answerer: the retrieved walks in the paper's answer prompt (Fig. 2b), one LLM call per question.

    from kgwalk.query import Answerer
    answerer = Answerer.from_config(name="metaqa", overrides=["answer.backend=openai",
        "answer.llm.base_url=http://gpu-host:8000/v1", "answer.llm.model=meta-llama/Llama-3.1-8B-Instruct"])
    result = answerer.answer("who directed [Kismet]")
    print(result.answer, result.known, result.timings_ms)
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from kgwalk.config import Config, LLMBackend, load_config
from kgwalk.errors import KgwalkError
from kgwalk.llm import ChatModel, Message
from kgwalk.query.answer_sets import also_text
from kgwalk.query.hits import Retrieval, Retrieves
from kgwalk.query.retriever import Retriever

# Walk&Retrieve, Fig. 2b ("Knowledge-enhanced answer generation"), verbatim: System and Human parts.
REFUSAL = "I do not know the answer"
PAPER_ANSWER_SYSTEM_PROMPT = (
    "You are provided with context information from a RAG retrieval, which gives you the top k context information. "
    "Please use the provided context information to answer the question. If you are not able to answer the question "
    f'based on the context information, please return the following sentence: "{REFUSAL}".'
)
PAPER_ANSWER_USER_PROMPT = "Please answer the following question: {question}. Use the following context information to answer the question: {context}."

# The refusal as models actually write it: any case, "don't"/"do not", curly apostrophes, trailing dot.
_REFUSAL = re.compile(r"\bi\s+(?:do\s+not|don['’]?t)\s+know\s+the\s+answer\b", re.I)


def is_refusal(reply: str) -> bool:
    return bool(_REFUSAL.search(reply))


def context_text(retrieval: Retrieval) -> str:
    """The retrieved walks' sentences, best first, one per line (answer.context=ego: the lines of
    the top nodes' pruned ego-graphs, root first), each followed by its answer set's other ends
    ("... directed Juarez. Also: Tennessee Johnson, Lawyer Man."; query.also_chars)."""
    return "\n".join(f"- {w.text}{also_text(w)}" for w in retrieval.walks)


def answer_prompt(cfg: Config, question: str, retrieval: Retrieval) -> list[Message]:
    system = cfg.answer.prompt.system or PAPER_ANSWER_SYSTEM_PROMPT
    user = cfg.answer.prompt.user or PAPER_ANSWER_USER_PROMPT
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user.replace("{question}", question).replace("{context}", context_text(retrieval))},
    ]


def check_answer_conf(cfg: Config) -> LLMBackend:
    """The answer backend, once its settings are checked (one-line errors)."""
    from kgwalk.llm.base import check_llm_conf

    if not cfg.answer.backend:
        raise KgwalkError("answer.backend: no LLM is configured for answers; set answer.backend=openai with "
                          "answer.llm.base_url and answer.llm.model (or transformers with answer.llm.model)")
    check_llm_conf(cfg.answer.backend, cfg.answer.llm, "answer.llm")
    user = cfg.answer.prompt.user
    if user and ("{question}" not in user or "{context}" not in user):
        raise KgwalkError("answer.prompt.user must contain {question} and {context}")
    return cfg.answer.backend


@dataclass
class Answer:
    question: str
    answer: str
    known: bool  # False when the model said it does not know (the paper's "missing")
    retrieval: Retrieval
    timings_ms: dict[str, float]  # the retrieval's phases plus llm and total

    def to_json(self) -> dict[str, Any]:
        context = self.retrieval.to_json()
        return {"question": self.question, "answer": self.answer, "known": self.known, "mode": context["mode"],
                "nodes": context["nodes"], "timings_ms": self.timings_ms}


class Answerer:
    def __init__(self, cfg: Config, retriever: Retrieves | None = None, model: ChatModel | None = None) -> None:
        if model is None:
            check_answer_conf(cfg)  # before any model or index is loaded
        self.cfg = cfg
        self.retriever = retriever or Retriever(cfg)
        self._model = model

    @property
    def model(self) -> ChatModel:
        if self._model is None:
            from kgwalk.llm import make_chat_model

            self._model = make_chat_model(check_answer_conf(self.cfg), self.cfg.answer.llm, "answer.llm")
        return self._model

    @classmethod
    def from_config(cls, conf: str | None = None, overrides: list[str] | None = None, **values: Any) -> Answerer:
        return cls(load_config(conf, overrides, **values))

    def answer(self, question: str, k_nodes: int | None = None, k_walks: int | None = None) -> Answer:
        return self.answer_many([question], k_nodes, k_walks)[0]

    def answer_many(self, questions: list[str], k_nodes: int | None = None, k_walks: int | None = None) -> list[Answer]:
        """One LLM call per question; the calls go to the model together (batched or concurrent)."""
        start = time.perf_counter()
        retrievals = [self.retriever.retrieve(q, k_nodes, k_walks, mode=self.cfg.answer.context) for q in questions]
        model = self.model  # loaded (or read from its cache) before the clock starts: llm time is generation only
        llm_start = time.perf_counter()
        replies = model.chat([answer_prompt(self.cfg, q, r) for q, r in zip(questions, retrievals)])
        llm_ms = (time.perf_counter() - llm_start) * 1000 / max(len(questions), 1)
        total_ms = (time.perf_counter() - start) * 1000 / max(len(questions), 1)
        return [
            Answer(q, reply.strip(), not is_refusal(reply) and bool(reply.strip()), r,
                   {**r.timings_ms, "llm": round(llm_ms, 3), "total": round(total_ms, 3)})
            for q, r, reply in zip(questions, retrievals, replies)
        ]

    def close(self) -> None:
        self.retriever.close()
