"""Relation names as words, and explicit inverse relations: a KG that states `plays_for` also
as `plays_for_inverse` (or `inverse_plays_for`, `playsForInverse`) says every fact twice.

Pure functions of names; whether a named pair really mirrors is for the edges to confirm
(`kgwalk.walks.graph.mirrored_copies`).
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import pyarrow as pa

INVERSE_MARKERS = frozenset(("inverse", "inv", "reverse", "reversed"))
_PATH = re.compile(r"[./#:]")
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[\s_\-]+")
_WIKIDATA_ID = re.compile(r"P[1-9][0-9]*")  # a Wikidata property's id: P57, wdt:P57, http://www.wikidata.org/prop/direct/P57
_NOT_A_WORD = re.compile(r"[^\w'\s-]+")  # in a Wikidata label: "position played on team / speciality"


def name_words(name: str) -> list[str]:
    """Words of a name: split at `_`, `-`, spaces and camelCase humps; lower-cased except acronyms. A name all in
    capitals has none: it is a property graph's way of writing relation types (`ACTED_IN`, `DIRECTED_BY`)."""
    words = [w for part in _SEPARATORS.split(name) for w in _CAMEL_HUMP.split(part) if w]
    shouted = name.isupper()
    return [w if len(w) > 1 and w.isupper() and not shouted else w.lower() for w in words]


# Prepositions Freebase glues to a participle before them (`location.location.containedby`)
_GLUED_PREPOSITIONS = ("by", "in", "of", "to", "from", "at", "on")


def _unglued(word: str) -> list[str]:
    """A participle and the preposition glued to it, apart ("containedby": contained by); other words as they are."""
    for prep in _GLUED_PREPOSITIONS:
        stem = word[: -len(prep)]
        if word.endswith(prep) and len(stem) >= 5 and stem.endswith("ed"):
            return [stem, prep]
    return [word]


@functools.cache
def wikidata_property_labels() -> dict[str, str]:
    """Wikidata's property ids and their English labels (kgwalk/kg/data/wikidata_properties.tsv, a snapshot of its
    property list: the ids up to P4699)."""
    text = resources.files("kgwalk.kg").joinpath("data/wikidata_properties.tsv").read_text(encoding="utf-8")
    return dict(line.split("\t", 1) for line in text.splitlines() if line and not line.startswith("#"))


def relation_words(relation: str) -> list[str]:
    """The words a relation is read by: those of its last path segment (`people.person.gender`,
    a URI's last part), read as Freebase writes them: a final "s" alone is a plural's "(s)"
    (`people.person.spouse_s`: spouse), a preposition glued to a participle a word of its own
    (`location.location.containedby`: contained by). A Wikidata property id (`P57`, `wdt:P57`)
    reads as its English label ("director"): a KG taken from Wikidata names its relations so, and
    the id alone says nothing of what the relation is."""
    last = _PATH.split(relation.strip().rstrip("./#:"))[-1]
    label = wikidata_property_labels().get(last) if _WIKIDATA_ID.fullmatch(last) else None
    if label is not None:
        return name_words(_NOT_A_WORD.sub(" ", label))
    words = name_words(last)
    if len(words) > 1 and words[-1] == "s":
        words = words[:-1]
    return [part for w in words for part in _unglued(w)]


_FREEBASE_NAME = re.compile(r"/?([a-z][a-z0-9_]*)[./]([a-z][a-z0-9_]*)[./]([a-z][a-z0-9_]*)")


def subject_kind(relation: str) -> list[str]:
    """The words of the kind of a relation's subjects where its name says it: a Freebase name's type, its middle part
    (`film.film.starring`, `/film/film/starring`: a film stars someone; `people.person.nationality`: a person's).
    None for any other name: a URI's parts before its last are a namespace, not a type."""
    found = _FREEBASE_NAME.fullmatch(relation.strip())
    return name_words(found.group(2)) if found else []


def without_inverse_marker(words: list[str]) -> list[str] | None:
    """The words of the relation these words name the inverse of, or None if they name no inverse."""
    if len(words) > 1 and words[-1] in INVERSE_MARKERS:
        return words[:-1]
    if len(words) > 1 and words[0] in INVERSE_MARKERS:
        return words[1:]
    return None


def inverse_relation_pairs(relations: pa.Table) -> list[tuple[int, int]]:
    """(relation id, id of the relation named as its inverse) for every relation of `relations`
    (columns id, label) whose name is another's with an inverse marker: `r` and `r_inverse`."""
    ids, labels = relations.column("id").to_pylist(), relations.column("label").to_pylist()
    words = [[w.lower() for w in name_words(label or "")] for label in labels]
    by_words: dict[tuple[str, ...], list[int]] = {}
    for rid, w in zip(ids, words):
        by_words.setdefault(tuple(w), []).append(rid)
    pairs = []
    for rid, w in zip(ids, words):
        base = without_inverse_marker(w)
        if base is not None:  # `plays_for` and `playsFor` read alike: either may be the one inverted
            pairs += [(b, rid) for b in by_words.get(tuple(base), [])]
    return sorted(pairs)
