"""Deterministic template verbalizer: 'Kismet was directed by William Dieterle, which ...'.

Relation labels become phrases from a per-KG map in conf (forward and inverse), with an
automatic fallback for relations the map does not know.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

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
        """One walk's sentence (what `verbalize` computes column-wise)."""
        text = node_labels[0]
        for i, (rel, inv) in enumerate(zip(rel_labels, inverse)):
            text += (" " if i == 0 else ", which ") + self.phrase(rel, inv) + " " + node_labels[i + 1]
        return text + "."

    def verbalize(self, walks: pa.Table) -> tuple[pa.Array, pa.Array]:
        sentences = self.sentences(walks)
        return sentences, pa.repeat(pa.scalar("template"), len(sentences))

    def sentences(self, walks: pa.Table) -> pa.Array:
        """Column-wise over the whole batch (Arrow string kernels, no Python per walk): each step
        becomes the piece `" p B"` or `", which p B"`, and a walk's pieces are joined after its root."""
        nodes = walks.column("node_labels").combine_chunks()
        rels = walks.column("rel_labels").combine_chunks()
        inverse = walks.column("inverse").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        node_counts = nodes.value_lengths().to_numpy(zero_copy_only=False)
        step_counts = rels.value_lengths().to_numpy(zero_copy_only=False)
        node_values = nodes.flatten()
        firsts = np.zeros(len(node_counts), np.int64)
        firsts[1:] = np.cumsum(node_counts)[:-1]
        is_first = np.zeros(len(node_values), bool)
        is_first[firsts] = True
        next_labels = node_values.filter(pa.array(~is_first))
        # phrases: one lookup per distinct (relation, direction), then a take per step
        encoded = pc.dictionary_encode(rels.flatten())
        table = pa.array([self.phrase(r, i) for r in encoded.dictionary.to_pylist() for i in (False, True)], pa.string())
        phrases = table.take(pa.array(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) * 2 + inverse))
        step_in_walk = np.arange(len(inverse)) - np.repeat(np.cumsum(step_counts) - step_counts, step_counts)
        prefixes = pa.array(np.where(step_in_walk == 0, " ", ", which "), pa.string())
        pieces = pc.binary_join_element_wise(prefixes, phrases, " ", next_labels, "")
        offsets = np.concatenate([[0], np.cumsum(step_counts)]).astype(np.int32)
        rests = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), pieces), "")
        return pc.binary_join_element_wise(node_values.take(pa.array(firsts)), rests, ".", "")
