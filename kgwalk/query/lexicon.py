"""Entity labels found in a question: the lexical half of hybrid node search.

Every label is kept as a 64-bit hash of its case-folded, normalized text in one sorted array
(8 bytes an entity, no strings in memory), and every span of whole words of the question is
hashed the same way and looked up. Spans in [brackets] are explicit mentions and rank first,
then longer spans before shorter ones; a span inside a longer match is not a mention of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgwalk.kg.ids import hash64, normalize_label

MAX_SPAN_WORDS = 12
_WORD = re.compile(r"\S+")
_BRACKETED = re.compile(r"\[([^\[\]]+)\]")
_EDGE_PUNCT = "?!.,;:\"'()[]{}"


@dataclass(frozen=True)
class Mention:
    entity: int
    text: str
    bracketed: bool


def label_key(text: str) -> int:
    return hash64(normalize_label(text).casefold())


def _word_spans(question: str) -> list[tuple[int, int, str]]:
    """(first word, word count, text) of every span of whole words, longest first."""
    words = [w.strip(_EDGE_PUNCT) for w in _WORD.findall(question)]
    spans = []
    for n in range(min(MAX_SPAN_WORDS, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            # a span keeps inner punctuation ("Ocean's Eleven", "Spider-Man: Far") but not its edges
            text = " ".join(words[i : i + n]).strip(_EDGE_PUNCT)
            if text:
                spans.append((i, n, text))
    return spans


class EntityLexicon:
    """Label hash -> entity ids, for finding entities named in a question."""

    def __init__(self, entities: pa.Table) -> None:
        ids = entities.column("id").to_numpy()
        keys = np.fromiter((label_key(x) for x in entities.column("label").to_pylist()), np.int64, len(ids))
        order = np.argsort(keys, kind="stable")
        self._keys, self._ids = keys[order], ids[order]

    def __len__(self) -> int:
        return len(self._keys)

    def _lookup(self, key: int) -> np.ndarray:
        lo, hi = np.searchsorted(self._keys, key, "left"), np.searchsorted(self._keys, key, "right")
        return self._ids[lo:hi]

    def ids_of(self, label: str) -> np.ndarray:
        """Entities with this label (case-insensitive); usually one."""
        return self._lookup(label_key(label))

    def mentions(self, question: str) -> list[Mention]:
        """Entities named in the question, best first, each once. Bracketed spans are the user
        saying which entity they mean: when there are any, only they count."""
        found: dict[int, Mention] = {}
        for text in _BRACKETED.findall(question):
            for entity in self.ids_of(text):
                found.setdefault(int(entity), Mention(int(entity), text, True))
        if found:
            return list(found.values())
        spans = _word_spans(question)
        covered = np.zeros(max((i + n for i, n, _ in spans), default=0), bool)
        for i, n, text in spans:
            if covered[i : i + n].any():
                continue
            entities = self.ids_of(text)
            if len(entities):
                covered[i : i + n] = True
                for entity in entities:
                    found.setdefault(int(entity), Mention(int(entity), text, False))
        return list(found.values())
