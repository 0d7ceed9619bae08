"""Entity labels found in a question: the lexical half of hybrid node search.

Every label is kept as a 64-bit hash of its match key (below) in one sorted array (8 bytes an
entity, no strings in memory), and every span of whole words of the question is hashed the same
way and looked up. Spans in [brackets] are explicit mentions and rank first, then longer spans
before shorter ones; a span inside a longer match is not a mention of its own.

Users type plain questions, so the match key forgives what they do not type the way the KG
spells it: case, underscores for spaces (`Abra_Catastrophe!`), punctuation at the edges of words
(`Horton Hears a Who!`, `(24755) 1992 UQ6`), a possessive `'s`; a label's parenthesized
qualifier (`Kismet (1944 film)`) may be left out. A KG entity named like a common word (`artist`,
`album`, a tag `director`) is a weak mention: it counts only when the question names nothing else.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgwalk.kg import align, ids as kg_ids, relations as kg_relations
from kgwalk.kg.align import EDGE_PUNCT, QUALIFIER, WORD, label_words
from kgwalk.kg.ids import hash64
from kgwalk.kg.relations import relation_words
from kgwalk.query.table_cache import cached_arrays
from kgwalk.storage import read_version

# The longest entity label the lexicon finds in a question, in words: every span up to this length
# is looked up (a question of n words has about 12n spans), and longer labels are rare.
MAX_SPAN_WORDS = 12
_BRACKETED = re.compile(r"\[([^\[\]]+)\]")
_POSSESSIVE = ("'s", "’s")
_DIGIT = re.compile(r"\d")
# Function words of questions: an entity with such a one-word name ("It", "Up", "The") is only
# meant when nothing else is named.
_FUNCTION_WORDS = frozenset(
    {
        "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "before", "by",
        "can", "could", "did", "do", "does", "done", "for", "from", "had", "has", "have", "he", "her", "hers", "him",
        "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our",
        "out", "over", "she", "so", "some", "than", "that", "the", "their", "them", "then", "there", "these", "they",
        "this", "those", "to", "too", "under", "up", "us", "was", "we", "were", "what", "when", "where", "which",
        "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your"
    }
)


@dataclass(frozen=True)
class Mention:
    entity: int
    text: str
    bracketed: bool


def _key(words: list[str]) -> int:
    return hash64(" ".join(words))


def label_key(text: str) -> int:
    return _key(label_words(text))


def label_keys(label: str, words: list[str] | None = None) -> list[int]:
    """The keys a label (of these key words) is found by: its own, and without parenthesized
    qualifiers when that leaves a name ("Kismet (1944 film)" is also "Kismet"; "(24755) 1992 UQ6"
    also "1992 UQ6")."""
    words = label_words(label) if words is None else words
    keys = [_key(words)] if words else []
    if "(" in label:
        bare = label_words(QUALIFIER.sub(" ", label))
        if bare and bare != words:
            keys.append(_key(bare))
    return keys


@dataclass(frozen=True)
class _Span:
    first: int  # index of its first word
    words: int
    start: int  # characters of the question it covers
    end: int


def _spans(question: str) -> tuple[list[str], list[_Span]]:
    """The question's key words and every span of up to MAX_SPAN_WORDS of them, longest first."""
    words, bounds = [], []
    for m in WORD.finditer(question):
        raw = m.group()
        stripped = raw.strip(EDGE_PUNCT)
        if not stripped:
            continue
        start = m.start() + raw.index(stripped)
        words.append(stripped.casefold())
        bounds.append((start, start + len(stripped)))
    spans = [
        _Span(i, n, bounds[i][0], bounds[i + n - 1][1])
        for n in range(min(MAX_SPAN_WORDS, len(words)), 0, -1)
        for i in range(len(words) - n + 1)
    ]
    return words, spans


def _with_its_brackets(question: str, start: int, end: int) -> str:
    """The question's text from start to end, with a bracket its edge words lost as punctuation where the text holds the
    other one: "Kismet (1944 film)", "(24755) 1992 UQ6" (a mention masks all of the label it names)."""
    text = question[start:end]
    if text.count("(") > text.count(")") and question.startswith(")", end):
        text += ")"
    elif text.count(")") > text.count("(") and start > 0 and question[start - 1] == "(":
        text = "(" + text
    return text


class EntityLexicon:
    """Label key hash -> entity ids, for finding entities named in a question. Beside each key:
    whether its entity is named like a common word, and whether its label has capitals."""

    def __init__(self, entities: pa.Table, relations: pa.Table | None = None) -> None:
        ids = entities.column("id").to_numpy()
        labels = [label or "" for label in entities.column("label").to_pylist()]
        words = [label_words(label) for label in labels]
        capitalized = np.fromiter((t != t.lower() for t in labels), bool, len(labels))
        # one-word labels found only once their punctuation is dropped: "star" is not the film "Star!"
        punctuated = np.fromiter((len(w) == 1 and w[0] != t.strip().casefold() for t, w in zip(labels, words)), bool, len(labels))
        common = self._named_like_common_words(labels, words, capitalized, relations)
        key_lists = [label_keys(label, w) for label, w in zip(labels, words)]
        owners = np.repeat(np.arange(len(ids)), [len(k) for k in key_lists])
        keys = np.fromiter((k for ks in key_lists for k in ks), np.int64, len(owners))
        order = np.lexsort((common[owners], keys))  # within a key, named entities before common words
        self._keys, self._ids = keys[order], ids[owners[order]]
        self._common, self._capitalized = common[owners[order]], capitalized[owners[order]]
        self._punctuated = punctuated[owners[order]]

    def arrays(self) -> dict[str, np.ndarray]:
        """All it holds, for `from_arrays` (the table cache stores them)."""
        return {"keys": self._keys, "ids": self._ids, "common": self._common, "capitalized": self._capitalized, "punctuated": self._punctuated}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> EntityLexicon:
        lexicon = cls.__new__(cls)
        lexicon._keys, lexicon._ids, lexicon._common = arrays["keys"], arrays["ids"], arrays["common"]
        lexicon._capitalized, lexicon._punctuated = arrays["capitalized"], arrays["punctuated"]
        return lexicon

    @staticmethod
    def _named_like_common_words(labels: list[str], words: list[list[str]], capitalized: np.ndarray,
                                 relations: pa.Table | None) -> np.ndarray:
        """Per label (with its key words and whether it has capitals), whether it names its entity
        like a common word: in a KG whose names are mostly capitalized, a label without capitals
        or digits (a tag, a class: `director`, `artist`); in any KG, a one-word label that is also
        a word of a relation name (`album` beside `album_artist`)."""
        cased = capitalized | np.fromiter((_DIGIT.search(t) is not None for t in labels), bool, len(labels))
        lowercase_is_common = bool(len(labels)) and cased.mean() >= 0.5
        named_in_relations = {w.lower() for name in (relations.column("label").to_pylist() if relations is not None else [])
                              for w in relation_words(name or "")}
        in_relations = np.fromiter((len(w) == 1 and w[0] in named_in_relations for w in words), bool, len(words))
        return (lowercase_is_common & ~cased) | in_relations

    def __len__(self) -> int:
        return len(self._keys)

    def _range(self, key: int) -> slice:
        return slice(int(np.searchsorted(self._keys, key, "left")), int(np.searchsorted(self._keys, key, "right")))

    def kind(self, noun: list[str]) -> int | None:
        """The class-like entity a question's answer noun names ("which [chemist] was born in B": the profession), or, for
        a plural ("which chemists"), its singular's: that of the longest run of the noun's first words that names one; None
        where none does. Class-like: named like a common word (see `_named_like_common_words`: lowercase in a KG of
        capitalized names), so a capitalized homonym is no kind (the music genre "Country" for "which country"). Such
        labels are weak mentions beside a name, so only this finds them."""
        for size in range(len(noun), 0, -1):  # the words may run on into a verb ("which defender plays for B"): shorter runs next
            words = [w.lower() for w in noun[:size]]
            forms = [words] + [[*words[:-1], words[-1][: -len(end)]] for end in ("es", "s") if words[-1].endswith(end) and len(words[-1]) > len(end) + 2]
            for form in forms:
                at = self._range(label_key(" ".join(form)))
                classes = [int(entity) for entity, common in zip(self._ids[at], self._common[at]) if common]
                if classes:
                    return classes[0]
        return None

    def ids_of(self, label: str) -> np.ndarray:
        """Entities with this label (case-insensitive, see the module doc); usually one, named
        entities before common words."""
        return self._ids[self._range(label_key(label))]

    def mentions(self, question: str) -> list[Mention]:
        """Entities named in the question, best first, each once. Bracketed spans are the user
        saying which entity they mean: when there are any, only they count. Otherwise the longest
        spans that name entities; weak mentions count only when there is nothing else: a common
        word (see the module doc), a one-word function word or letter ("It", "Up"), a one-word label
        found only without its punctuation, or a span typed in lowercase that names a capitalized
        label in a question that capitalizes names ("star" in "what did Adam Arkin star in" is not
        the film "Star!")."""
        found: dict[int, Mention] = {}
        for text in _BRACKETED.findall(question):
            for entity in self.ids_of(text):
                found.setdefault(int(entity), Mention(int(entity), text, True))
        if found:
            return list(found.values())
        words, spans = _spans(question)
        capitalizes = any(c.isupper() for c in question[1:])
        covered = np.zeros(len(words), bool)
        strong: dict[int, Mention] = {}
        weak: dict[int, Mention] = {}
        for span in spans:
            if covered[span.first : span.first + span.words].any():
                continue
            at, possessive = self._span_range(words[span.first : span.first + span.words])
            if at.start == at.stop:
                continue
            covered[span.first : span.first + span.words] = True
            # the mention stops before a possessive it was found without: masked, "E's spouse" still says whose
            text = _with_its_brackets(question, span.start, span.end - possessive * len(_POSSESSIVE[0]))
            one_word = words[span.first] if span.words == 1 else None  # a letter is weak ("A"); a digit names a number ("9")
            function_word = one_word is not None and (one_word in _FUNCTION_WORDS or (len(one_word) == 1 and not one_word.isdigit()))
            lowercase = capitalizes and text.islower()
            flags = zip(self._ids[at], self._common[at], self._capitalized[at], self._punctuated[at])
            for entity, common, capitalized, punctuated in flags:
                into = weak if function_word or common or punctuated or (lowercase and capitalized) else strong
                into.setdefault(int(entity), Mention(int(entity), text, False))
        return list((strong or weak).values())

    def _span_range(self, words: list[str]) -> tuple[slice, bool]:
        """Where these words' key is among the keys, and whether it was found only without a possessive ending."""
        at = self._range(_key(words))
        if at.start == at.stop and words[-1].endswith(_POSSESSIVE):  # "Kismet's director", "Kismet (1944 film)'s director"
            return self._range(_key([*words[:-1], words[-1][:-2].strip(EDGE_PUNCT)])), True
        return at, False


def read_lexicon(entities: str, relations: str | None = None) -> EntityLexicon:
    """The lexicon of these tables' current versions (entities' id and label, relations' label),
    from the table cache when one was built from them before (kgwalk/query/table_cache.py)."""
    tables = [entities] if relations is None else [entities, relations]

    def build(versions: dict[str, int]) -> dict[str, np.ndarray]:
        relation_labels = None if relations is None else read_version(relations, versions[relations], ["label"])
        return EntityLexicon(read_version(entities, versions[entities], ["id", "label"]), relation_labels).arrays()

    # the match keys are this module's and kgwalk.kg's code: a change to either builds the lexicon again
    return EntityLexicon.from_arrays(cached_arrays("lexicon", tables, [sys.modules[__name__], align, kg_ids, kg_relations], build))
