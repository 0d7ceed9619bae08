"""Deterministic template verbalizer: 'Kismet was directed by William Dieterle, which ...'.

Relation labels become phrases from a per-KG map in conf (forward and inverse), with an
automatic phrasing for relations the map does not know, from the relation's name as real KGs
spell it: snake_case, camelCase, dotted or slashed paths (`people.person.gender`, a URI), and
explicit inverses (`plays_for_country_inverse`, `inverse_directed_by`). A phrase may hold `{}`
where the next entity goes ("is the country {} plays for"); without one the entity follows it.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.errors import KgwalkError
from kgwalk.kg.relations import relation_words, without_inverse_marker

# What a sentence puts before its first step's phrase, before each later one's, and at its end (`A p1 B, which p2 C.`)
FIRST_STEP, LATER_STEP, END = " ", ", which ", "."
# Fewer walks than this are made sentence by sentence: a question's few dozen shown walks took 0.26 ms through the
# column-wise kernels' fixed cost, 0.11 ms one at a time (the two are equal at about 100 walks)
FEW_WALKS = 64
_STEP_PREFIXES = pa.array([FIRST_STEP, LATER_STEP], pa.string())
PREPOSITIONS = frozenset(("by", "in", "of", "to", "for", "from", "with", "on", "at", "into", "as", "about", "under", "within"))
_COPULAS = frozenset(("is", "was", "are", "were"))
# Irregular participles -> their past tense ("written by" inverts to "wrote"); regular ones are equal.
_IRREGULAR_PAST = {
    "written": "wrote", "sung": "sang", "drawn": "drew", "given": "gave", "taken": "took", "spoken": "spoke",
    "chosen": "chose", "driven": "drove", "begun": "began", "eaten": "ate", "seen": "saw", "known": "knew",
    "grown": "grew", "thrown": "threw", "flown": "flew", "ridden": "rode", "stolen": "stole", "beaten": "beat",
    "broken": "broke", "worn": "wore", "shown": "showed", "done": "did", "gone": "went",
}
_IRREGULAR_PARTICIPLES = frozenset(_IRREGULAR_PAST) | {"born", "made", "held", "led", "built", "sold", "won", "told", "found", "set", "put"}
_PARTICIPLE_OF = {past: participle for participle, past in _IRREGULAR_PAST.items()}  # "wrote" -> "written"
# Pasts of verbs that take no object: before a preposition they are active ("acted in"), not passive ("located in")
_INTRANSITIVE_PASTS = frozenset({"acted", "starred", "appeared", "played", "performed", "worked", "lived", "resided", "studied",
                                 "graduated", "competed", "participated", "served", "died", "belonged", "stayed", "debuted",
                                 "retired", "emigrated", "immigrated"})


def is_participle(word: str) -> bool:
    """Whether a lower-cased word is a past participle: "-ed" ("directed", "based") or an irregular one ("born", "written")."""
    return word.endswith("ed") or word in _IRREGULAR_PARTICIPLES


def _is_third_person_verb(word: str) -> bool:
    """`plays`, `lives`, `belongs` (before a preposition, a plural noun is rarer than a verb)."""
    return len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def _phrases_of_words(words: list[str]) -> tuple[str, str]:
    """(forward, inverse) phrase of a relation named by `words` (see fallback_phrases)."""
    copula = words[0] in _COPULAS and len(words) > 1
    if copula or (words[0] in ("has", "have") and len(words) > 1):
        words = words[1:]
        if not copula and not words[0].endswith("ed"):  # has_genre; has_aged reads as aged
            return f"has {' '.join(words)}", f"is the {' '.join(words)} of"
    text = " ".join(words)
    if copula and words in (["a"], ["an"]):  # is_a, isA
        return f"is {text}", "has instance"
    if len(words) > 1 and words[-1] == "by":  # directed_by: passive, its inverse active
        doer = " ".join(words[:-1])
        return f"was {doer} by", " ".join(_IRREGULAR_PAST.get(w, w) for w in words[:-1])
    if len(words) > 1 and words[0] in PREPOSITIONS:  # in_language
        return f"is {text}", f"is the {' '.join(words[1:])} of"
    prep = next((i for i, w in enumerate(words) if i > 0 and w in PREPOSITIONS), None)
    verbal = is_participle(words[0]) or _is_third_person_verb(words[0])
    if prep is not None and verbal:
        passive = is_participle(words[0]) and words[0] not in _INTRANSITIVE_PASTS
        verb = ("is " if passive else "") + " ".join(words[: prep + 1])
        after = " ".join(words[prep + 1 :])
        if after:  # plays_for_country: the words after the preposition say what the object is
            return f"{verb} {after}", f"is the {after} {{}} {verb}"
        if passive:  # located_in
            return verb, f"has {{}} {' '.join(words)} it"
        return verb, f"is what {{}} {verb}"  # plays_for, ACTED_IN
    if prep is None and len(words) == 2 and _is_third_person_verb(words[0]) and not is_participle(words[1]):  # wears_number
        return text, f"is the {words[1]} {{}} {words[0]}"
    if prep == len(words) - 1:  # capital_of, isPartOf
        return f"is {'' if copula else 'the '}{text}", f"has {' '.join(words[:-1])}"
    if len(words) == 1 and words[0].endswith("ed"):  # directed, aged: a verb in the past
        return text, f"was {text} by"
    if len(words) == 1 and words[0] in _PARTICIPLE_OF:  # WROTE, a property graph's relation type
        return text, f"was {_PARTICIPLE_OF[words[0]]} by"
    return f"has {text}", f"is the {text} of"


def fallback_phrases(relation: str) -> tuple[str, str]:
    """(forward, inverse) phrase for a relation no map covers, from its name alone.

    `directed_by` -> ('was directed by', 'directed'); `in_language` -> ('is in language',
    'is the language of'); `has_genre` / `genre` / `people.person.gender` -> ('has gender', 'is
    the gender of'); `plays_for_country` -> ('plays for country', 'is the country {} plays for');
    `capitalOf` -> ('is the capital of', 'has capital'); `*_inverse` / `inverse_*`: the phrases
    of the relation it inverts, swapped.
    """
    words = relation_words(relation)
    base = without_inverse_marker(words)
    inverse = base is not None
    if base is not None:
        words = base
    if not words:
        return relation, f"is the {relation} of"
    forward, backward = _phrases_of_words(words)
    return (backward, forward) if inverse else (forward, backward)


def relation_phrases(relation: str, phrase_map: dict[str, list[str]]) -> tuple[str, str]:
    if relation in phrase_map:
        pair = phrase_map[relation]
        if len(pair) != 2:
            raise KgwalkError(f"verbalize.phrases.{relation} must be [forward phrase, inverse phrase]")
        return pair[0], pair[1]
    return fallback_phrases(relation)


def around(phrase: str) -> tuple[str, str]:
    """A phrase as (text before the next entity, text after it)."""
    before, slot, after = phrase.partition("{}")
    return (before, after) if slot else (phrase + " ", "")


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
            before, after = around(self.phrase(rel, inv))
            text += (FIRST_STEP if i == 0 else LATER_STEP) + before + node_labels[i + 1] + after
        return text + END

    def verbalize(self, walks: pa.Table) -> tuple[pa.Array, pa.Array]:
        sentences = self.sentences(walks)
        return sentences, pa.repeat(pa.scalar("template"), len(sentences))

    def sentences(self, walks: pa.Table) -> pa.Array:
        """Column-wise over the whole batch (Arrow string kernels, no Python per walk): each step
        becomes the piece `" p B"` or `", which p B"` (the phrase around B where it holds `{}`),
        and a walk's pieces are joined after its root. Fewer than FEW_WALKS: `sentence` each."""
        if walks.num_rows < FEW_WALKS:
            columns = (walks.column(c).to_pylist() for c in ("node_labels", "rel_labels", "inverse"))
            return pa.array([self.sentence(*walk) for walk in zip(*columns)], pa.string())
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
        phrase_parts = [around(self.phrase(r, i)) for r in encoded.dictionary.to_pylist() for i in (False, True)]
        step_phrase = pa.array(encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64) * 2 + inverse)
        befores, afters = (pa.array([a[side] for a in phrase_parts], pa.string()).take(step_phrase) for side in (0, 1))
        step_in_walk = np.arange(len(inverse)) - np.repeat(np.cumsum(step_counts) - step_counts, step_counts)
        prefixes = _STEP_PREFIXES.take(pa.array((step_in_walk > 0).view(np.int8)))  # not strings from NumPy: 30 us a question
        pieces = pc.binary_join_element_wise(prefixes, befores, next_labels, afters, "")
        offsets = np.concatenate([[0], np.cumsum(step_counts)]).astype(np.int32)
        rests = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), pieces), "")
        return pc.binary_join_element_wise(node_values.take(pa.array(firsts)), rests, END, "")
