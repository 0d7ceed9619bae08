"""Deterministic template verbalizer: 'Kismet was directed by William Dieterle, which ...'.

Relation labels become phrases from a per-KG map in conf (forward and inverse), with an
automatic fallback for relations the map does not know.
"""

from __future__ import annotations

import pyarrow as pa

from kgwalk.errors import KgwalkError

_PREPOSITIONS = ("by", "in", "of", "to", "for", "from", "with", "on", "at")


def fallback_phrases(relation: str) -> tuple[str, str]:
    """(forward, inverse) phrase for a relation no map covers.

    `directed_by` -> ('was directed by', 'directed'); `in_language` -> ('is in language',
    'is the language of'); `has_genre` / `genre` -> ('has genre', 'is the genre of').
    """
    words = relation.replace("_", " ").replace("-", " ").split()
    if not words:
        return relation, f"is the {relation} of"
    if words[-1].lower() == "by" and len(words) > 1:
        return "was " + " ".join(words), " ".join(words[:-1])
    if words[0].lower() in _PREPOSITIONS and len(words) > 1:
        return "is " + " ".join(words), f"is the {' '.join(words[1:])} of"
    if words[0].lower() in ("has", "is", "was") and len(words) > 1:
        words = words[1:]
    return f"has {' '.join(words)}", f"is the {' '.join(words)} of"


def relation_phrases(relation: str, phrase_map: dict[str, list[str]]) -> tuple[str, str]:
    if relation in phrase_map:
        pair = phrase_map[relation]
        if len(pair) != 2:
            raise KgwalkError(f"verbalize.phrases.{relation} must be [forward phrase, inverse phrase]")
        return pair[0], pair[1]
    return fallback_phrases(relation)


class TemplateVerbalizer:
    """`A p1 B, which p2 C.`: node labels joined by relation phrases, inverse steps inverted."""

    name = "template"

    def __init__(self, phrase_map: dict[str, list[str]] | None = None) -> None:
        self.phrase_map = phrase_map or {}
        self._cache: dict[tuple[str, bool], str] = {}

    def phrase(self, relation: str, inverse: bool) -> str:
        key = (relation, inverse)
        if key not in self._cache:
            self._cache[key] = relation_phrases(relation, self.phrase_map)[1 if inverse else 0]
        return self._cache[key]

    def sentence(self, node_labels: list[str], rel_labels: list[str], inverse: list[bool]) -> str:
        text = node_labels[0]
        for i, (rel, inv) in enumerate(zip(rel_labels, inverse)):
            text += (" " if i == 0 else ", which ") + self.phrase(rel, inv) + " " + node_labels[i + 1]
        return text + "."

    def verbalize(self, walks: pa.Table) -> pa.Array:
        nodes = walks.column("node_labels").to_pylist()
        rels = walks.column("rel_labels").to_pylist()
        inv = walks.column("inverse").to_pylist()
        return pa.array([self.sentence(n, r, i) for n, r, i in zip(nodes, rels, inv)], pa.string())
