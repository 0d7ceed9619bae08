"""The label-free relation-path prior (query.rerank=synthetic): each relation path among a topic's
candidate walks is scored against the question with its topic masked, and a softmax over the paths
gives each walk's share; a walk scores cosine + query.rerank_weight x that share, as with the
labelled prior (kgwalk/query/paths.py). The terms, each set under query.synthetic.* and explained
in docs/synthetic-prior.md: the cosine of the question to the path read as questions
(kgwalk/query/corpus_paths.py; centred, mixed with content words alone), a step count
(hop_weight; a step more where the kind asked for lies one step on), word coverage, answer focus (kgwalk/query/words.py),
answer type (the ends' labels), the order the question names relations in, and peers (a relation there and back, where
the question asks for what shares something with its topic)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from itertools import chain

import numpy as np

from kgwalk.config import Config, SyntheticConf
from kgwalk.embed.model import Embedder
from kgwalk.errors import KgwalkError
from kgwalk.kg.relations import subject_kind
from kgwalk.query.hits import WalkHit
from kgwalk.query.corpus_paths import (embed_cached, parse_signature, path_readings, phrase_words, read_category_objects, read_corpus_paths, read_covering_steps,
                                       read_mirrored_relations, unit_vectors)
from kgwalk.query.temporal import label_year
from kgwalk.query.words import (ARTICLES, CATEGORY, CHAIN_PREPOSITIONS, GENERIC_KINDS, GRAND, PLACE_KINDS, PLACE_LEVELS, SETTLEMENT_KINDS, SYNONYMS, TWICE_PREFIXES, adverbs, answer_noun, asks_for_a_peer, asks_for_peers, asks_when, asks_where, compound_words, content_words, expected_hops,
                                focus_weights, inverse_role, is_search, kin_by_marriage, linked_phrases, named_topics, names_word, path_order, relation_mentions, relation_word_matches, same_stem, shared_words,
                                synonym_index, topic_kind_words, topic_owned_words, unlinked_names, without_words, words_at, words_of)
from kgwalk.verbalize.template import PREPOSITIONS, TemplateVerbalizer
from kgwalk.walks.labels import signature

MAX_WORDS = 200_000  # word vectors a prior keeps: a server's questions keep bringing new words


@lru_cache(maxsize=1 << 16)  # a path's pairs are the same for every question; a KG has thousands of paths
def peer_pairs(sig: str, mirrored: frozenset[tuple[str, str]] = frozenset()) -> tuple[bool, ...]:
    """Per pair of consecutive steps of the relation path, whether the second comes straight back by the first's relation
    ("directed_by>|<directed_by": to what shares a director with the topic), or the same way by a relation stating it
    the other way round (`mirrored`, pairs of relations: "children>|parents>" goes to E's children's parents, E and
    their co-parent, as "children>|<children" does)."""
    rels, inverse = parse_signature(sig)
    return tuple((rels[i] == rels[i + 1] and inverse[i] != inverse[i + 1]) or ((rels[i], rels[i + 1]) in mirrored and inverse[i] == inverse[i + 1])
                 for i in range(len(rels) - 1))


@lru_cache(maxsize=8)  # the terms of one question's paths share it
def step_table(sigs: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    """The distinct steps of the relation paths, and per path the place of each of its steps among them, padded with
    len(steps) past its last. A term worked out once per step (an array with one more entry, 0 or False, for the
    padding) is then read per path by NumPy, not by a Python loop per path and step. Read only: callers share it."""
    paths = [sig.split("|") for sig in sigs]
    place: dict[str, int] = {}
    for path in paths:
        for step in path:
            place.setdefault(step, len(place))
    width, pad = max(map(len, paths), default=0), len(place)
    at = np.array([[*(place[step] for step in path), *[pad] * (width - len(path))] for path in paths], np.intp).reshape(len(paths), width)
    at.setflags(write=False)
    return list(place), at


def by_last_step(sigs: Sequence[str], test: Callable[[str], bool]) -> np.ndarray:
    """Per relation path, `test` of its last step, tested once per distinct last step."""
    last = [sig.rsplit("|", 1)[-1] for sig in sigs]
    found = {step: test(step) for step in dict.fromkeys(last)}
    return np.array([found[step] for step in last], bool)


def ends_among(walks: Sequence[WalkHit], nodes: np.ndarray) -> list[bool]:
    """Per walk, whether its end node is one of `nodes` (ids)."""
    return np.isin(np.fromiter((w.nodes[-1] for w in walks), np.int64, len(walks)), nodes).tolist() if len(nodes) else [False] * len(walks)


def steps_named(word: str) -> int:
    """For how many steps a word naming a relation names it: two with one of TWICE_PREFIXES ("grandchildren",
    "co-starred") or for kin by marriage (`kin_by_marriage`: "father-in-law", the spouse's and the parents' steps), else one."""
    return 2 if word.startswith(TWICE_PREFIXES) or kin_by_marriage(word) else 1


def names_kind(kind: Sequence[str], noun: Sequence[str]) -> bool:
    """Whether a phrase's kind words and an asked noun name one kind: each word of either a form of one of the other's
    ("national team" and "national teams"; not "national team" and "teams")."""
    return all(any(same_stem(k, n) for n in noun) for k in kind) and all(any(same_stem(k, n) for k in kind) for n in noun)


def reading_verbalizers(verbalizer: TemplateVerbalizer) -> list[TemplateVerbalizer]:
    """What the prior reads a relation path with: the phrase map's phrases, then the relation names' own (automatic
    phrases) where a map changes them."""
    return [verbalizer, TemplateVerbalizer({})] if verbalizer.phrase_map else [verbalizer]


class SyntheticPrior:
    """Question vectors by path (signature); `rerank` has the labelled PathPrior's interface."""

    def __init__(self, paths: list[tuple[list[str], list[bool]]], verbalizer: TemplateVerbalizer, embedder: Embedder, model: str,
                 settings: SyntheticConf, *, words_embedder: Embedder | None = None, words_model: str | None = None,
                 mirrors: dict[str, set[str]] | None = None, covers: dict[str, set[str]] | None = None,
                 objects: dict[str, np.ndarray] | None = None) -> None:
        """`settings`: query.synthetic, its ranges checked as the config loaded. The word vectors of its coverage and focus
        terms come from `words_embedder` (`words_model`'s; the prior's own embedder and model when None). `mirrors`: per
        relation, those stating it the other way round (`read_mirrored_relations`); `covers`: per step, the category
        relations' steps reaching most of what it reaches (`read_covering_steps`); `objects`: per category relation, its
        objects' node ids, sorted (`read_category_objects`)."""
        self.settings = s = settings
        self.mirrors = mirrors or {}
        self.mirrored = frozenset((a, b) for a, others in self.mirrors.items() for b in others)
        self.covers = covers or {}
        self.objects = objects or {}
        self.kind_nodes: dict[tuple[str, ...], np.ndarray] = {}  # per asked noun, the nodes a category names so (`_nodes_of_kind`)
        self.embedder = embedder
        self.verbalizers = reading_verbalizers(verbalizer)
        self.readings = 2 * len(self.verbalizers)
        self.words_embedder = words_embedder or embedder
        self.questions = {signature(r, i): path_readings(*self._read_as(r, i), self.verbalizers) for r, i in paths}
        # per form (the whole questions; their content words where mixed in): path -> (readings, dim)
        # vectors, and the mean path question the form's cosines are taken less (0: no centring)
        self.forms = ["whole", "content"] if s.content_mix > 0 else ["whole"]
        self.vectors: dict[str, dict[str, np.ndarray]] = {form: {} for form in self.forms}
        self.centers: dict[str, np.ndarray | float] = dict.fromkeys(self.forms, 0.0)
        # per form, the row of each path and (paths, readings, dim) its unit vectors less the centre (`_cosines`)
        self.centred: dict[str, tuple[dict[str, int], np.ndarray]] = {form: ({}, np.empty(0, np.float32)) for form in self.forms}
        if self.questions:
            for form in self.forms:
                texts = [self._form(q, form) for pair in self.questions.values() for q in pair]
                vectors = embed_cached(embedder, model, texts)
                self.vectors[form] = dict(zip(self.questions, vectors.reshape(len(self.questions), self.readings, -1)))
                if s.center:
                    self.centers[form] = vectors.mean(axis=0)
        self.word_vectors: dict[str, np.ndarray] = {}
        self.path_words: dict[str, list[list[str]]] = {}  # per path, the words of each reading from the answer
        self.step_words: dict[str, list[list[str]]] = {}  # per step, the words of each verbalizer's phrases
        self.end_kinds: dict[str, list[list[str]]] = {}  # per step, the words naming its end's kind (`_end_kinds`)
        self.start_kinds: dict[str, list[list[str]]] = {}  # per step, the words naming its start's kind (`_start_kinds`)
        self.verb_objects: dict[str, list[list[str]]] = {}  # per step, its verb's object words (`_verb_objects`)
        self.step_relations: dict[str, list[set[str]]] = {}  # per path, the relations each step takes (`_step_relations`)
        self.relations_of: dict[str, list[str]] = {}  # per word of a relation phrase (both ways, every verbalizer), its relations
        self.relations_read: set[str] = set()  # the relations whose words relations_of holds
        self.word_relations: dict[str, dict[str, frozenset[str]]] = {}  # per question word, its relation_word_matches
        self.synonyms_of = synonym_index([*SYNONYMS, *(group.split() for group in s.synonyms)])  # the KG's own groups last
        self._add_relations(self.questions)
        if (s.coverage or s.focus) and self.questions:
            vocabulary = list(dict.fromkeys(w for sig in self.questions for words in self._path_words(sig) for w in words))
            self.word_vectors = dict(zip(vocabulary, embed_cached(self.words_embedder, words_model or model, vocabulary)))

    @staticmethod
    def _form(text: str, form: str) -> str:
        return content_words(text) if form == "content" else text

    @property
    def center(self) -> np.ndarray | float:
        """The mean path question (whole questions): what every path of this KG shares."""
        return self.centers["whole"]

    @classmethod
    def load(cls, cfg: Config, embedder: Embedder, model: str, *, words_embedder: Embedder | None = None) -> SyntheticPrior:
        """`embedder`: `model`'s, query.prior_encoder's (the walks' embed.model by default); `words_embedder`: embed.model's,
        for the word vectors of query.synthetic_coverage (the prior's own when None)."""
        from kgwalk.storage import table_exists

        if not table_exists(cfg.table("walks")):
            raise KgwalkError(f"query.rerank=synthetic reads relation paths from {cfg.table('walks')}, which does not exist "
                              "(run `kgwalk walks`, or --set query.rerank=none)")
        paths = read_corpus_paths(cfg.table("walks"), cfg.table("relations"))
        edges, relations = cfg.table("edges"), cfg.table("relations")
        mirrors, covers, objects = ((read_mirrored_relations(edges, relations), read_covering_steps(edges, relations),
                                     read_category_objects(edges, relations)) if table_exists(edges) else ({}, {}, {}))
        return cls(paths, TemplateVerbalizer(cfg.verbalize.phrases), embedder, model, cfg.query.synthetic,
                   words_embedder=words_embedder, words_model=cfg.embed.model if words_embedder else None, mirrors=mirrors, covers=covers,
                   objects=objects)

    def _read_as(self, relations: list[str], inverse: list[bool]) -> tuple[list[str], list[bool]]:
        """A path as its questions read it: a backward step along a relation that another states the other way round
        (`mirrors`) as that one forwards, E <children X as E parents> X: "the parents of E", not "who has E as a child"."""
        steps = [(min(self.mirrors[r]), False) if backwards and r in self.mirrors else (r, backwards) for r, backwards in zip(relations, inverse)]
        return [r for r, _ in steps], [backwards for _, backwards in steps]

    def _vectors_of(self, sigs: list[str], form: str) -> np.ndarray:
        """(paths, readings, dim): the vectors of each path's questions in `form`; a path the corpus did not have at load (a refresh
        since) is embedded now, once."""
        new = [s for s in sigs if s not in self.vectors[form]]
        for sig in new:
            self.questions.setdefault(sig, path_readings(*self._read_as(*parse_signature(sig)), self.verbalizers))
        self._add_relations(new)
        if new:
            texts = [self._form(q, form) for sig in new for q in self.questions[sig]]
            vectors = unit_vectors(self.embedder.encode(texts)).reshape(len(new), self.readings, -1)
            self.vectors[form].update(zip(new, vectors))
        return np.stack([self.vectors[form][s] for s in sigs])

    def _cosines(self, sigs: list[str], question_vector: np.ndarray, form: str) -> np.ndarray:
        """Per path, the best cosine of its readings to the question, all less the form's mean path question.
        Centred: on a KG about films every path question reads like films, and the longer ones the more, so raw
        cosines favour paths by that, not by the relations asked; without the shared part the relations decide."""
        center = self.centers[form]
        q = unit_vectors((question_vector / (np.linalg.norm(question_vector) or 1.0) - center)[None])[0]
        # a path's centred vectors are the same for every question: made once, rows of one array (replaced, never
        # changed in place: a server's threads may be reading the one they found)
        rows, centred = self.centred[form]
        if new := list(dict.fromkeys(s for s in sigs if s not in rows)):
            made = unit_vectors(self._vectors_of(new, form) - center)
            rows = {**rows, **{sig: len(rows) + i for i, sig in enumerate(new)}}
            centred = np.concatenate([centred, made]) if len(centred) else made
            self.centred[form] = rows, centred
        # einsum, not BLAS: see PathPrior.votes (OpenBLAS's spinning threads slow the next embedding)
        return np.einsum("ikj,j->ik", centred[[rows[s] for s in sigs]], q).max(axis=1)

    def _add_relations(self, sigs: Iterable[str]) -> None:
        """Record the phrase words of these paths' relations not known yet (a refresh may bring new ones)."""
        new = {r for sig in sigs for r in parse_signature(sig)[0]} - self.relations_read
        if not new:
            return
        # copied, not changed in place: a server's threads may be matching words against the one they read
        relations_of = {word: list(relations) for word, relations in self.relations_of.items()}
        for relation in sorted(new):
            for word in dict.fromkeys(w for v in self.verbalizers for w in phrase_words(relation, False, v)):
                relations_of.setdefault(word, []).append(relation)
        self.relations_of, self.relations_read = relations_of, self.relations_read | new
        self.word_relations = {}  # the words' matches may change

    def _word_relations(self, word: str) -> dict[str, frozenset[str]]:
        """`relation_word_matches` of a question word, once per word (replaced when full, as `_word_vectors`)."""
        known = self.word_relations
        if word not in known:
            if len(known) > MAX_WORDS:
                self.word_relations = known = {}
            known[word] = relation_word_matches(word, self.relations_of, synonyms_of=self.synonyms_of)
        return known[word]

    def expected_hops(self, masked_question: str) -> float:
        """The steps the question asks for: `expected_hops` by its content words (a relation's name in two words counted
        once, `compound_words`; a word saying what kind of thing the topic is not at all, `topic_kind_words`), or where
        more, `mention_hops` per relation it names (`relation_mentions`) or `link_hops` per phrase it links to the next
        (`linked_phrases`). The words per step vary: "who directed the films written by the writer of E" spends 4 content
        words on 3 steps (written_by named for two); "the country of the birthplace of the director of E", 3 on 3; "what
        is E about", 1 on 1. A question naming several entities spends its words on the paths of all of them: each path
        from one takes its share ("which child of E was born in E": one step from each)."""
        s = self.settings
        # "national team": one step's name, two words; "the movie E": E's kind, no step; "actually": no step's word
        names_once = (compound_words(masked_question, self._word_relations) + len(self._topic_kinds(masked_question))
                      + adverbs(masked_question, self._word_relations))
        counts = [expected_hops(masked_question, s.words_per_hop) - names_once / s.words_per_hop]
        if s.mention_hops:
            kinds = self._kind_words(masked_question)  # "which country is the club of E located in": club, located

            def names_steps(word: str) -> dict[str, frozenset[str]]:
                return {} if word in kinds else self._word_relations(word)

            counts.append(s.mention_hops * relation_mentions(masked_question, names_steps))
        if s.link_hops:
            counts.append(s.link_hops * linked_phrases(masked_question, self._word_relations))
        return max(counts) / named_topics(masked_question)

    def _word_vectors(self, words: list[str]) -> np.ndarray:
        """Unit vectors of `words` (or walks' end labels), embedded once. A server's threads may share the prior: the
        cache is replaced when full, never emptied in place, so the one this call looked in keeps its words."""
        known = self.word_vectors
        new = [w for w in words if w not in known]
        found = dict(zip(new, unit_vectors(self.words_embedder.encode(new)))) if new else {}
        if found:
            if len(known) > MAX_WORDS:
                self.word_vectors = {}
            self.word_vectors.update(found)
        return np.stack([found[w] if w in found else known[w] for w in words])

    def _path_words(self, sig: str) -> list[list[str]]:
        if sig not in self.path_words:
            readings = [words_of(q) for q in self.questions[sig][::2]]  # the readings from the answer
            # and each naming the kind its end is of, where only the KG tells (`_covered_kinds`): "located in a country"
            kinds = self._covered_kinds(sig.rsplit("|", 1)[-1])
            self.path_words[sig] = readings + [[*words, *(k for k in kinds if k not in words)] for words in readings] if kinds else readings
        return self.path_words[sig]

    def _step_words(self, step: str) -> list[list[str]]:
        """The words of a step's (a signature's `relation>` or `<relation`) phrases, each verbalizer's."""
        if step not in self.step_words:
            (relation,), (inverse,) = self._read_as(*parse_signature(step))
            # the relation's phrases both ways: "are written by who" asks by the relation a step reads as "wrote" from its answer
            kinds = self._covered_kinds(step)
            self.step_words[step] = [[*phrase_words(relation, inverse, v), *kinds] for v in self.verbalizers]
        return self.step_words[step]

    def _covered_kinds(self, step: str) -> list[str]:
        """Where a step's own phrases name no kind for its end (`_end_kinds`, `_verb_objects`), the kind its verb's
        object names of a category step that reaches most of what it reaches (`covers`): "country" for a club's
        `located_in>`, whose ends `plays_for_country>` reaches. A verb's object names a kind; a "has" phrase's noun is
        often a role the same nodes play ("has national team": where teams are countries, the coach of a team is no
        national team's)."""
        if self._end_kinds(step) or self._verb_objects(step):
            return []
        return list(dict.fromkeys(w for other in sorted(self.covers.get(step, ())) for kind in self._verb_objects(other) for w in kind))

    def _matches(self, vocabulary: list[str], asked: list[str], *, compounds: bool = False) -> np.ndarray:
        """(vocabulary, asked): how well each path word matches each question word: the cosine of their word
        vectors, 1 where the question's word names the path's (`names_word`: one stem, with `compounds`, or synonyms:
        "living", "profession")."""
        # einsum, not BLAS: see PathPrior.votes
        match = np.einsum("ij,kj->ik", self._word_vectors(vocabulary), self._word_vectors(asked))
        stems = np.array([[names_word(b, a, self.synonyms_of, compounds=compounds) for b in asked] for a in vocabulary])
        return np.where(stems, 1.0, match)

    def coverages(self, sigs: list[str], masked_question: str) -> np.ndarray:
        """Per path, how much of it the question speaks of: the mean over the content words of its question read from the
        answer of each one's best match among the question's (cosine of word vectors; 1 for one stem); the better of
        the phrase map's and the relation names' questions where both are read."""
        asked = words_of(masked_question)
        path_words = [self._path_words(s) for s in sigs]
        vocabulary = list(dict.fromkeys(chain.from_iterable(chain.from_iterable(path_words))))
        if not asked or not vocabulary:
            return np.zeros(len(sigs))
        best = dict(zip(vocabulary, self._matches(vocabulary, asked).max(axis=1).tolist())).__getitem__
        return np.array([max((sum(map(best, words)) / len(words) if words else 0.0) for words in readings) for readings in path_words])

    def _end_kinds(self, step: str) -> list[list[str]]:
        """The words naming the kind of a step's end in its phrases, read the step's way (each verbalizer's that names one):
        "has genre" (has_genre>: a genre), "is in language" (in_language>: a language); none for a verb ("was born in",
        "is located in") or a phrase naming where the step starts ("is the capital of")."""
        if step not in self.end_kinds:
            (relation,), (inverse,) = self._read_as(*parse_signature(step))
            kinds = []
            for v in self.verbalizers:
                words = v.phrase(relation, inverse).lower().replace("{}", " ").split()
                if len(words) > 1 and words[0] == "has":
                    kinds.append(words[1:])
                elif len(words) > 2 and words[0] in ("is", "was") and words[1] == "in":
                    kinds.append(words[2:])
            self.end_kinds[step] = kinds
        return self.end_kinds[step]

    def kind_steps(self, sigs: list[str], masked_question: str, types: np.ndarray, counted: float | None = None) -> np.ndarray:
        """Per path, whether the kind of thing the question asks for lies one step past what its words name: the words count
        a step at least, the question names a kind (`answer_noun`) that names no relation, or asks "where" (`asks_where`:
        a place, for a path no longer than the words count), and the path is one step longer
        than another among `sigs` (its prefix, no longer than the words count, rounded) and its ends read as that kind
        more than the paths' ends on average and by query.synthetic.kind_step more than the prefix's (`types`:
        `answer_types`; a city can read a little like "country", Vienna more than the mean of a person's paths' ends, so
        the prefix's need not read as none). "in
        which country was the CEO of E born" names the CEO and the birth, two steps; the country is one more, from the
        birthplace. Not where the last step's phrase names another kind for its end ("has genre": genres read like
        "movies" to word vectors; "has location" names a kind every place is, no other), nor where two steps go there and
        back (`peer_pairs`): last, an end of the kind of the node before it (a film for "what kind of film is E"); before,
        a step past a peer ("on which stock exchange is E listed": not the exchange of a company with E's market cap)."""
        s = self.settings
        noun = answer_noun(masked_question)
        where = not noun and asks_where(masked_question)
        counted = self.expected_hops(masked_question) if counted is None else counted
        # a noun naming relations only as their verb's object names the kind, no step (`_kind_words`)
        kind_words = self._kind_words(masked_question)
        # the noun's head names the kind; a word before it may name a step ("E's birth country": the birthplace's country)
        if (not s.kind_step or not (noun or where) or any(self._word_relations(w) for w in noun[-1:] if w not in kind_words) or counted < 1
                or set(noun[-1:]) & SETTLEMENT_KINDS):
            return np.zeros(len(sigs), bool)
        type_of = dict(zip(sigs, types.tolist()))
        # a step past peers on the way ("the national teams of E's club teammates") is as any other step; not where the
        # peers are the answer ("which other films", "also wrote which films": the noun among the words of sharing)
        peers_on_the_way = (asks_for_peers(masked_question) and not asks_for_a_peer(masked_question)
                            and not set(noun) & set(shared_words(masked_question)))

        def names_the_kind(step: str) -> bool:  # or a kind any place or thing is ("has location"); "where" names none
            return where or all(any(same_stem(k, n) for k in kind for n in noun) or set(kind) <= GENERIC_KINDS for kind in self._end_kinds(step))

        def one_step_on(sig: str) -> bool:
            steps = sig.split("|")
            shorter = type_of.get("|".join(steps[:-1]))
            # "where" asks a step past those it names only where its words count that step: "where is E's club based",
            # not "where was E born" (a birthplace is a place)
            within = len(steps) <= round(counted) if where else len(steps) - 1 <= round(counted)
            if shorter is None:
                return False
            # a step whose phrase names its end a kind of place is one "where" asks for, however the labels read ("where
            # is E's club based": "Munich FC" can read more like a place than "Germany" does)
            typed = type_of[sig] > 0 and type_of[sig] - shorter >= s.kind_step
            # and so is one the KG says ends at the asked kind (`_covered_kinds`: a club's located_in> reaches countries)
            covered = any(same_stem(k, n) for k in self._covered_kinds(steps[-1]) for n in noun)
            return (within and (typed or covered or (where and self._ends_at_places(steps[-1])))
                    and not any(peer_pairs(sig, self.mirrored)[-1:] if peers_on_the_way else peer_pairs(sig, self.mirrored)) and names_the_kind(steps[-1]))

        return np.array([one_step_on(sig) for sig in sigs], bool)

    def expected_steps(self, sigs: list[str], masked_question: str, kind: np.ndarray, counted: float | None = None) -> np.ndarray:
        """Per path, the steps the question asks for: `expected_hops`, where the kind asked for lies one step on
        (`kind`: `kind_steps`) up to one more, as many as the path takes. Only where the words count a step at least
        (`kind_steps`): one that names little but the kind ("which country is E in") asks for it by that step, and a
        made-up country's name reads less like "country" than its continent's does. `counted`: `expected_hops`, where
        known."""
        counted = self.expected_hops(masked_question) if counted is None else counted
        lengths = np.array([sig.count("|") + 1 for sig in sigs])
        return counted + kind * np.clip(lengths - counted, 0.0, 1.0)

    @staticmethod
    def as_prefixes(sigs: list[str], scores: np.ndarray, typed: np.ndarray, kind: np.ndarray) -> np.ndarray:
        """Per path, its score, or where it takes the step to the kind asked for (`kind`: `kind_steps`), at least its
        prefix's with its own ends' answer-type term in place of the prefix's (`typed`). The words name the prefix and
        the kind asks for the step past it, so the terms read from words (cosines, coverage, named relations, order)
        must not hold against it the step they do not name: "in which country was the CEO of E born" says nothing of
        "is located in", and the birthplace kept 0.2 more on coverage and cosine than the hop count gave back."""
        at = {sig: i for i, sig in enumerate(sigs)}
        read = scores.copy()
        for i in np.flatnonzero(kind):
            j = at[sigs[i].rsplit("|", 1)[0]]
            read[i] = max(scores[i], scores[j] - typed[j] + typed[i])
        return read

    def _past_slack(self, sigs: list[str], expected: np.ndarray | float) -> np.ndarray:
        """Per path, whether it is more than query.synthetic.focus_slack steps longer than the question asks for
        (`expected`, per path or one count for all): what the focus and the named relations tell is the answer's relation,
        not the length."""
        return np.array([sig.count("|") + 1 for sig in sigs]) - expected > self.settings.focus_slack

    def focuses(self, sigs: list[str], masked_question: str, expected: np.ndarray | float | None = None) -> np.ndarray:
        """Per path, how much more the question's wh-phrase asks about its last step than about its steps on average:
        each step's match is the mean of the question's words weighted by `focus_weights` of each one's best match
        among the words of the step's relation phrases, both ways (the better verbalizer's); 0 for a question without
        a wh-word, and no gain for a path more than query.synthetic.focus_slack steps longer than it asks for (`expected`:
        `expected_steps`; `expected_hops` where None)."""
        weights = focus_weights(masked_question, self.settings.focus_decay)
        paths = [sig.split("|") for sig in sigs]
        steps = {step: self._step_words(step) for path in paths for step in path}
        vocabulary = list(dict.fromkeys(w for phrases in steps.values() for words in phrases for w in words))
        if not weights or not vocabulary:
            return np.zeros(len(sigs))
        asked = list(weights)
        weight = np.array([weights[a] for a in asked]) / sum(weights.values())
        # compounds: the wh-phrase often names the answer by a role noun ("who are the screenwriters ...") that only its
        # last part ties to the relation's verb ("written"); coverage, which every word of the question feeds, stays strict
        match = dict(zip(vocabulary, self._matches(vocabulary, asked, compounds=True)))
        # a step matches the same in every path it is in: once per distinct step, not per path and step
        focus = {step: max((float(weight @ np.max([match[w] for w in words], axis=0)) for words in phrases if words), default=0.0)
                 for step, phrases in steps.items()}
        # sum / len: np.mean's per-call overhead, for a path's 1-3 steps (the same sum, left to right)
        relative = np.array([focus[path[-1]] - sum(focus[step] for step in path) / len(path) for path in paths])
        # what the focus tells is the answer's relation, not the length: a path more than focus_slack steps longer than the
        # question asks for gains nothing ("what was the release year of E": E's director's other films' years end in it too)
        expected = self.expected_hops(masked_question) if expected is None else expected
        return np.where(self._past_slack(sigs, expected), np.minimum(relative, 0.0), relative)

    def _step_relations(self, sig: str) -> list[set[str]]:
        """Per step of a path, the relations it takes as a question names them: its own, and the one it is read as
        (`_read_as`): E <children X is E's parent X, a step "the parents of E" names."""
        if sig not in self.step_relations:
            relations, inverse = parse_signature(sig)
            self.step_relations[sig] = [{own, read} for own, read in zip(relations, self._read_as(relations, inverse)[0])]
        return self.step_relations[sig]

    def _named(self, masked_question: str) -> list[tuple[str, set[str], int]]:
        """Per question word that names relations (`relation_word_matches`), the word, the relations it names and for how
        many steps (`steps_named`)."""
        kind_only = self._kind_words(masked_question)
        return [(word, set(found), steps_named(word)) for word in words_of(masked_question) if word not in kind_only and (found := self._word_relations(word))]

    def _start_kinds(self, step: str) -> list[list[str]]:
        """The words naming the kind of a step's start: those its way back names its end by (`_end_kinds`, or a verb's
        object after its preposition: "plays for country" for `<plays_for_country`'s start, a country)."""
        if step not in self.start_kinds:
            back = f"<{step[:-1]}" if step.endswith(">") else f"{step[1:]}>"
            self.start_kinds[step] = self._end_kinds(back) + self._verb_objects(back)
        return self.start_kinds[step]

    def _names_a_start(self, word: str, step: str) -> bool:
        """Whether `word` names the kind of a step's start (`_start_kinds`) and not of its end. `<plays_for_country` goes
        from a country to a player: "which country" asks for what plays_for_country> reaches, not where this step
        starts."""

        def names(kinds: list[list[str]]) -> bool:
            return any(same_stem(word, k) for kind in kinds for k in kind)

        return names(self._start_kinds(step)) and not names(self._end_kinds(step))

    def _verb_objects(self, step: str) -> list[list[str]]:
        """The words after a verb and its preposition in a step's phrases, read the step's way (each verbalizer's that
        has one): "country" of "plays for country", the kind of what plays_for_country> reaches, named as its verb's
        object."""
        if step not in self.verb_objects:
            (relation,), (inverse,) = self._read_as(*parse_signature(step))
            self.verb_objects[step] = [words[2:] for v in self.verbalizers if len(words := v.phrase(relation, inverse).lower().split()) > 2
                                       and words[0] not in ("is", "was", "has") and words[1] in PREPOSITIONS and "{}" not in words]
        return self.verb_objects[step]

    def _names_only_kinds(self, word: str, *, has_nouns: bool = True) -> bool:
        """Whether `word` names relations, and each only as the kind of what it reaches: its verb's object
        (`_verb_objects`: "club" of "plays for club") or, with `has_nouns`, a "has" phrase's noun (`_end_kinds`: "club"
        of "has club")."""
        found = self._word_relations(word)
        return bool(found) and all(any(same_stem(word, k) for kind in [*self._verb_objects(f"{r}>"), *(self._end_kinds(f"{r}>") if has_nouns else [])]
                                       for k in kind) for r in found)

    def _topic_kinds(self, masked_question: str) -> set[int]:
        """The places of the words saying what kind of thing the topic is (`topic_kind_words`), a relation's kind word
        before it among them: "the club E", where clubs are what plays_for_club's verb reaches (`_verb_objects`). A "has"
        phrase's noun is its relation's own name: "the director E" names the step by its director relation, unless
        another word of the question names that relation ("the actor E co-starred with who": E's films, their cast)."""
        words = words_of(masked_question)

        def kind_only(word: str) -> bool:
            if self._names_only_kinds(word, has_nouns=False):
                return True
            elsewhere = set().union(*(self._word_relations(w).keys() for w in words if w != word))
            return self._names_only_kinds(word) and self._word_relations(word).keys() <= elsewhere

        return topic_kind_words(masked_question, self._word_relations, kind_only=kind_only)

    def _kind_words(self, masked_question: str) -> set[str]:
        """The question's words that name a kind, not a step: those of the asked noun (`answer_noun`) naming relations
        only as their verb's object ("which country does E's club play in" asks for a country, which plays_for_country
        reaches and so does a club's located_in: `answer_types` reads the kind from the ends), and those saying what kind
        of thing the topic is (`_topic_kinds`: "E is a club from which country" names no step of E's players). A "has"
        phrase's noun can be the asked answer's role ("which national team does E play for")."""
        return ({w for w in answer_noun(masked_question) if self._names_only_kinds(w, has_nouns=False)}
                | words_at(masked_question, self._topic_kinds(masked_question)))

    def named_relations(self, sigs: list[str], masked_question: str, expected: np.ndarray | float | None = None) -> np.ndarray:
        """Per path, the share of the question's words naming a relation (`relation_word_matches`: a form of a word of
        its phrases, "screenwriter" of written_by) whose relation it takes; a word naming several (released:
        release_year and release_date) is met by any of them, one naming its relation for two steps only half by a path
        taking it at one ("the grandchildren of E" by E's children: the cosines read "grandchildren" as "children").
        Spelling tells here what word vectors blur: "films" reads as near "directed" and "starred" as "screenwriter"
        does to "written", so the question's own word for a relation can lose to a film-like one ("which films share the
        screenwriter with E"). As with the focus, a path more than query.synthetic.focus_slack steps longer than the
        question asks for gains nothing: a word may name the relation the answer is asked by, not one more step ("what
        position does E play": not E's club's players' positions); `expected` as for `focuses`."""
        named = self._named(masked_question)
        if not named:
            return np.zeros(len(sigs))
        noun = set(answer_noun(masked_question))

        def meets(word: str, relations: set[str], step: str) -> bool:
            # the asked noun names what the answer is: a step it names only as where the step starts does not meet it
            return bool(relations & self._step_relations(step)[0]) and not (word in noun and self._names_a_start(word, step))

        steps, at = step_table(tuple(sigs))
        # (words, steps + 1): whether the word's relations are met at the step; the last column, past a path's end, never
        met = np.array([[*(meets(word, relations, step) for step in steps), False] for word, relations, _ in named])
        named_steps = np.array([[times] for _, _, times in named])
        met_at = met[:, at]  # (words, paths, width)
        # what the topic itself has ("his country") is one step from it: met at a path's first step only
        owned = topic_owned_words(masked_question, self._word_relations)
        first_only = np.array([word in owned and times == 1 for word, _, times in named])
        met_at[first_only, :, 1:] = False
        share = np.minimum(1.0, met_at.sum(axis=2) / named_steps).sum(axis=0) / len(named)
        expected = self.expected_hops(masked_question) if expected is None else expected
        return np.where(self._past_slack(sigs, expected), 0.0, share)

    def orders(self, sigs: list[str], masked_question: str) -> np.ndarray:
        """Per path, how far it takes the relations the question names in the order its words give (`path_order`): over
        the pairs of named words whose relations the path takes at different steps, the share in that order less the
        share in the other ("the nationality of the spouse of the parent of E": parents, then spouse, then nationality;
        not spouse, then parents). A word naming every relation the paths take tells no order (a dotted KG's "film"); 0
        for a path with no such pair, and for a question naming fewer than two relations or several topics."""
        steps, at = step_table(tuple(sigs))
        taken = [self._step_relations(step)[0] for step in steps]
        every = set().union(*taken)
        kind_only = self._kind_words(masked_question)
        words = [(word, found.keys()) for word in path_order(masked_question)
                 if word not in kind_only and (found := self._word_relations(word)) and not found.keys() >= every]
        if len(words) < 2:
            return np.zeros(len(sigs))
        named = [n for _, n in words]
        # (named, paths): the first step of each path taking a relation the word names; its length where none does
        met = np.array([[*(bool(step & n) for step in taken), False] for n in named])[:, at]
        # what the topic itself has is one step from it, as `named_relations` reads it
        owned = topic_owned_words(masked_question, self._word_relations)
        met[np.array([word in owned and steps_named(word) == 1 for word, _ in words]), :, 1:] = False
        first = np.where(met.any(axis=2), met.argmax(axis=2), at.shape[1])
        found = first < at.shape[1]
        # over the pairs of words whose relations the path takes at different steps: +1 in the words' order, -1 against it
        i, j = np.triu_indices(len(named), 1)
        counted = found[i] & found[j] & (first[i] != first[j])
        signs = np.where(counted, np.sign(first[j] - first[i]), 0)
        pairs = counted.sum(axis=0)
        return np.where(pairs > 0, signs.sum(axis=0) / np.maximum(pairs, 1), 0.0)

    def answer_types(self, sigs: list[str], masked_question: str, walks: Sequence[WalkHit]) -> np.ndarray:
        """Per path, how much more its walks' ends read as what the question asks for than the paths' ends on average, less
        the mean over the paths, brought query.synthetic.answer_type_margin nearer 0; 0 for a question that names no kind of
        answer. A question asking "when" asks for a time: an end's match is 1 where its label is a year or a date
        (`label_year`), whatever the KG calls the relation. One naming a noun (`answer_noun`: "which country", "what
        genres") asks for a thing of that kind: an end's match is the cosine of its label to the noun. Where cosine to the
        question and the path's relation words tie, a genre ("Drama") still reads more like "genres" than a film's title
        does, a country ("France") more like "country" than a city or a person. An end its step's own phrase names as the
        noun (`_ends_named`: "has national team" for "which national teams") matches 1, a word's cosine with itself."""
        # "where" asks for a place as "which place" does
        noun = answer_noun(masked_question) or (["place"] if asks_where(masked_question) else [])
        # "E filmography actor": a search's word naming a relation may be the topic's role, not the answer's kind; not one
        # naming relations only as their verb's object ("E club country": "plays for country")
        if is_search(masked_question) and any(self._word_relations(w) and not self._names_only_kinds(w, has_nouns=False) for w in noun):
            noun = []
        when = asks_when(masked_question)
        if not (noun or when) or not walks:
            return np.zeros(len(sigs))
        # per path, its walks' end labels, each with whether the KG says the end is of the kind asked (`_ends_of_kind`, 1)
        # or of a level of place the kind asked is not (`_ends_of_other_levels`, 0)
        ends: dict[str, list[tuple[str, float | None]]] = {}
        said: list[float | None] = [None] * len(walks)
        if not when:
            said = [1.0 if of_kind else 0.0 if other else None
                    for of_kind, other in zip(self._ends_of_kind(sigs, walks, noun), self._ends_of_other_levels(walks, noun))]
        for w, told in zip(walks, said):
            ends.setdefault(w.signature, []).append((w.node_labels[-1], told))
        labels = list(dict.fromkeys(label for sig in sigs for label, _ in ends[sig]))
        if when:
            match = {label: float(label_year(label) is not None) for label in labels}
        else:
            asked = unit_vectors(self._word_vectors(noun).sum(axis=0)[None])[0]
            match = dict(zip(labels, np.einsum("ij,j->i", self._word_vectors(labels), asked).tolist()))  # einsum: see PathPrior.votes
        per_path = np.array([sum(match[label] if told is None else told for label, told in ends[sig]) / len(ends[sig]) for sig in sigs])
        if not when:  # what a step's own phrase calls its end is what it is, whatever its label reads like
            per_path = np.where(self._ends_named(sigs, noun), 1.0, per_path)
            # a category ("has genre") is no thing of the kind asked for, however like it its label reads
            per_path = np.where(self._ends_categories(sigs, masked_question), per_path.min(), per_path)
        above = per_path - per_path.mean()
        # within the margin, noise: a screenwriter's name reads no more like "screenwriter" than an actor's
        return np.sign(above) * np.maximum(np.abs(above) - self.settings.answer_type_margin, 0.0)

    def _ends_of_kind(self, sigs: list[str], walks: Sequence[WalkHit], noun: list[str]) -> list[bool]:
        """Per walk, whether its end is one a category reaches whose kind is `noun` (`_nodes_of_kind`) and its last step
        names none or one any place is ("has location": a country or a city). Not where the step names one, even the
        noun's: "plays for country" says what its ends are by its own words, and a club's players' national teams would
        read as the club's country."""
        kind_nodes = self._nodes_of_kind(tuple(noun))
        if not len(kind_nodes):
            return [False] * len(walks)
        unnamed = dict(zip(sigs, by_last_step(sigs, lambda step: all(set(kind) <= GENERIC_KINDS for kind in [*self._end_kinds(step), *self._verb_objects(step)])).tolist()))
        return [known and unnamed[w.signature] for w, known in zip(walks, ends_among(walks, kind_nodes))]

    def _ends_of_other_levels(self, walks: Sequence[WalkHit], noun: list[str]) -> list[bool]:
        """Per walk, whether a category says its end is a place of a level (`PLACE_LEVELS`) other than the asked noun's
        (`_nodes_of_kind`): the countries nationality reaches are no answer to "which city does E hail from", however
        like a city their names read. All False where the noun names no level."""
        level = next((level for level in PLACE_LEVELS if noun and set(noun) <= level), None)
        if level is None:
            return [False] * len(walks)
        others = np.concatenate([self._nodes_of_kind((word,)) for other in PLACE_LEVELS if other is not level for word in sorted(other)])
        return ends_among(walks, others)

    def _relation_kinds(self, relation: str) -> list[list[str]]:
        """The kinds a relation's own phrases name its objects (`_end_kinds`, `_verb_objects`: "has country"), and
        "country" where a word of its phrase is one of nationality's (`SYNONYMS`: "is the citizen of", "has
        nationality"): what one is a national or a citizen of is a country."""
        step, nationality = f"{relation}>", self.synonyms_of.get("nationality", frozenset())
        national = any(w in nationality for v in self.verbalizers for w in phrase_words(relation, False, v))
        return [*self._end_kinds(step), *self._verb_objects(step), *([["country"]] if national else [])]

    def _nodes_of_kind(self, noun: tuple[str, ...]) -> np.ndarray:
        """The ids of the nodes a category relation reaches (`objects`) where its kind (`_relation_kinds`) is `noun`
        (`names_kind`): the countries citizen_of reaches for "which country", however made up their names ("Eldonia"
        reads like no country to word vectors). Sorted; empty where no category names the noun."""
        if noun not in self.kind_nodes:
            found = [nodes for relation, nodes in self.objects.items() if any(names_kind(kind, noun) for kind in self._relation_kinds(relation))]
            self.kind_nodes[noun] = np.unique(np.concatenate(found)) if found else np.empty(0, np.int64)
        return self.kind_nodes[noun]

    def _ends_at_places(self, step: str) -> bool:
        """Whether a step's phrase names its end a kind of place (`_end_kinds`, `PLACE_KINDS`: "has country", "has city")."""
        return any(all(k in PLACE_KINDS for k in kind) for kind in self._end_kinds(step))

    def _ends_named(self, sigs: list[str], noun: list[str]) -> np.ndarray:
        """Per path, whether its last step's phrase names its end as `noun` does, each word of either a form of one of the
        other's (`_end_kinds`): "has national team" for "which national teams", so a player's national team is one while
        the players whose national team is E's country are not; not "has national team" for "which teams", nor "has
        starring" for "which movies star" (a verb read into the noun). A backward step along a relation with a Freebase name
        names its end by the name's type (`_subject_kind`: "which films" for `<film.film.directed_by`)."""

        def of_its_type(step: str) -> bool:  # the type's own words, or their plurals: "filmmakers" are no films
            kind = self._subject_kind(step)
            return bool(kind) and len(kind) == len(noun) and all(n in (k, f"{k}s", f"{k}es") for k, n in zip(kind, noun))

        return by_last_step(sigs, lambda step: any(names_kind(kind, noun) for kind in self._end_kinds(step)) or of_its_type(step))

    def _subject_kind(self, step: str) -> list[str]:
        """The kind of a backward step's end, its relation's subject, where a Freebase name says it (`subject_kind`:
        `<film.film.starring` ends at films), which its phrases, read from the name's last part, do not; none for a
        forward step."""
        (relation,), (inverse,) = self._read_as(*parse_signature(step))
        return subject_kind(relation) if inverse else []

    def _ends_categories(self, sigs: list[str], masked_question: str) -> np.ndarray:
        """Per path, whether its last step's phrase names its end a category ("has genre": a word of the synonyms of
        "genre", as "kind" and "type") where no word of the question asks for one: a genre reads like "movies" to word
        vectors, but "which movies star E" asks for no genre."""
        categories = self.synonyms_of.get(CATEGORY, frozenset())
        if any(w in categories for w in words_of(masked_question)):
            return np.zeros(len(sigs), bool)
        return by_last_step(sigs, lambda step: any(k in categories for kind in self._end_kinds(step) for k in kind))

    def peers(self, sigs: list[str], masked_question: str) -> np.ndarray:
        """Per path, what reaching a peer of the topic is worth: a peer shares a node with the topic by one relation, so the
        path goes by some relation and comes straight back by it (E directed_by D, F directed_by D: a film with E's
        director). Where the question asks for peers (`asks_for_peers`: "which other films did the director of E make"),
        a path with such a pair anywhere gains query.synthetic.peer (at its end where the answer is the peer,
        `asks_for_a_peer`), a pair on a relation the question names from its peer word on (`shared_words`) where it names
        any there; where it does not, a path ending in one (its answer a peer: the other artists of E's record label for
        "which record label was E signed by") loses query.synthetic.peer_unasked. A pair inside a path is how nested
        questions go on ("the films directed by the director of E"), so it costs nothing. Both less the mean over the
        paths."""
        s = self.settings
        if asks_for_peers(masked_question):
            pairs: list[Sequence[bool]] = [peer_pairs(sig, self.mirrored) for sig in sigs]
            weight = s.peer
            if asks_for_a_peer(masked_question):  # "what other films ...": the answer is the peer, the pair ends the path
                pairs = [[p and i == len(ps) - 1 for i, p in enumerate(ps)] for ps in pairs]
            # what the peers share is what the question names from its peer word on ("the cast of the other films of
            # the director of E": a pair on directed_by, not on starring, the cast's); a question naming no relation
            # there (opaque names) takes a pair on any
            shared = set(shared_words(masked_question))
            named = set().union(*(relations for word, relations, _ in self._named(masked_question) if word in shared))
            if named:
                pairs = [[p and parse_signature(sig)[0][i] in named for i, p in enumerate(ps)] for sig, ps in zip(sigs, pairs)]
        else:
            weight, pairs = -s.peer_unasked, [peer_pairs(sig, self.mirrored)[-1:] for sig in sigs]
        found = np.array([any(p) for p in pairs], float)
        return weight * (found - found.mean())

    def _without_context(self, masked_question: str) -> str:
        """The question without the names the linker left in it (`unlinked_names`) and the article and preposition
        before each: "name the players at the World Cup who share a club with E" asks for E's club teammates, two steps,
        not three or four."""
        names = unlinked_names(masked_question, self._word_relations)
        return without_words(masked_question, names, leading=ARTICLES | CHAIN_PREPOSITIONS) if names else masked_question

    def _as_read(self, masked_question: str) -> str:
        """The question as the terms read it: without the names the linker left in it (`_without_context`), and a role the
        topic has towards the answer (`inverse_role`) in the words of the relation stating it the other way round
        (`mirrors`): "which people have E as a parent" as "which people are the children of E", "who calls E grandma"
        as "who are the grandchildren of E". Word vectors read no direction: "parent" read as near E's parents as its
        children, and a path there and back by both relations read nearer still. Not where the role's words name no
        mirrored relation, or several ("which country is E a citizen of": the KG's own direction tells)."""
        masked_question = self._without_context(masked_question)
        found = inverse_role(masked_question)
        if found is None:
            return masked_question
        start, end, words, replacement = found
        named = [self._word_relations(w) for w in words]
        relations = {r for found_relations in named for r in found_relations if r in self.mirrors}
        if not all(named) or len(relations) != 1:
            return masked_question
        mirror = min(self.mirrors[relations.pop()])
        phrase = " ".join(dict.fromkeys(phrase_words(mirror, False, self.verbalizers[0])))
        twice = GRAND if all(w.startswith(GRAND) for w in words) else ""  # "grandma" read the other way: "grandchildren"
        return masked_question[:start] + replacement.format(f"the {twice}{phrase} of E") + masked_question[end:]

    def question_texts(self, masked_question: str) -> list[str]:
        """What the retriever encodes for this prior: the masked question, and its content words where they are mixed in
        (query.synthetic.content_mix)."""
        masked_question = self._as_read(masked_question)
        # a word saying what kind of thing the topic is names no step: "E is a club from which country" reads as near
        # "plays for club ... plays for country" (E's players' countries) as the club's own country. One naming no
        # relation stays: "on what record was the song E released" reads nearer "album" with "song"
        kinds = self._topic_kinds(masked_question)
        text = without_words(masked_question, {i for i in kinds if any(map(self._word_relations, words_at(masked_question, {i})))})
        return [text, content_words(text)] if self.settings.content_mix > 0 else [text]

    def shares(self, masked_question: str, masked_vectors: np.ndarray, walks: Sequence[WalkHit]) -> np.ndarray:
        """Per walk, its path's share of a softmax over the distinct paths among `walks`; `masked_vectors` are the
        vectors of `question_texts(masked_question)`."""
        masked_question = self._as_read(masked_question)
        sigs = list(dict.fromkeys(w.signature for w in walks))
        first = {s: i for i, s in enumerate(sigs)}
        sims = self._cosines(sigs, masked_vectors[0], "whole")
        s = self.settings
        if s.content_mix > 0:
            sims = (1 - s.content_mix) * sims + s.content_mix * self._cosines(sigs, masked_vectors[1], "content")
        steps = np.array([s.count("|") + 1 for s in sigs])
        types = self.answer_types(sigs, masked_question, walks) if s.answer_type or s.kind_step else np.zeros(len(sigs))
        counted = self.expected_hops(masked_question)
        kind = self.kind_steps(sigs, masked_question, types, counted)
        expected = self.expected_steps(sigs, masked_question, kind, counted)
        sims = sims - s.hop_weight * np.abs(steps - expected)
        if s.coverage:
            sims = sims + s.coverage * self.coverages(sigs, masked_question)
        if s.focus:
            sims = sims + s.focus * self.focuses(sigs, masked_question, expected)
        if s.named:
            sims = sims + s.named * self.named_relations(sigs, masked_question, expected)
        if s.answer_type:
            sims = sims + s.answer_type * types
        if s.peer or s.peer_unasked:
            sims = sims + self.peers(sigs, masked_question)
        if s.order:
            sims = sims + s.order * self.orders(sigs, masked_question)
        sims = self.as_prefixes(sigs, sims, s.answer_type * types, kind)
        weights = np.exp((sims - sims.max()) / s.temperature)
        per_path = weights / weights.sum()
        return np.array([per_path[first[w.signature]] for w in walks])

    def rerank(self, masked_question: str, masked_vectors: np.ndarray, walks: Sequence[WalkHit], weight: float) -> None:
        if not walks:
            return
        for w, share in zip(walks, self.shares(masked_question, masked_vectors, walks)):
            w.score = w.cosine + weight * float(share)
