"""LLM verbalizers: the paper's prompt per walk, one chat call per distinct walk, output hygiene,
and the template sentence wherever the model's reply is unusable."""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa

from kgwalk.config import PromptConf, VerbalizeConf
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64
from kgwalk.llm import ChatModel, Message
from kgwalk.verbalize.template import TemplateVerbalizer
from kgwalk.walks.labels import walk_triples

# Walk&Retrieve, Fig. 2a ("Knowledge verbalization"), verbatim: System and Human parts.
PAPER_SYSTEM_PROMPT = (
    "Please provide me from an extracted triple set of a Knowledge Graph a sentence. The triple set consists of one "
    "extracted random walk. Therefore, a logical order of the shown triples is present. Please consider this fact "
    "when constructing the sentence. Prevent introduction words."
)
PAPER_USER_PROMPT = (
    "Please return only the constructed sentence from the following set of node and edge labels extracted from "
    "the Knowledge Graph: {triples}."
)
MAX_SENTENCE_CHARS = 2000  # longer replies are rambling, not a sentence: the template is used
# A phrase said three times in a row is a decoding loop, not a sentence (small models do it:
# SmolLM2-135M answers some walks with "The sentence is: The sentence is: ...").
_LOOP = re.compile(r"(\S.{7,}?)\1{2,}")

_PREAMBLE = re.compile(r"^(?:sure|certainly|okay|ok|here(?:'s| is)|the (?:constructed )?sentence|sentence|answer|output)\b[^:\n]{0,60}:\s*", re.IGNORECASE)
_WRAPPING = "\"'`*“”‘’ \t"
# a sentence ends at . ! ? followed by space and a capital, unless the word before is an initial or title
_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b(?:Mr|Ms|Dr|St|Jr|Sr|vs|No))(?<!\bMrs)([.!?])(?=[\"”’']?\s+[\"“]?[A-Z])")


def clean_sentence(reply: str) -> str | None:
    """The one sentence in an LLM reply, without preamble, quotes or markup; None if unusable."""
    lines = [line.strip() for line in reply.strip().splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):  # "Here is the sentence:" on a line of its own
        lines = lines[1:]
    if not lines:
        return None
    text = _PREAMBLE.sub("", lines[0]).strip(_WRAPPING)
    end = _SENTENCE_END.search(text)
    if end:
        text = text[: end.start() + 1]
    text = text.strip(_WRAPPING)
    if not re.search(r"\w", text) or len(text) > MAX_SENTENCE_CHARS or _LOOP.search(text):
        return None
    return text if text[-1] in ".!?" else text + "."


def format_triples(node_labels: list[str], rel_labels: list[str], inverse: list[bool]) -> str:
    """`(A, directed_by, B), (B, ...)`: the walk's triples in walk order, each as the KG states it."""
    return ", ".join(f"({h}, {r}, {t})" for h, r, t in walk_triples(node_labels, rel_labels, inverse))


class LLMVerbalizer:
    """One chat call per distinct walk content; `key` identifies (backend, model, prompt, sampling)
    so that the cache serves exactly the sentences this verbalizer would produce."""

    def __init__(self, chat: ChatModel, conf: VerbalizeConf) -> None:
        self.chat = chat
        self.name: str = conf.verbalizer
        self.system, self.user = prompt_texts(conf.prompt)
        self.fallback = TemplateVerbalizer(conf.phrases)
        self.key = verbalizer_key(conf)

    def conversation(self, triples: str) -> list[Message]:
        messages = [{"role": "system", "content": self.system}] if self.system else []
        return messages + [{"role": "user", "content": self.user.replace("{triples}", triples)}]

    def triples(self, walks: pa.Table) -> list[str]:
        """Each walk's triples as its prompt shows them."""
        cols = (walks.column(c).to_pylist() for c in ("node_labels", "rel_labels", "inverse"))
        return [format_triples(n, r, i) for n, r, i in zip(*cols)]

    def content_keys(self, triples: list[str]) -> np.ndarray:
        """Cache keys: this verbalizer's key and the walk's exact prompt."""
        return np.array([hash64(f"{self.key}\x1f{t}") for t in triples], np.int64)

    def ask(self, triples: list[str]) -> list[str | None]:
        """The model's cleaned sentence per walk, None where its reply is unusable. The same
        content under two walk ids is asked once."""
        distinct = list(dict.fromkeys(triples))
        replies = dict(zip(distinct, self.chat.chat([self.conversation(t) for t in distinct])))
        return [clean_sentence(replies[t]) for t in triples]

    def finish(self, walks: pa.Table, sentences: np.ndarray, source: np.ndarray) -> tuple[pa.Array, pa.Array]:
        """Fill the unusable (None) sentences with the template's, marked `fallback`."""
        missing = np.flatnonzero(np.array([s is None for s in sentences], bool))
        if len(missing):
            sentences[missing] = self.fallback.sentences(walks.take(pa.array(missing))).to_pylist()
            source[missing] = "fallback"
        return pa.array(sentences, pa.string()), pa.array(source, pa.string())

    def verbalize(self, walks: pa.Table) -> tuple[pa.Array, pa.Array]:
        """(sentences, source): source is `llm`, or `fallback` where the reply was unusable."""
        sentences = np.empty(walks.num_rows, object)
        sentences[:] = self.ask(self.triples(walks))
        return self.finish(walks, sentences, np.full(walks.num_rows, "llm", object))


def verbalizer_key(conf: VerbalizeConf) -> int:
    """What decides an LLM verbalizer's sentences: backend, model, prompt and sampling. Not the
    endpoint URL, batch sizes or actors: they change where and how fast, not what."""
    system, user = prompt_texts(conf.prompt)
    identity = {"backend": conf.verbalizer, "model": conf.llm.model, "system": system, "user": user,
                "max_tokens": conf.llm.max_tokens, "temperature": conf.llm.temperature}
    return hash64(json.dumps(identity, sort_keys=True))


def prompt_texts(prompt: PromptConf) -> tuple[str, str]:
    system = prompt.system or PAPER_SYSTEM_PROMPT
    user = prompt.user or PAPER_USER_PROMPT
    if "{triples}" not in user:
        raise KgwalkError("verbalize.prompt.user: the prompt must contain {triples}, where the walk goes")
    return system, user
