"""The label-free relation-path prior (query.rerank=synthetic, the default without a fitted prior):
relation paths read as questions, their distinct paths found column-wise, and retrieval over a
small KG with relation names as real KGs spell them (the synthetic KG's), automatic phrases only,
a real sentence embedder, and plain questions generated per relation path."""

import dataclasses
from collections.abc import Callable
import random

import numpy as np
import pyarrow as pa
import pytest

import corpus
from kgwalk.query import Retriever
from kgwalk.query.hits import WalkHit
from kgwalk.config import SyntheticConf, load_config
from kgwalk.errors import KgwalkError
from kgwalk.query.corpus_paths import (corpus_paths, embed_cached, path_questions, path_readings, read_category_objects, read_covering_steps,
                                       read_mirrored_relations)
from kgwalk.query.synthetic import SyntheticPrior, peer_pairs, step_table
from kgwalk.storage import write_table
from kgwalk.query.words import SYNONYMS, adverbs, answer_noun, asked_part, inverse_role, asks_for_a_peer, asks_for_peers, asks_when, asks_where, compound_words, content_words, expected_hops, focus_weights, is_content, is_search, kin_by_marriage, linked_phrases, named_topics, path_order, predicate_noun, relation_mentions, relation_word_matches, names_word, same_stem, shared_words, synonym_index, synonyms, topic_kind_words, topic_owned_words, unlinked_names, without_words, words_at, words_of
from kgwalk.verbalize.template import TemplateVerbalizer
from kgwalk.walks.labels import signature

PLAYERS = [("Ana Ruiz", "Porto Azul", "Lakeford", "Veronia"), ("Ben Okafor", "Red Hawks", "Fort Mira", "Caldonia"),
           ("Chen Wei", "North Stars", "San Lope", "Ostmark"), ("Dara Singh", "Blue Comets", "Eastwick", "Marrovia")]
CEO = {"Porto Azul": "Ines Varga", "Red Hawks": "Tom Lindqvist", "North Stars": "Yara Haddad", "Blue Comets": "Olu Bakare"}
HOME = {"Porto Azul": "Port Selva", "Red Hawks": "Nordham", "North Stars": "Kelby", "Blue Comets": "Lake Orin"}
# plain questions per relation path, worded as people ask (none repeats the automatic phrases)
QUESTIONS = [
    ("which club does {p} play for", lambda p, t, c, n: t),
    ("where was {p} born", lambda p, t, c, n: c),
    ("which country was {p} born in", lambda p, t, c, n: n),
    ("where is the club of {p} headquartered", lambda p, t, c, n: HOME[t]),
    ("who is the ceo of the club {p} plays for", lambda p, t, c, n: CEO[t]),
]


def _settings(**values) -> SyntheticConf:
    """The prior's settings with every optional term off unless named (the defaults turn them on)."""
    return SyntheticConf(**{"coverage": 0.0, "focus": 0.0, "mention_hops": 0.0, "link_hops": 0.0, "answer_type": 0.0, "kind_step": 0.0, "named": 0.0, "order": 0.0, "peer": 0.0, "peer_unasked": 0.0, **values})


def triples():
    out = []
    for player, team, city, country in PLAYERS:
        out += [(player, "plays_for", team), (player, "born_in", city), (city, "located_in", country),
                (team, "has_ceo", CEO[team]), (team, "headquartered_in", HOME[team])]
    return out


def test_a_path_reads_as_two_questions_about_its_end():
    automatic = TemplateVerbalizer({})
    assert path_questions(["directed_by"], [False], automatic) == ("what directed E?", "E was directed by what?")
    assert path_questions(["directed_by"], [True], automatic) == ("what was directed by E?", "E directed what?")
    # backwards along written_by (films E wrote), then directed_by: from the answer, and from the topic
    assert path_questions(["written_by", "directed_by"], [True, False], automatic) == (
        "what directed something, which was written by E?", "E wrote something, which was directed by what?")
    mapped = TemplateVerbalizer({"starred_actors": ["starred", "starred in"]})
    assert path_questions(["starred_actors", "starred_actors"], [False, True], mapped)[0] == "what starred something, which starred in E?"


def test_a_phrase_map_adds_readings_and_the_relation_names_keep_theirs(tmp_path, monkeypatch):
    """A map may read release_year as "came out in"; its name also says "year", what a question about the
    year speaks of. With a map, each path is read by the map and by its relation names."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mapped = TemplateVerbalizer({"release_year": ["came out in", "came out in"]})
    path = (["release_year"], [False])

    class Words:  # one axis per word: only the same word (or stem) matches
        vocabulary: dict[str, int] = {}

        def encode(self, texts):
            return np.array([np.eye(64)[Words.vocabulary.setdefault(t, len(Words.vocabulary))] for t in texts], np.float32)

    def prior(verbalizer):
        return SyntheticPrior([path], verbalizer, Words(), "words", _settings(temperature=0.02, hop_weight=0.0, content_mix=0.0, coverage=0.3, words_per_hop=1.0))

    both, automatic = prior(mapped), prior(TemplateVerbalizer({}))
    assert both.questions[signature(*path)] == (*path_questions(*path, mapped), *path_questions(*path, TemplateVerbalizer({})))
    assert len(automatic.questions[signature(*path)]) == 2  # no map: the names' readings once
    assert both.coverages([signature(*path)], "what is the year of E")[0] == 0.5  # "release year": "year" in the name only
    single = prior(mapped)
    single.verbalizers, single.questions, single.path_words = [mapped], {signature(*path): path_questions(*path, mapped)}, {}
    assert single.coverages([signature(*path)], "what is the year of E")[0] == 0.0  # the map's "came out" alone


def test_corpus_paths_are_the_distinct_relation_paths_of_the_walks():
    rng = random.Random(7)
    relations = pa.table({"id": [901, 17, 5004], "label": ["r_a", "r_b", "r_c"]})
    rels, inverse = [], []
    for _ in range(400):
        steps = rng.randint(1, 4)
        rels.append([rng.choice([901, 17, 5004]) for _ in range(steps)])
        inverse.append([rng.random() < 0.5 for _ in range(steps)])
    rels.append([17, 17])  # a prefix of no other and a path of repeated relations
    inverse.append([False, False])
    walks = pa.table({"rels": pa.array(rels, pa.list_(pa.int64())), "inverse": pa.array(inverse, pa.list_(pa.bool_()))})
    label = {901: "r_a", 17: "r_b", 5004: "r_c"}
    expected = {signature([label[r] for r in rs], inv) for rs, inv in zip(rels, inverse)}
    found = [signature(r, i) for r, i in corpus_paths(walks, relations)]
    assert len(found) == len(set(found)) and set(found) == expected
    assert found == sorted(found)  # in the signatures' order, whatever order the table's rows come in
    shuffled = walks.take(pa.array(random.Random(8).sample(range(walks.num_rows), walks.num_rows)))
    assert [signature(r, i) for r, i in corpus_paths(shuffled, relations)] == found


def test_path_vectors_are_cached_by_model_and_texts(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Counting:
        calls = 0

        def encode(self, texts):
            Counting.calls += 1
            return np.arange(len(texts) * 4, dtype=np.float32).reshape(len(texts), 4) + 1

    first = embed_cached(Counting(), "m", ["a?", "b?"])
    again = embed_cached(Counting(), "m", ["a?", "b?"])
    assert Counting.calls == 1 and np.array_equal(first, again)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    embed_cached(Counting(), "other model", ["a?", "b?"])  # another model: its own vectors
    assert Counting.calls == 2


def test_a_question_asks_for_as_many_steps_as_its_content_words_say():
    # the masked topic and function words do not count; "where" and the relation words do
    assert expected_hops("what movies did E act in", 2.0) == 1.0
    assert expected_hops("who directed the films that E acted in", 1.5) == 2.0
    assert expected_hops("where is the club of E headquartered", 1.5) == 2.0
    assert expected_hops("can you tell me the name of the person who directed E", 2.0) == 1.0  # the request and "name": no step's
    # an amount is asked for as a thing is: "how much" and "how many" spend no step ("money", "cost", "make": three words)
    assert expected_hops("how much money did it cost to make E", 1.5) == 2.0
    assert expected_hops("who is E's director", 1.0) == 1.0  # the topic's possessive is the topic, no word of a step
    # a preposition of place is its verb's or noun's ("players", "contract"); "about" can name a step (a film's tags)
    assert expected_hops("which players are under contract at E", 1.0) == 2.0 and expected_hops("what is E about", 1.0) == 1.0
    assert expected_hops("how many votes does E have", 1.0) == 1.0
    # pronouns and a request's "identify" name no step: "coach", "coming", "country"; "individuals", "parents"
    assert expected_hops("The coach E, he is coming from which country?", 1.0) == 3.0
    assert expected_hops("Could you identify the individuals who are the parents of E?", 1.0) == 2.0
    # a quantifier, a discourse "so" and an emphasis name no step: "team", "player", "squad"; "city", "birth"
    assert expected_hops("Give me every national team that has a E player in its squad.", 1.0) == 4.0
    assert expected_hops("so what is the actual city of their birth?", 1.0) == 2.0
    # a verb's particle is part of the verb: "years", "films", "directed", "come"
    assert expected_hops("in which years did films directed by E come out", 2.0) == 2.0


def test_the_sentences_that_only_tell_what_led_to_a_question_ask_for_no_step():
    chatty = "I was reading up on E last night and got curious — who did they end up marrying?"
    assert asked_part(chatty) == "who did they end up marrying?"
    assert round(expected_hops(asked_part(chatty), 1.75)) == 1 and round(expected_hops(chatty, 1.75)) == 4
    # a sentence asks by a wh-word or a question mark; a request after the question ("Name it.") tells nothing more
    assert asked_part("Setting up my team and can't remember. Does E play up front or at the back?") == "Does E play up front or at the back?"
    assert asked_part("Which country's passport would E have carried? Name it.") == "Which country's passport would E have carried?"
    assert asked_part("I'm visiting E next month — which people were born there?") == "which people were born there?"
    # one that says what of the topic is asked about stays: "those" are the writer's movies
    linked = "The writer of E wrote also other movies — in what years are those released?"
    assert asked_part(linked) == linked and asked_part("I love E's style -- what else did they direct?") == "I love E's style -- what else did they direct?"
    # every sentence asks, or none does: the question as it is
    assert asked_part("Our club E sent players, right? Which countries are they playing for?") == "Our club E sent players, right? Which countries are they playing for?"
    assert asked_part("List all the kids E had.") == "List all the kids E had." and asked_part("E - club") == "E - club"
    # a topic's label's "!" left outside its mention ends no sentence, and without a sentence that asks nothing is left out
    assert asked_part("the scriptwriter of E! also wrote movies") == "the scriptwriter of E! also wrote movies"
    assert asked_part("the writer of E. Other films. Years.") == "the writer of E. Other films. Years."
    assert asked_part("who's the writer of E") == "who is the writer of E" and asked_part("E's club?") == "E's club?"
    # where a sentence ends in "?", a wh-word without one is an indirect question's: what led to the asking
    indirect = "I saw E on a list of clubs and couldn't tell where they're from — which country is that club in?"
    assert asked_part(indirect) == "which country is the club E in?"
    # the topic named only in a sentence left out, "that city" in the ask is the topic, "city" its kind; not a relative
    # "that" after its noun, nor "those films" (the ones the sentences before found)
    assert asked_part("My family comes from E — which people were born in that city?") == "which people were born in the city E?"
    assert asked_part("I saw E — who directed the films that starred Tom?") == "who directed the films that starred Tom?"
    assert asked_part("Funny — is the boss of E's national side even from that country? Where's he from?") == (
        "is the boss of E's national side even from that country? Where is he from?")  # the topic is in the ask
    assert topic_kind_words("which people were born in the city E?", lambda w: {"place_of_birth": frozenset()} if w == "born" else {}) == {6}
    assert asked_part("I'm filling in a form about E and need one detail: which country are they a citizen of?") == "which country are they a citizen of?"
    # but an ask that names nothing asks what the sentences before it say, and a fronted topic stays
    elliptical = "E wrote a few films I like, but I never checked who directed them — who did?"
    assert asked_part(elliptical) == elliptical
    assert asked_part("E, screenwriter: when did their films come out?") == "E, screenwriter: when did their films come out?"


def test_a_nested_question_asks_for_as_many_steps_as_the_phrases_it_links(tmp_path, monkeypatch):
    # "of", a possessive and a relative pronoun after a content word link phrases; an interrogative "which" does not
    assert linked_phrases("the country of the birthplace of the director of E") == 3
    assert linked_phrases("in which country was the director of E born?") == 1
    assert linked_phrases("where is E's team based?") == 1
    assert linked_phrases("who directed the films that E acted in") == 1
    # a relative clause whose copula restates the noun before it links nothing more; a passive one does
    assert linked_phrases("Could you identify the individuals who are the parents of E?") == 1
    assert linked_phrases("the films that are directed by the director of E") == 2
    # a question asking with "do" links what it asks for to its subject by its verb, once, whatever the subject's own links
    assert linked_phrases("which films did E direct?") == 1 and linked_phrases("which club does E play for?") == 1
    assert linked_phrases("which movies did the directors of E's films make?") == 3
    assert linked_phrases("what language do they speak in E?") == 1  # a pronoun for its subject: the link is "in"
    # the verb's own preposition right after the subject is that link, whatever follows it ("at club level")
    assert linked_phrases("who does E play for at club level?") == 1
    assert linked_phrases("what is the name of the director of E") == 1  # after a generic noun an "of" links nothing
    assert linked_phrases("give me a list of films by director E") == 1  # a list of films is the films
    assert linked_phrases("what are the titles of the movies that E has directed?") == 1
    # not links: a stranded "of", an "'s" that is "is", a wh-word after a verb with at most a noun after it
    assert linked_phrases("what was E the director of") == 0
    assert linked_phrases("who's the director of E") == 1 and linked_phrases("who's E's director") == 1
    assert linked_phrases("the movie E starred who") == 0 and linked_phrases("E directed which movies") == 0
    assert linked_phrases("the films that share directors with E were in which genres") == 1
    # a preposition between a content word and a phrase links as "of" does, and a relative clause's pronoun may be left out
    assert linked_phrases("who starred in movies by the director of E?") == 3
    assert linked_phrases("who manages the national sides of the players at E?") == 2
    assert linked_phrases("who acted in the movies E directed?") == 2
    assert linked_phrases("which films were made by the directors of E's movies?") == 3
    # not links: a relative clause's first preposition (its pronoun made the link), a stranded preposition, the object of
    # a relative clause's verb
    assert linked_phrases("name the actors and actresses who appear in E") == 1
    assert linked_phrases("what are the films that are directed by the same director of E") == 2
    assert linked_phrases("where is the company that produced E headquartered?") == 1
    assert linked_phrases("the screenwriter E co-wrote movies with who") == 0  # E's kind, then E: the question's subject
    # a stranded "from" is a step of its own (where something is from); one with a phrase after it links as the others do
    assert linked_phrases("where is the manager of E's national side from?") == 3 and linked_phrases("where is E from?") == 1
    assert linked_phrases("which people are from E?") == 0
    assert linked_phrases("where do E's parents come from?") == 2  # the "do" verb's particle: its link, not one more
    # a possessive pronoun links as "E's" does, where no preposition before it has; a wh-word is no phrase to link from
    assert linked_phrases("who are the teammates of E at his club?") == 2 and linked_phrases("name E's teammates at his club") == 2
    assert linked_phrases("where on the pitch is E?") == 0
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Flat:
        def encode(self, texts):
            return np.ones((len(texts), 4), np.float32)

    # with the KG's relation phrases: an "of" between two words of one relation's name links nothing ("place of birth")
    relations_of = {"place": ["place_of_birth"], "birth": ["place_of_birth"], "parents": ["parents"], "country": ["country"]}
    names = lambda word: relation_word_matches(word, relations_of)  # noqa: E731
    assert linked_phrases("the place of birth of the parents of E", names) == 2 and linked_phrases("the place of birth of the parents of E") == 3
    assert linked_phrases("the country of the parents of E", names) == 2  # "the" between: a link
    # a copula between a phrase and its preposition links where what follows names a step of its own (with the KG's
    # phrases only: without them nothing tells a step's word from another)
    football = {"club": ["club"], "number": ["shirt_number"], "shirt": ["shirt_number"], "country": ["country"]}
    named = lambda word: relation_word_matches(word, football)  # noqa: E731
    assert linked_phrases("which players are at E's club?", named) == 2 and linked_phrases("which players are at E's club?") == 1
    assert linked_phrases("E's club is in which country?", named) == 2
    assert linked_phrases("which people are from E?", named) == 1  # the people from E, as without the copula
    assert linked_phrases("which number is on E's shirt?", named) == 1  # the shirt names the number's relation again
    assert linked_phrases("which footballers are on E's roster?", named) == 1  # a roster names no step
    # "have" between a phrase and a noun naming a step of its own, the noun's phrase going on, links them as "of" would
    football["players"] = ["club"]
    assert linked_phrases("which countries have players at E?", named) == 2 and linked_phrases("which countries have players at E?") == 1
    assert linked_phrases("which countries have players at E's club?", named) == 3
    assert linked_phrases("which clubs have E as a player?", named) == 0  # no noun after it
    assert linked_phrases("which clubs have players?", named) == 0  # nothing goes on from the noun
    assert linked_phrases("which clubs have clubs at E?", named) == 1  # the noun names what the noun before it names
    assert linked_phrases("which countries have been coached by E?", named) == 1  # an auxiliary: the "by" links
    common = "which clubs have players in common with E?"  # peers: what follows the preposition names no phrase
    assert linked_phrases(common, named) == linked_phrases(common) == 2
    # a preposition before a setting the question ends on, a noun naming no step, links nothing ("on the pitch"); with the
    # KG's phrases only, and not where the topic comes after it
    football["position"] = ["position"]
    assert linked_phrases("What is E's position on the pitch?", named) == 1 and linked_phrases("What is E's position on the pitch?") == 2
    assert linked_phrases("and what position is E in the lineup?", named) == 0
    assert linked_phrases("who starred in movies by the director of E?", named) == 3  # "movies" names no step: E comes after
    prior = SyntheticPrior([(["directed_by"], [False])], TemplateVerbalizer({}), Flat(), "flat", _settings(link_hops=1.0, words_per_hop=1.75))
    # 3 content words (1.7 steps by words), 3 links: 3 steps
    assert prior.expected_hops("the nationality of the spouse of the father of E") == pytest.approx(3.0)
    assert prior.expected_hops("what movies did E act in") == pytest.approx(2 / 1.75)  # no link: the words decide
    assert prior.expected_hops("what is the genre of E") == pytest.approx(1.0)  # one link asks for no more than one step
    prior.settings = dataclasses.replace(prior.settings, link_hops=0.0)  # off
    assert prior.expected_hops("the nationality of the spouse of the father of E") == pytest.approx(3 / 1.75)


def test_a_synonym_names_the_relation_its_kg_words_otherwise():
    """"what kind of film is E" asks for what the KG calls a genre, a type or a category, "who acted in E" for what it calls
    starring or cast member: spelling alone never tied "kind" to has_genre nor "actors" to starring, and the cast read as
    near. Exact forms: "actors" meets "cast", not "castle"; "kindly" is no "kind"."""
    relations_of = {"genre": ["has_genre"], "starring": ["film.film.starring"], "type": ["instance_type"], "cast": ["P161"],
                    "member": ["P161"], "castle": ["has_castle"], "profession": ["people.person.profession"]}
    categories = {"has_genre": frozenset({"genre"}), "instance_type": frozenset({"type"})}
    assert relation_word_matches("kind", relations_of) == categories
    assert relation_word_matches("types", relations_of) == categories and relation_word_matches("genres", relations_of) == categories
    assert relation_word_matches("actors", relations_of) == {"film.film.starring": frozenset({"starring"}), "P161": frozenset({"cast"})}
    assert relation_word_matches("occupation", relations_of) == {"people.person.profession": frozenset({"profession"})}
    assert relation_word_matches("film", relations_of) == {} and relation_word_matches("kindly", relations_of) == {}
    assert synonyms("wife", "spouse") and synonyms("spouse", "wife") and not synonyms("wife", "children")
    # a word naming its relation twice by a prefix ("grand") names it by what follows: "grandkids", the children's children
    assert synonyms("grandkids", "children") and synonyms("grandsons", "children") and not synonyms("grandkids", "parents")
    assert relation_word_matches("grandkids", {"children": ["children"]}) == {"children": frozenset({"children"})}
    assert synonyms("manager", "coach") and synonyms("manages", "coached")
    # each word in one group, lower-case and a content word: a word in two would name both concepts' relations
    words = [w for group in SYNONYMS for w in group]
    assert len(words) == len(set(words)) and all(w == w.lower() and is_content(w) for w in words)
    # words joined by a conjunction that name one relation are one mention: "mother and father" is one step, parents
    family = {"parents": ["people.person.parents"], "spouse": ["people.person.spouse_s"]}
    assert relation_mentions("who are E's mother and father?", lambda word: relation_word_matches(word, family)) == 1
    assert relation_mentions("who is the wife of E's father?", lambda word: relation_word_matches(word, family)) == 2
    # a possessive names what its word does: "E's father's wife's" chain names both steps
    assert relation_word_matches("father's", family) == relation_word_matches("father", family) != {}
    assert relation_mentions("what is E's father's wife's name?", lambda word: relation_word_matches(word, family)) == 2
    # kin by marriage: "father-in-law" is the spouse's father, both steps named by one word; "in-laws", the spouse's parents
    assert kin_by_marriage("father-in-law's") == ("father", "spouse") and kin_by_marriage("sons-in-law") == ("sons", "spouse")
    assert kin_by_marriage("in-laws") == ("spouse", "parents") and kin_by_marriage("father") == kin_by_marriage("lawyer") == ()
    both = {"people.person.parents": frozenset({"parents"}), "people.person.spouse_s": frozenset({"spouse"})}
    assert relation_word_matches("mother-in-law", family) == relation_word_matches("in-laws", family) == both
    assert relation_mentions("who are E's father-in-law and mother-in-law?", lambda word: relation_word_matches(word, family)) == 2
    assert relation_mentions("who are E's in-laws?", lambda word: relation_word_matches(word, family)) == 2
    assert synonyms("partner", "spouse")  # spouse's alias


def test_a_kg_s_own_synonyms_name_its_relations(tmp_path, monkeypatch):
    """query.synthetic.synonyms: a domain's words for its relations ("which drugs treat E" of has_medication) are the
    KG's to add; a word listed there leaves its built-in group, and a group of one word is a config error."""
    assert synonym_index([["a", "b", "c"], ["C", "d"]]) == {"a": frozenset("ab"), "b": frozenset("ab"), "c": frozenset("cd"), "d": frozenset("cd")}
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Flat:
        def encode(self, texts):
            return np.ones((len(texts), 4), np.float32)

    paths = [(["has_medication"], [False]), (["has_symptom"], [False]), (["starring"], [False])]
    sigs = [signature(*path) for path in paths]

    def named(question: str, synonyms: list[str]) -> list[float]:
        prior = SyntheticPrior(paths, TemplateVerbalizer({}), Flat(), "flat", _settings(named=0.2, synonyms=synonyms))
        return prior.named_relations(sigs, question).tolist()

    assert named("which drugs treat E", []) == [0.0, 0.0, 0.0]
    assert named("which drugs treat E", ["drug drugs medication medications"]) == [1.0, 0.0, 0.0]
    assert named("who are the actors of E", []) == [0.0, 0.0, 1.0]  # built in: actors, starring
    assert named("who are the actors of E", ["actor actors performer"]) == [0.0, 0.0, 0.0]  # "actors" left its group
    with pytest.raises(KgwalkError, match="each group needs two words or more, got 'drug'"):
        load_config(overrides=['query.synthetic.synonyms=["drug"]'])


def test_synonym_groups_tell_apart_words_spelled_alike():
    """A question's word names a relation's word by a synonym or by spelling (`same_stem`), but not by spelling where the
    two are in different synonym groups: "who is a native of E" asks for a birthplace, and "native" read as a form of
    "nationality" sent it a step on to the nationality of those born there (fresh4)."""
    assert names_word("native", "birth") and not names_word("native", "nationality")
    assert names_word("hometowns", "birthplace") and names_word("appeared", "starring") and names_word("represents", "national")
    assert names_word("works", "profession") and names_word("origin", "nationality")  # "what do E's kids work as"
    assert not names_word("nationality", "national")  # the citizenship, not the national team
    assert names_word("married", "marriage")  # "marriage" is in no group: spelling still tells
    assert names_word("directed", "director") and names_word("screenwriter", "written")


def test_a_word_saying_what_kind_of_thing_the_topic_is_is_no_step(tmp_path, monkeypatch):
    """"which person wrote the movie E": "movie" says what E is, no step; counted, 3 words read as two steps and E's
    writer's other films won. Not a word naming a relation ("the director E": the step from E by directed_by), and not
    where the question names no relation (ids: a kind and a role read alike)."""
    relations_of = {"written": ["written_by"], "directed": ["directed_by"]}
    names = lambda word: relation_word_matches(word, relations_of)  # noqa: E731
    assert topic_kind_words("which person wrote the movie E", names) == {4}
    assert topic_kind_words("E is a film written by this person", names) == {3}  # the topic leads, a copula and an article
    assert topic_kind_words("which films star the actors who worked with the director E", names) == set()  # "director" names directed_by
    assert topic_kind_words("who wrote E", names) == set()
    assert topic_kind_words("which child of E was a poet", names) == set()  # the child is the poet, not E
    assert topic_kind_words("which person wrote the movie E", lambda word: {}) == set()  # nothing named: no kind told from a role
    clubs = {"club": ["club"], "country": ["country", "located_in"], "located": ["located_in"], "coach": ["coach"]}
    names_club = lambda word: relation_word_matches(word, clubs)  # noqa: E731
    # "a club" says which kind of thing E is even where "club" names a relation: one step, to the country, not two
    assert topic_kind_words("E is a club from which country", names_club) == {3}
    assert relation_mentions("E is a club from which country", names_club) == 1
    assert topic_kind_words("E is the club of which player", names_club) == set()  # "the club of": a role, a step
    assert topic_kind_words("E is a coach of which team", names_club) == set()
    # nothing else names a relation, but "where" asks for a step of its own: to the club's country, not its players
    assert topic_kind_words("E is a club based where?", names_club) == {3}
    assert topic_kind_words("E is a club with which players?", names_club) == set()
    # a noun naming relations only as its verb's object, before the topic: E's kind where the topic is the question's
    # subject, what a relative clause without its pronoun tells of where E is that clause's subject
    plays = {"club": ["plays_for_club"], "plays": ["plays_for_club", "plays_for_country"], "country": ["plays_for_country"]}
    names_plays = lambda word: relation_word_matches(word, plays)  # noqa: E731
    object_only = lambda word: word in ("club", "country")  # noqa: E731
    assert topic_kind_words("which country does the club E play in", names_plays, kind_only=object_only) == {4}
    assert topic_kind_words("where does the club E play", names_plays, kind_only=object_only) == {3}
    assert topic_kind_words("I need the club E plays for", names_plays, kind_only=object_only) == set()
    assert topic_kind_words("who coaches the country E represents", names_plays, kind_only=object_only) == set()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Flat:
        def encode(self, texts):
            return np.ones((len(texts), 4), np.float32)

    prior = SyntheticPrior([(["written_by"], [False])], TemplateVerbalizer({}), Flat(), "flat", _settings(words_per_hop=1.75, mention_hops=0.0))
    assert prior.expected_hops("which person wrote the movie E") == pytest.approx(2 / 1.75)  # person, wrote
    assert prior.expected_hops("which person wrote E") == pytest.approx(2 / 1.75)


def test_a_relations_kind_word_before_the_topic_says_what_the_topic_is(tmp_path, monkeypatch):
    """"in which country is the club E based": "club" is what plays_for_club reaches, so before the topic it says E is a
    club, no step. Counted, read as named, and left in the text the prior embeds, it made E's players' countries
    (`<plays_for_club|plays_for_country`) beat the club's own country. A word naming a relation itself stays a step ("the
    director E": directed_by), and a kind word after "the ... of" is a role."""
    clubs = {"club": ["plays_for_club"], "plays": ["plays_for_club", "plays_for_country"], "country": ["plays_for_country"], "located": ["located_in"]}
    names = lambda word: relation_word_matches(word, clubs)  # noqa: E731
    kind_only = lambda word: word in ("club", "country")  # noqa: E731  (the objects of "plays for club", "plays for country")
    assert topic_kind_words("in which country is the club E based", names) == set()  # "club" names a relation
    assert topic_kind_words("in which country is the club E based", names, kind_only=kind_only) == {5}
    assert topic_kind_words("in which country is the club of E based", names, kind_only=kind_only) == set()
    assert without_words("in which country is the club E based?", {5}) == "in which country is E based?"
    assert without_words("E is a club from which country?", {3}) == "E is from which country?"
    assert words_at("which players are at the club's E", {5}) == {"club"}
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    based, players = (["located_in"], [False]), (["plays_for_club", "plays_for_country"], [True, False])
    sigs = [signature(*based), signature(*players)]
    prior = SyntheticPrior([based, players], TemplateVerbalizer({}), _Tie(), "club-kind", _settings(hop_weight=0.0, center=False, mention_hops=0.9, link_hops=1.0))
    for question in ("in which country is the club E based?", "E is a club from which country?"):
        assert "club" in prior._kind_words(question)
        assert "club" not in prior.question_texts(question)[0] and "country" in prior.question_texts(question)[0]
        assert not prior.named_relations(sigs, question).any()  # E's players' step is not named by E's kind
    assert prior.expected_hops("in which country is the club E based?") < prior.expected_hops("in which country is the club of E based?")
    # the asked noun naming relations only as a verb's object is the answer's kind, no mention: club and located, two
    assert prior.expected_hops("which country is the club of E located in?") == pytest.approx(0.9 * 2)
    assert prior.named_relations(sigs, "which country do the players of the club E play for?")[1] > 0  # "plays" names it
    # a kind word naming no relation stays in the text: "the movie E" reads near films
    assert prior.question_texts("which person wrote the movie E")[0] == "which person wrote the movie E"
    # a "has" phrase's noun is its relation's name: "the director E" names the director step, unless another word does
    directed = (["director"], [True])
    films = SyntheticPrior([directed, (["starred_actors", "starred_actors"], [True, False])], TemplateVerbalizer({}), _Tie(), "has-kinds", _settings(center=False))
    assert films._topic_kinds("which movies star the actors who worked with the director E") == set()
    assert films._topic_kinds("the actor E co-starred with who") == {1}
    assert films.expected_hops("the actor E co-starred with who") < films.expected_hops("the actor of E co-starred with who")


def test_a_name_the_linker_left_in_the_question_is_context_not_steps(tmp_path, monkeypatch):
    """"name the players at the World Cup who share a club with E": no KG entity is "World Cup", so no path takes a step it
    names. Counted, its words and its "at" made E's club teammates (2 steps) read as 3 or 4. Capitals that are a
    relation's name ("CEO", "IMDb"), a run holding a relation's word, the topic and a sentence's first word stay."""
    relations_of = {"club": ["club"], "league": ["in_league"], "ceo": ["has_ceo"]}
    names = lambda word: relation_word_matches(word, relations_of)  # noqa: E731
    asked = "Name the players at the World Cup who share a club with E."
    assert unlinked_names(asked, names) == {5, 6}
    assert without_words(asked, {5, 6}, leading=frozenset({"the", "at"})) == "Name the players who share a club with E."
    assert unlinked_names("what is the CEO of E? Tell Me.", names) == set()
    assert unlinked_names("what is E's IMDb rating", names) == set()
    assert unlinked_names("which clubs of the Premier League does E play for", names) == set()  # "league" names in_league
    assert unlinked_names("Which club does E play for? Where?", names) == set()  # a sentence's first word
    assert unlinked_names("Which Players At The World Cup Share A Club With E?", names) == set()  # Title Case
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mates, their_positions = (["club", "club"], [False, True]), (["club", "club", "position"], [False, True, False])
    prior = SyntheticPrior([mates, their_positions], TemplateVerbalizer({}), _Tie(), "context", _settings(center=False, link_hops=1.0, content_mix=0.0))
    assert prior.question_texts(asked)[0] == "Name the players who share a club with E."
    assert prior.expected_hops(prior._without_context(asked)) < 2.5 < prior.expected_hops(asked)
    shares = prior.shares(asked, np.array([[1.0, 0.0]], np.float32), [_Walk(signature(*mates)), _Walk(signature(*their_positions))])
    assert shares[0] > shares[1]  # read with "World Cup", three steps or more


def test_a_relation_named_in_two_words_is_one_steps_name(tmp_path, monkeypatch):
    relations_of = {"national": ["national_team"], "team": ["national_team"], "shirt": ["shirt_number"], "number": ["shirt_number"],
                    "country": ["country"], "club": ["club"]}
    names = lambda word: relation_word_matches(word, relations_of)  # noqa: E731
    assert compound_words("which national team does E represent?", names) == 1
    assert compound_words("which shirt number does the club of E give?", names) == 1  # "club" and "of": no name goes on
    assert compound_words("which country does E's club play in?", names) == 0  # two relations side by side: two names
    # the noun asked for, ended by an auxiliary or the question's end, is one name whatever the KG calls the step; not a
    # noun running into its verb
    nothing = lambda word: {}  # noqa: E731
    assert compound_words("which national team does E represent?", nothing) == 1
    assert compound_words("E plays for which national team?", nothing) == 1
    assert compound_words("name the national side E represents", nothing) == 1  # the topic begins a relative clause
    assert compound_words("which national teams do E's teammates play for?", nothing) == 1
    assert compound_words("what movie genres is E in?", nothing) == 1
    assert compound_words("which movies star the actors of E?", nothing) == 0
    assert compound_words("which movies star E?", nothing) == 0  # the topic the verb's object, not a clause's subject
    assert compound_words("what other films did E make?", nothing) == 0  # "other films": a peer's, no one noun
    assert compound_words("what is the shirt number of E?", nothing) == 0  # no auxiliary after it: left to the relations
    # the words a topic owns each name a step, as a possessive's do: "E's club's country"
    assert compound_words("E's home country?", nothing) == compound_words("E birth country", nothing) == 0
    assert compound_words("E club country", names) == 0 and compound_words("E's national team?", names) == 1  # one relation's words
    # two words of one relation joined by a conjunction name one step, as relation_mentions counts them; not two relations'
    kin = lambda word: relation_word_matches(word, {"sons": ["children"], "daughters": ["children"], "country": ["country"]})  # noqa: E731
    assert compound_words("who are the sons and daughters of E?", kin) == 1
    assert compound_words("the sons or daughters of E", kin) == 1
    assert compound_words("the sons and country of E", kin) == 0
    assert compound_words("the sons and daughters of E", nothing) == 0  # no relation's words: the words count
    assert expected_hops("who are the sons and daughters of E?", 1.0) - compound_words("who are the sons and daughters of E?", kin) == 1

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Flat:
        def encode(self, texts):
            return np.ones((len(texts), 4), np.float32)

    paths = [(["national_team"], [False]), (["club"], [False])]
    prior = SyntheticPrior(paths, TemplateVerbalizer({}), Flat(), "flat", _settings(words_per_hop=1.75, mention_hops=0.0))
    assert prior.expected_hops("which national team does E represent?") == pytest.approx(2 / 1.75)  # national team, represent
    assert prior.expected_hops("which squad does E represent?") == pytest.approx(2 / 1.75)
    # two entities named: each one's path takes half the steps asked for (player, plays, national team: 3 words)
    assert named_topics("which player of E plays for the national team of E?") == 2 and named_topics("what is E's club?") == 1
    assert prior.expected_hops("which player of E plays for the national team of E?") == pytest.approx(3 / 1.75 / 2)


def test_an_adverb_names_no_step():
    """"what town were they actually born in": an adverb of manner or degree is no step's word; a word ending in "ly" that
    names a relation, a name and a short word are not adverbs here."""
    relations = lambda word: relation_word_matches(word, {"born": ["place_of_birth"], "family": ["family"]})  # noqa: E731
    assert adverbs("what town were they actually born in?", relations) == 1
    assert adverbs("in which language was the film E originally and officially released?", relations) == 2
    assert adverbs("which family is E from?", relations) == 0  # names the KG's family relation
    assert adverbs("which cities of Italy did E visit?", relations) == adverbs("who is the only child of E?", relations) == 0
    assert expected_hops("what town were they actually born in?", 1.0) - adverbs("what town were they actually born in?", relations) == 2


def test_a_question_that_names_more_relations_than_its_words_say_asks_for_more_steps(tmp_path, monkeypatch):
    words = {"directed_by": ["directed"], "written_by": ["wrote", "written"], "release_year": ["release", "year", "released"],
             "has_imdb_rating": ["imdb", "rating"], "has_imdb_votes": ["imdb", "votes"]}

    relations_of: dict[str, list[str]] = {}
    for relation, phrase_words in words.items():
        for word in phrase_words:
            relations_of.setdefault(word, []).append(relation)

    def mentions(question: str) -> int:
        return relation_mentions(question, lambda word: relation_word_matches(word, relations_of))

    # a compound's last part, in either form ("wrote" is "write"'s)
    assert relation_word_matches("screenwriters", relations_of) == {"written_by": frozenset({"written", "wrote"})}
    assert relation_word_matches("imdb", relations_of) == {"has_imdb_rating": frozenset({"imdb"}), "has_imdb_votes": frozenset({"imdb"})}
    assert mentions("who directed the films written by the writer of E") == 3  # written_by twice: its most repeated word
    assert mentions("who are the screenwriters that the directors of their movies also directed E") == 3
    assert mentions("what was the release year of E") == 1  # two words of one relation
    assert mentions("what is the imdb rating of E") == 1  # "imdb" goes to the relation that matches more of the question
    assert mentions("who is the director that directed E") == 1  # a relative clause restating its noun
    assert mentions("which screenwriter wrote the script for E") == 1  # a noun and its verb side by side: one mention
    assert mentions("that directed E") == 1 and mentions("what is E about") == 0
    assert mentions("who co-directed with E") == 2  # there and back: E's films, their other directors
    family = {"children": ["children"]}  # a "grand" word names its relation twice: the children's children
    assert relation_mentions("who are the grandchildren of E", lambda word: relation_word_matches(word, family)) == 2
    assert relation_mentions("who are the children of E", lambda word: relation_word_matches(word, family)) == 1
    # the prior counts on its KG's relation phrases, and takes the larger of the two counts
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mapped = TemplateVerbalizer({"written_by": ["was written by", "wrote"], "directed_by": ["was directed by", "directed"]})

    class Flat:
        def encode(self, texts):
            return np.ones((len(texts), 4), np.float32)

    prior = SyntheticPrior([(["written_by", "written_by", "directed_by"], [False, True, False])], mapped, Flat(), "flat", _settings(temperature=0.02, hop_weight=0.16, content_mix=0.0, mention_hops=0.9, words_per_hop=1.75))
    assert prior.expected_hops("who directed the films written by the writer of E") == pytest.approx(0.9 * 3)  # words: 4 / 1.75
    assert prior.expected_hops("who directed the films written by E and its genre and language") == pytest.approx(5 / 1.75)
    assert prior.expected_hops("who starred in films that starred E") == pytest.approx(3 / 1.75)  # a relation it does not know
    # a relation a refresh brings is read when a path of it is first met
    prior.shares("who starred in E", np.ones((1, 4), np.float32), [_Walk(signature(["starred_actors", "starred_actors"], [False, True]))])
    assert prior.expected_hops("who starred in films that starred E") == pytest.approx(0.9 * 2)
    prior.settings = dataclasses.replace(prior.settings, mention_hops=0.0)  # off: the words alone
    assert prior.expected_hops("who directed the films written by the writer of E") == pytest.approx(4 / 1.75)
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.mention_hops' must be"):  # ranges are the config's to check
        load_config(overrides=["query.synthetic.mention_hops=-1"])


class _Tie:
    """An encoder putting every text on one axis: a tie on every term that compares vectors."""

    def encode(self, texts):
        return np.array([[1.0, 0.0] for _ in texts], np.float32)


class _Walk:
    def __init__(self, sig: str) -> None:
        self.signature, self.cosine, self.score = sig, 0.5, 0.5


def test_a_path_loses_hop_weight_per_step_it_differs_from_the_question(tmp_path, monkeypatch):
    """The longer path reads closer to both questions (as "E starred in something, which was directed
    by what?" does to "what movies did E act in"); the step count decides where cosine cannot."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    one, two = (["starred_actors"], [True]), (["starred_actors", "directed_by"], [True, False])
    mirrored = [(["born_in"], [False]), (["born_in", "located_in"], [False, False])]  # their mean with one, two is 0: no centring

    class Fixed:  # the 2-step path's questions lie 0.05 closer to the question than the 1-step's
        def encode(self, texts):
            side = [-1.0 if "born" in t else 1.0 for t in texts]
            return np.array([s * np.array([1.0, 0.0] if "something" in t else [0.95, np.sqrt(1 - 0.95**2)]) for s, t in zip(side, texts)],
                            np.float32)

    def shares(question: str, hop_weight: float) -> np.ndarray:
        prior = SyntheticPrior([one, two, *mirrored], TemplateVerbalizer({}), Fixed(), "fixed", _settings(temperature=0.02, hop_weight=hop_weight, content_mix=0.0, words_per_hop=2.0))
        assert np.allclose(prior.center, 0.0, atol=1e-6)
        return prior.shares(question, np.array([[1.0, 0.0]], np.float32), [_Walk(signature(*one)), _Walk(signature(*two))])

    short, long = "what movies did E act in", "who directed the movies that E acted in"
    assert shares(short, 0.0)[1] > 0.75  # cosine alone: the longer path
    assert shares(short, 0.08)[0] > 0.75  # one step asked: the 1-step path
    assert shares(long, 0.08)[1] > 0.75  # two steps asked: the 2-step path still
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.words_per_hop' must be"):  # ranges are the config's to check
        load_config(overrides=["query.synthetic.words_per_hop=0"])


def test_path_cosines_are_taken_without_what_every_path_shares(tmp_path, monkeypatch):
    """A KG's path questions share a topic (films): a question about films is close to all of them, the
    longer ones most. Centred on the mean path question, the path whose own part matches wins."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    paths = [(["written_by"], [False]), (["directed_by"], [False]), (["written_by", "directed_by"], [False, True])]
    own = {"wrote": np.array([0.0, 1.0, 0.0]), "written": np.array([0.0, 1.0, 0.0]), "directed": np.array([0.0, 0.0, 1.0])}
    films = np.array([1.0, 0.0, 0.0])  # the shared topic, stronger the more steps a path has

    class Topical:
        def encode(self, texts):
            return np.array([(1.0 + t.count("something")) * 2 * films + sum(v for w, v in own.items() if w in t) for t in texts], np.float32)

    prior = SyntheticPrior(paths, TemplateVerbalizer({}), Topical(), "topical", _settings(temperature=0.02, hop_weight=0.0, content_mix=0.0, words_per_hop=1.0))
    question = 6 * films + own["written"]  # "the film E was written by who": mostly films, and writing
    walks = [_Walk(signature(*p)) for p in paths]
    raw = {w.signature: float(np.max(_unit_rows(prior.vectors["whole"][w.signature]) @ (question / np.linalg.norm(question)))) for w in walks}
    assert max(raw, key=raw.get) != "written_by>"  # raw cosine: a longer, more film-like path
    assert walks[int(np.argmax(prior.shares("the film E was written by who", question[None], walks)))].signature == "written_by>"


def test_content_words_leave_out_function_words_the_topic_and_placeholders():
    assert content_words("who is listed as director for E") == "listed director"
    assert content_words("E wrote something, which was directed by what?") == "wrote directed"
    assert content_words("what is E?") == "what is E?"  # nothing left: the text itself


def test_the_path_match_mixes_in_the_content_words_of_both(tmp_path, monkeypatch):
    """Where shared function words make the whole question closer to the wrong path ("who is ... for E"
    to "what is the release year of E?"), its content words ("listed director") still find "directed"."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    paths = [(["directed_by"], [False]), (["release_year"], [False])]
    question = "who is listed as director for E"
    vector_of = {question: [1.0, 0.0, 0.0], "listed director": [0.0, 0.0, 1.0], "directed": [0.0, 0.2, 0.98],
                 "release year": [0.95, 0.31, 0.0], "has release year": [0.95, 0.31, 0.0]}
    for reading in path_questions(*paths[0], TemplateVerbalizer({})):
        vector_of[reading] = [0.5, 0.866, 0.0]
    for reading in path_questions(*paths[1], TemplateVerbalizer({})):
        vector_of[reading] = [0.9, 0.436, 0.0]

    class Lookup:  # only the texts above: any other text is a KeyError
        def encode(self, texts):
            return np.array([vector_of[t] for t in texts], np.float32)

    walks = [_Walk(signature(*p)) for p in paths]

    def best(mix: float) -> tuple[str, list[str]]:
        prior = SyntheticPrior(paths, TemplateVerbalizer({}), Lookup(), f"lookup-{mix}", _settings(temperature=0.02, hop_weight=0.0, content_mix=mix, center=False, words_per_hop=1.0))
        texts = prior.question_texts(question)  # what the retriever encodes
        return walks[int(np.argmax(prior.shares(question, Lookup().encode(texts), walks)))].signature, texts

    assert best(0.0) == ("release_year>", [question])  # the whole questions alone
    assert best(0.5) == ("directed_by>", [question, "listed director"])
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.content_mix' must be"):  # ranges are the config's to check
        load_config(overrides=["query.synthetic.content_mix=1.5"])


def test_words_of_one_stem_count_as_one_word():
    assert words_of("who is the director of E, what did E's director direct?") == ["director", "direct"]  # "E's" is the topic's
    assert words_of("what starred in something, which was directed by something, which wrote E?") == ["starred", "directed", "wrote"]
    # automatic phrases read a noun relation backwards with "has", which no question needs to say
    assert words_of(path_questions(["starred_actors"], [True], TemplateVerbalizer({}))[0]) == ["starred", "actors"]
    assert same_stem("director", "directed") and same_stem("writer", "screenwriter") and same_stem("films", "film")
    assert not same_stem("acted", "actors") and not same_stem("the", "then")
    # an irregular form is its word's ("where was E born": place_of_birth; "when did E die": date_of_death)
    assert same_stem("born", "birth") and same_stem("died", "death") and same_stem("wrote", "written") and same_stem("sang", "singer")
    # a compound's last part in another form, only where asked for (the answer focus)
    assert same_stem("screenwriters", "written", compounds=True) and same_stem("written", "screenwriters", compounds=True)
    assert not same_stem("screenwriters", "written") and not same_stem("directed", "written", compounds=True)


def test_a_path_with_a_relation_the_question_does_not_speak_of_loses(tmp_path, monkeypatch):
    """"who wrote movies that share actors with E": the path through a director reads a little closer as a
    sentence, but nothing in the question speaks of directing; the path of actors, then the writer, wins."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mapped = TemplateVerbalizer({"starred_actors": ["starred", "starred in"], "written_by": ["was written by", "wrote"],
                                 "directed_by": ["was directed by", "directed"]})
    actors = (["starred_actors", "starred_actors", "written_by"], [False, True, False])
    director = (["written_by", "directed_by", "starred_actors"], [False, True, False])
    axis = np.eye(6, dtype=np.float32)
    # "director" is as far from "directed" as any word here: only their stem makes them one
    words = {"wrote": axis[0], "starred": 0.8 * axis[1] + 0.6 * axis[2], "actors": axis[1], "directed": axis[3], "director": axis[5]}

    class Words:  # sentences: the director path's readings lie 0.01 closer to the question; words as above
        def encode(self, texts):
            sentence = [axis[0] if "directed" in t else 0.99 * axis[0] + np.sqrt(1 - 0.99**2) * axis[5] for t in texts if " " in t]
            return np.array(sentence or [words.get(t, axis[4]) for t in texts], np.float32)

    walks = [_Walk(signature(*actors)), _Walk(signature(*director))]
    question = "who wrote movies that share actors with E"

    def best(coverage: float) -> str:
        prior = SyntheticPrior([actors, director], mapped, Words(), f"words-{coverage}", _settings(temperature=0.02, hop_weight=0.0, content_mix=0.0, center=False, coverage=coverage, words_per_hop=1.0))
        covered = prior.coverages([w.signature for w in walks], question) if coverage else None
        return walks[int(np.argmax(prior.shares(question, axis[:1], walks)))].signature, covered

    assert best(0.0)[0] == signature(*director)  # the sentences alone
    chosen, covered = best(0.3)
    assert chosen == signature(*actors)
    # the better of the phrase map's question and the relation names' own, which say "starred actors":
    # wrote, starred, actors (map: wrote, starred) | starred, actors, directed, wrote (map: starred, directed, wrote);
    # "starred" matches "actors" fully, a synonym (`SYNONYMS`), not by its word vector's 0.8
    assert np.allclose(covered, [(1.0 + 1.0 + 1.0) / 3, (1.0 + 1.0 + 0.0 + 1.0) / 4])
    # one stem: a question that speaks of the director covers "directed" fully (starred: nothing, wrote: itself)
    prior = SyntheticPrior([actors, director], mapped, Words(), "words", _settings(temperature=0.02, hop_weight=0.0, content_mix=0.0, center=False, coverage=0.3, words_per_hop=1.0))
    assert np.isclose(prior.coverages([signature(*director)], "who wrote movies of the director of E")[0], (0.0 + 1.0 + 1.0) / 3)
    # a long-lived prior keeps a bounded number of word vectors, and the coverages do not change when it starts over
    monkeypatch.setattr("kgwalk.query.synthetic.MAX_WORDS", 4)
    asked = [f"who wrote movies of the director {word} of E" for word in ("alpha", "bravo", "charlie", "delta", "echo")]
    bounded = [prior.coverages([signature(*actors), signature(*director)], q) for q in asked]
    assert len(prior.word_vectors) <= 4 + len(words_of(asked[0]))  # 10 without starting over
    monkeypatch.setattr("kgwalk.query.synthetic.MAX_WORDS", 10_000)
    assert np.allclose(bounded, [prior.coverages([signature(*actors), signature(*director)], q) for q in asked])
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.coverage' must be"):  # ranges are the config's to check
        load_config(overrides=["query.synthetic.coverage=-0.1"])


def test_the_words_beside_the_wh_word_weigh_most():
    # who (12): written (10) 1, films (7) 0.3, directors (4) 0.09, share (3) 0.027, films (1) 0.0081
    weights = focus_weights("the films that share directors with the films E are written by who", 0.3)
    assert weights == pytest.approx({"written": 1.0, "films": 0.3 + 0.3**4, "directors": 0.09, "share": 0.027})
    assert focus_weights("when did the movies E starred in release", 0.3) == pytest.approx({"when": 1.0, "movies": 0.3, "starred": 0.09, "release": 0.027})
    assert focus_weights("describe E in a few words", 0.3) == {}  # no wh-word: no focus
    # a compound nearest the wh-word asks for its head: managers, of a national team
    assert focus_weights("who are the national team managers of E", 0.5) == pytest.approx({"managers": 1.0, "team": 0.5, "national": 0.25})
    # not a noun and the verb after it: "star" takes the actors
    assert focus_weights("which movies star the actors of E", 0.5) == pytest.approx({"movies": 1.0, "star": 0.5, "actors": 0.25})
    # "what" the object of the verb after its subject: the end names the answer's relation, not the subject
    assert focus_weights("what do the spouses of E's children do for a living", 0.3) == pytest.approx({"living": 1.0, "children": 0.3, "spouses": 0.09})
    assert focus_weights("when did the movies E starred in release", 0.3)["when"] == 1.0  # "when" names the answer itself
    # a wh-word and its copula asking through the topic's possessives ask for the noun the chain ends in
    assert focus_weights("what is E's father's wife's nationality?", 0.3) == pytest.approx({"nationality": 1.0, "wife's": 0.3, "father's": 0.09})
    assert focus_weights("where is E's team based?", 0.3)["where"] == 1.0  # "where" names the answer itself


def test_the_path_whose_last_step_the_wh_phrase_names_wins(tmp_path, monkeypatch):
    """"the films that share directors with E are written by who": the writers of films by E's director, not the
    directors of films by E's writer, though both paths speak of directing and writing and the second reads a
    little closer as a sentence; the question names writing beside its wh-word, and the answer is the last step's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    mapped = TemplateVerbalizer({"written_by": ["was written by", "wrote"], "directed_by": ["was directed by", "directed"]})
    writers = (["directed_by", "directed_by", "written_by"], [False, True, False])
    directors = (["written_by", "directed_by", "directed_by"], [False, True, False])
    one_step = (["written_by"], [False])
    axis = np.eye(64, dtype=np.float32)
    closer = set(path_readings(*directors, [mapped, TemplateVerbalizer({})]))

    class Words:  # one axis per word (only one word or stem matches); the directors path's readings 0.01 closer
        vocabulary: dict[str, int] = {}

        def encode(self, texts):
            return np.array([(axis[0] if t in closer else 0.99 * axis[0] + np.sqrt(1 - 0.99**2) * axis[1]) if " " in t
                             else axis[2 + Words.vocabulary.setdefault(t, len(Words.vocabulary))] for t in texts], np.float32)

    walks = [_Walk(signature(*writers)), _Walk(signature(*directors)), _Walk(signature(*one_step))]
    question = "the films that share directors with the films E are written by who"

    def prior(focus: float) -> SyntheticPrior:
        return SyntheticPrior([writers, directors, one_step], mapped, Words(), f"words-{focus}", _settings(temperature=0.02, hop_weight=0.0, content_mix=0.0, center=False, focus=focus, words_per_hop=1.0))

    def best(focus: float) -> str:
        return walks[int(np.argmax(prior(focus).shares(question, axis[:1], walks)))].signature

    assert best(0.0) == signature(*directors)  # the sentences alone
    assert best(0.3) == signature(*writers)
    # per step, the weighted match of the question's words (directors: 0.09 with "directed", written: 1 with the
    # relation's phrase read the other way, "was written by"; "wrote" matches nothing), over the weights' sum
    total = 1.0 + 0.3 + 0.3**4 + 0.09 + 0.027
    steps = {"writers": [0.09, 0.09, 1.0], "directors": [1.0, 0.09, 0.09]}
    expected = [(s[-1] - np.mean(s)) / total for s in steps.values()] + [0.0]  # a one-step path: nothing to compare
    assert np.allclose(prior(0.3).focuses([w.signature for w in walks], question), expected)
    assert not prior(0.3).focuses([w.signature for w in walks], "name the films E's directors wrote").any()  # no wh-word
    # "who is the writer of E" asks for one step (one content word): the three-step path ends in writing too, but gains nothing
    assert np.allclose(prior(0.3).focuses([w.signature for w in walks], "who is the writer of E"), [0.0, -1 / 3, 0.0])
    # a role noun beside the wh-word names the answer's relation by a compound: screenwriters (1) ~ written, films (0.3),
    # directed (0.09) and director (0.027) ~ directed; without the compound rule, the writing step would match nothing
    steps = {"writers": [0.117, 0.117, 1.0], "directors": [1.0, 0.117, 0.117]}
    expected = [(s[-1] - np.mean(s)) / (1.0 + 0.3 + 0.09 + 0.027) for s in steps.values()] + [0.0]
    asked = "who are the screenwriters of the films directed by the director of E"
    assert np.allclose(prior(0.3).focuses([w.signature for w in walks], asked), expected)
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.focus' must be"):  # ranges are the config's to check
        load_config(overrides=["query.synthetic.focus=-0.1"])


def test_the_words_naming_the_answer_follow_what_or_which():
    assert answer_noun("in which country was the director of E born?") == ["country"]
    assert answer_noun("what is the name of the country where the person who directed E was born?") == ["country"]
    assert answer_noun("what kind of film is E?") == ["film"]
    assert answer_noun("what do the children of E do for a living?") == []  # "what do": the children do it, they are not asked for
    assert answer_noun("what is the release year of E") == ["release", "year"]
    assert answer_noun("what genres are the films written by E in") == ["genres"]
    assert answer_noun("what did E direct") == []  # the topic comes first: nothing names the answer
    assert answer_noun("who directed E") == []  # no noun after the wh-word
    assert answer_noun("when was E born, and what city") == []  # the first wh-word counts
    # of several sentences asking, the last says what is asked for; an earlier one sets the scene
    assert answer_noun("How international is the squad at E? Which countries do its players turn out for?") == ["countries"]
    assert answer_noun("Is E a comedy, a drama or what? Which genre?") == ["genre"]
    assert answer_noun("Which films did E star in? Who directed them?") == []
    assert answer_noun("E: at which club?") == ["club"]  # one sentence asks
    assert answer_noun("the country of birth of the singer of E") == ["country"]  # no wh-word: the first content words
    assert answer_noun("genre of E?") == ["genre"]
    assert answer_noun("what are the titles of the movies E directed") == ["movies"]  # a title is a name
    assert answer_noun("E's home country?") == ["home", "country"]  # after the topic's possessive, what it owns
    assert answer_noun("E's club's country?") == ["country"]  # a possessive names the owner, not the answer
    assert answer_noun("what is E's father's wife's nationality?") == ["nationality"]  # so after a wh-word
    assert answer_noun("which country is E's club in") == ["country"]  # the noun asked for comes first: the topic ends it
    assert answer_noun("which club's players play for E") == ["club"]  # the wh-word's noun is the owner asked for, as "whose"
    # a request around the question is not its noun: "give me a list of films": the films
    assert answer_noun("give me a list of films by director E") == ["films"] and answer_noun("find films on the topic of E") == ["films"]
    # a wh-word after the noun the question starts with opens a relative clause on it: that noun is asked
    assert answer_noun("the country where E was born") == ["country"]
    # a "what" after the relative clause asks: not the man, his country
    assert answer_noun("The man who coaches E, what is his country of origin?") == ["country"]
    assert answer_noun("Which country's league is E's club in?") == ["country"] and answer_noun("what is E's club's country") == ["country"]
    assert answer_noun("films whose screenplay was written by E") == ["films"]
    assert answer_noun("the national teams of the players who share a club with E") == ["national", "teams"]
    assert answer_noun("Name the players at the World Cup who share a club with E.") == ["players"]
    assert answer_noun("I need the club E plays for") == ["club"]  # "need" asks, as "want" does
    # not where the topic or a preposition comes before the wh-word: that one asks
    assert answer_noun("The coach E, he is coming from which country?") == ["country"]
    assert answer_noun("Players of E go to other national teams: who coaches those teams?") == []
    assert answer_noun("do you know who E's other half is?") == []
    # a search's words after the topic name a path from it: the last says what the answer is
    assert answer_noun("E birth country") == ["country"] and answer_noun("E in-laws birthplace") == ["birthplace"]
    assert answer_noun("E how old") == [] and answer_noun("E") == []
    assert answer_noun("which movies show E") == ["movies", "show"]  # a request's word after the noun is the noun's


def test_the_words_a_question_ending_in_a_copula_says_its_answer_is():
    assert predicate_noun("which people from E are judges?") == ["judges"]
    assert predicate_noun("who among the children of E was a poet") == ["poet"]  # the article skipped
    assert predicate_noun("which films are about E") == []  # the topic follows
    assert predicate_noun("what is E") == [] and predicate_noun("which films are E's") == []  # the topic, or its possessive
    assert predicate_noun("the films of E are in which language") == []  # a function word and a wh-word follow
    assert predicate_noun("which child of E was born in E?") == []
    assert predicate_noun("what movies did E star in") == []  # no copula


def test_the_order_a_path_takes_the_named_relations_in():
    """Nested and possessive questions name their relations from the answer in: the path takes them the other way."""
    assert path_order("the nationality of the spouse of the parent of E") == ["parent", "spouse", "nationality"]
    assert path_order("where were the parents of E's spouse born?") == ["spouse", "parents", "where", "born"]
    assert path_order("E's spouse's parents' birthplace") == ["spouse", "parents", "birthplace"]
    assert path_order("who directed the films that E acted in") == ["acted", "films", "directed"]  # E the relative clause's subject
    assert path_order("who acted in the movies E directed?") == ["directed", "movies", "acted"]  # the same without "that"
    # a compound's nouns in their own order, the head last: the players' national team, then its managers; a verb ends one
    assert path_order("who are the national team managers of the players at E?") == ["players", "national", "team", "managers"]
    assert path_order("who directed films starring E") == ["starring", "films", "directed"]
    assert path_order("where is the company that produced E headquartered?") == ["produced", "company", "where", "headquartered"]
    assert path_order("what position does E play") == ["position", "play"]  # after an auxiliary: one verb with its noun
    # a possessed noun runs on as a compound, up to a verb: the team, its coach, then the nationality
    assert path_order("nationality of E's national team coach") == ["national", "team", "coach", "nationality"]
    assert path_order("in which country is E's club based") == ["club", "country", "based"]
    assert path_order("what position does E's club play") == ["club", "position", "play"]  # a do-form's bare verb
    assert path_order("which films did E and E make together") == []  # two topics: no one order

    relations = [(["parents", "spouse", "nationality"], [False, False, False]), (["spouse", "parents", "nationality"], [False, True, False]),
                 (["spouse", "nationality"], [False, False])]
    sigs = [signature(*path) for path in relations]

    def prior(order: float) -> SyntheticPrior:
        return SyntheticPrior(relations, TemplateVerbalizer({}), _Tie(), f"order-{order}", _settings(hop_weight=0.0, content_mix=0.0, center=False, order=order))

    question = "the nationality of the spouse of the parent of E"
    # parents -> spouse -> nationality, all in order; spouse before parents: one pair of three the other way; two in order
    assert prior(0.2).orders(sigs, question).tolist() == [1.0, pytest.approx(1 / 3), 1.0]
    assert np.allclose(prior(0.2).orders(sigs, "what is the nationality of E"), 0.0)  # one relation named: no order
    walks = [_Walk(sigs[1]), _Walk(sigs[0])]
    assert prior(0.2).shares(question, np.array([[1.0, 0.0]]), walks).argmax() == 1
    assert np.allclose(*prior(0.0).shares(question, np.array([[1.0, 0.0]]), walks))  # off: a tie
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.order' must be"):
        load_config(overrides=["query.synthetic.order=-1"])


def test_a_step_back_along_a_mirrored_relation_reads_as_its_mirror(tmp_path, monkeypatch):
    """A KG stating parents and children both ways reaches E's parents by either, E parents> P or E <children P. The
    second reads "who has E as a child": neither "parents" nor its words, so "the parents of E" named one path of two.
    Read as its mirror, it is the first path's question, and takes the relation the question names."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    forward, backward = (["parents", "place_of_birth"], [False, False]), (["children", "place_of_birth"], [True, False])
    sigs = [signature(*forward), signature(*backward)]

    def prior(mirrors) -> SyntheticPrior:
        return SyntheticPrior([forward, backward], TemplateVerbalizer({}), _Tie(), "mirrors", _settings(hop_weight=0.0, content_mix=0.0, center=False),
                              mirrors=mirrors)

    mirrored = prior({"parents": {"children"}, "children": {"parents"}})
    assert mirrored.questions[sigs[1]] == mirrored.questions[sigs[0]] == prior({}).questions[sigs[0]]
    assert prior({}).questions[sigs[1]] != prior({}).questions[sigs[0]]
    question = "where were the parents of E born"
    assert np.allclose(mirrored.named_relations(sigs, question), [1.0, 1.0])
    assert np.allclose(prior({}).named_relations(sigs, question), [1.0, 0.5])  # "born" alone
    # children> is E's children: read as it is, it names no parent
    assert mirrored._step_relations("children>|place_of_birth>") == [{"children"}, {"place_of_birth"}]

    # the pairs come from the KG's own tables, read once a version
    edges, relations = tmp_path / "edges", tmp_path / "relations"
    family = [(1, 10, 2), (2, 11, 1), (3, 10, 4), (4, 11, 3), (1, 12, 5)]
    write_table(edges, pa.table({"src": [e[0] for e in family], "rel": [e[1] for e in family], "dst": [e[2] for e in family]}))
    write_table(relations, pa.table({"id": [10, 11, 12], "label": ["parents", "children", "place_of_birth"]}))
    assert read_mirrored_relations(str(edges), str(relations)) == {"parents": {"children"}, "children": {"parents"}}
    assert list((tmp_path / "kgwalk" / "tables").glob("mirrored-relations-*.npz"))  # cached for the next load


def test_a_role_the_topic_has_towards_the_answer_reads_as_its_mirror(tmp_path, monkeypatch):
    """"which people have E as a parent" asks for E's children: the role "parent" is E's, not the answer's. Word
    vectors and spelling read no direction, so it named E's parents as well as E's children, and a path there and back
    by both (E's children's parents) read nearer than either. Where the KG states the relation both ways, the question
    reads in the mirror's words; where it does not, or the role names no relation, as it is."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert inverse_role("which people have E as a parent?") == (13, 31, ["parent"], "are {}")
    assert inverse_role("which couple is E the son or daughter of?")[2:] == (["son", "daughter"], "is {}")
    assert inverse_role("who calls E grandma or grandpa?")[2] == ["grandma", "grandpa"]
    assert inverse_role("people whose parent is E")[3] == "who are {}" and inverse_role("E is the daughter of whom?")[3] == "{} is"
    # the answer's own role, or none: "who raised E as their mother and father" are E's parents
    assert inverse_role("the people who raised E as their mother and father") is None and inverse_role("who is the father of E") is None
    up, down, back = (["parents"], [False]), (["children"], [False]), (["children", "parents"], [False, False])
    sigs = [signature(*p) for p in (up, down, back)]

    def prior(mirrors) -> SyntheticPrior:
        return SyntheticPrior([up, down, back], TemplateVerbalizer({}), _Tie(), "roles", _settings(hop_weight=0.0, content_mix=0.0, center=False),
                              mirrors=mirrors)

    mirrored = prior({"parents": {"children"}, "children": {"parents"}})
    assert mirrored._as_read("which people have E as a parent?") == "which people are the children of E?"
    assert mirrored._as_read("who calls E grandma or grandpa?") == "who are the grandchildren of E?"
    assert mirrored._as_read("which couple is E the son or daughter of?") == "which couple is the parents of E?"
    assert np.allclose(mirrored.named_relations(sigs, mirrored._as_read("which people have E as a parent?"), 1.0), [0.0, 1.0, 1.0])
    assert np.allclose(prior({}).named_relations(sigs, "which people have E as a parent?", 1.0), [1.0, 0.0, 1.0])
    # no mirror, or a role naming no relation: as asked
    assert prior({})._as_read("which people have E as a parent?") == "which people have E as a parent?"
    assert mirrored._as_read("which films have E as one of their keywords?") == "which films have E as one of their keywords?"


def test_a_word_naming_its_relation_twice_is_half_named_by_one_step(tmp_path, monkeypatch):
    """"the grandchildren of E" names children for two steps: the cosines read it as "children", one step, so a path
    taking children once meets the word only half."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    once, twice = (["children"], [False]), (["children", "children"], [False, False])
    sigs = [signature(*once), signature(*twice)]
    prior = SyntheticPrior([once, twice], TemplateVerbalizer({}), _Tie(), "twice", _settings(hop_weight=0.0, content_mix=0.0, center=False))
    assert np.allclose(prior.named_relations(sigs, "who are the grandchildren of E", 2.0), [0.5, 1.0])
    assert np.allclose(prior.named_relations(sigs, "who are the children of E", 2.0), [1.0, 1.0])  # named once: either meets it
    # a word of kin by marriage names two relations, a step each: "the father-in-law of E" is met by the spouse's parents
    spouse, in_law, at_work = (["spouse"], [False]), (["spouse", "parents"], [False, False]), (["spouse", "profession"], [False, False])
    sigs = [signature(*p) for p in (spouse, in_law, at_work)]
    prior = SyntheticPrior([spouse, in_law, at_work], TemplateVerbalizer({}), _Tie(), "in-law", _settings(hop_weight=0.0, content_mix=0.0, center=False))
    assert np.allclose(prior.named_relations(sigs, "who is the father-in-law of E", 2.0), [0.5, 1.0, 0.5])


class _EndWalk(_Walk):
    def __init__(self, sig: str, end: str) -> None:
        super().__init__(sig)
        self.node_labels = ["E", end]


def test_the_path_whose_ends_read_as_the_asked_noun_wins(tmp_path, monkeypatch):
    """"which country was E born in": two paths read alike (a birthplace, a club's home city, say), but only one's ends
    read like a country; the term is the mean cosine of a path's end labels to the asked noun, less the paths' mean."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    born, home = (["born_in"], [False]), (["headquartered_in"], [False])
    axis = np.eye(16, dtype=np.float32)
    words = {"country": axis[2], "veronia": 0.8 * axis[2] + 0.6 * axis[3], "caldonia": 0.6 * axis[2] + 0.8 * axis[3], "lakeford": axis[4],
             "place": axis[4]}

    class Words:  # every path question on one axis (a tie), the words and labels as above, other words on axes of their own
        def encode(self, texts):
            return np.array([axis[0] if " " in t else words.get(t.lower(), axis[5 + len(t) % 10]) for t in texts], np.float32)

    walks = [_EndWalk(signature(*home), "Lakeford"), _EndWalk(signature(*born), "Veronia"), _EndWalk(signature(*born), "Caldonia")]
    sigs = [signature(*home), signature(*born)]

    def prior(weight: float, margin: float = 0.05) -> SyntheticPrior:
        return SyntheticPrior([home, born], TemplateVerbalizer({}), Words(), f"types-{weight}",
                              _settings(hop_weight=0.0, content_mix=0.0, center=False, answer_type=weight, answer_type_margin=margin))

    question = "which country was E born in"
    # ends' means 0 and 0.7, less their mean 0.35, each brought the margin nearer 0
    assert np.allclose(prior(0.5).answer_types(sigs, question, walks), [-0.30, 0.30])
    assert not prior(0.5, margin=0.4).answer_types(sigs, question, walks).any()  # within the margin: counted as noise
    assert np.allclose(prior(0.0).shares(question, axis[:1], walks), 1 / 2)  # off: the tie stays
    shares = prior(0.5).shares(question, axis[:1], walks)
    assert shares[1] == shares[2] > 0.99  # on: the path to countries takes the share
    # "where" asks for a place, as "which place" would; narrowed by a phrase ("where on the pitch"), for no place: no term
    assert np.allclose(prior(0.5).answer_types(sigs, "where was E born", walks), [0.45, -0.45])
    assert asks_where("where do E's parents come from") and not asks_where("where on the pitch does E play")
    assert asks_where("E is a club based where?") and asks_where("E's director was born where?")  # the wh-word last
    assert not prior(0.5).answer_types(sigs, "where on the pitch was E born", walks).any()
    assert not prior(0.5).answer_types(sigs, "who was E", walks).any()  # no noun names the answer: no term
    # an end its step's phrase names a category ("has genre") is none of the kind asked, however like it its label reads;
    # unless the question asks for a category ("what kind of country")
    genre = (["has_genre"], [False])
    typed = SyntheticPrior([born, genre], TemplateVerbalizer({}), Words(), "types-genre", _settings(hop_weight=0.0, content_mix=0.0, center=False))
    kinds = [signature(*born), signature(*genre)]
    ends = [_EndWalk(kinds[0], "Caldonia"), _EndWalk(kinds[1], "Veronia")]
    assert np.allclose(typed.answer_types(kinds, "which country was E born in", ends), 0.0)  # both the least: no difference
    assert typed.answer_types(kinds, "what kind of country was E born in", ends).tolist() == pytest.approx([-0.05, 0.05])
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.answer_type' must be"):
        load_config(overrides=["query.synthetic.answer_type=-1"])


def test_what_the_topic_itself_has_is_named_at_the_first_step():
    """"E gets picked for his country by which coach": his country is E's own, his national team; the country of his
    club is a step further. A word right after the topic's possessive names a relation only where a path takes it
    first, in the named and the order terms; after a later possessive ("E's club's country") the club is E's."""
    relations_of = {"country": ["country"], "coach": ["coach"], "club": ["club"], "national": ["national_team"], "actors": ["starred_actors"]}
    names = lambda word: relation_word_matches(word, relations_of)  # noqa: E731
    assert topic_owned_words("E gets picked for his country by which coach?", names) == {"country"}
    assert topic_owned_words("what is E's club's country?", names) == {"club"}
    assert topic_owned_words("the nationality of E's national team coach", names) == {"national"}
    assert topic_owned_words("who directed the films of his father E", names) == set()  # the pronoun before the topic: someone else's
    assert topic_owned_words("who are the actors of E, and where are their clubs?", names) == set()  # the actors' clubs
    assert topic_owned_words("which country is E from?", names) == set()
    paths = [(["national_team", "coach"], [False, False]), (["club", "country", "coach"], [False, False, False])]
    sigs = [signature(*path) for path in paths]
    prior = SyntheticPrior(paths, TemplateVerbalizer({}), _Tie(), "owned", _settings(hop_weight=0.0, content_mix=0.0, center=False, named=0.2, order=0.1))
    # "country" names the club's country relation, taken second: not E's own country
    assert prior.named_relations(sigs, "E gets picked for his country by which coach?").tolist() == pytest.approx([0.5, 0.5])
    # the country of his club: the club is his (first), its country is not (country, club, coach: one of three, all three)
    assert prior.named_relations(sigs, "E gets picked for the country of his club by which coach?").tolist() == pytest.approx([1 / 3, 1.0])
    assert prior.orders(sigs, "E gets picked for his country by which coach?").tolist() == pytest.approx([0.0, 0.0])
    assert prior.orders(sigs, "which coach coaches the country E's club plays in?")[1] > 0  # "club" is E's: first, then country, coach


def test_the_kind_asked_for_one_step_past_the_named_relations(tmp_path, monkeypatch):
    """"in which country was E born": the words name one step (born), but the birthplaces are cities and their countries one
    step on. A path one step past another, whose ends read as the asked kind where the other's do not, may be that step
    longer at no cost; the step count alone picks the city."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    born, country, region, back = ((["born_in"], [False]), (["born_in", "located_in"], [False, False]),
                                   (["born_in", "has_region"], [False, False]), (["born_in", "born_in"], [False, True]))
    axis = np.eye(16, dtype=np.float32)
    words = {"country": axis[2], "veronia": axis[2], "caldonia": 0.8 * axis[2] + 0.6 * axis[3], "lakeford": axis[4], "north": axis[2]}

    class Words:  # every path question on one axis (a tie), the end labels as above, other words on axes of their own
        def encode(self, texts):
            return np.array([axis[0] if " " in t else words.get(t.lower(), axis[5 + len(t) % 10]) for t in texts], np.float32)

    def walks_of(*paths):
        ends = {signature(*born): "Lakeford", signature(*country): "Veronia", signature(*region): "North", signature(*back): "Lakeford"}
        return [_EndWalk(signature(*p), ends[signature(*p)]) for p in paths]

    def prior(gap: float, paths=(born, country)) -> SyntheticPrior:
        return SyntheticPrior(list(paths), TemplateVerbalizer({}), Words(), f"kinds-{gap}",
                              _settings(hop_weight=1.0, content_mix=0.0, center=False, answer_type=0.5, kind_step=gap))

    question = "in which country was E born"
    walks, sigs = walks_of(born, country), [signature(*born), signature(*country)]
    types = prior(0.2).answer_types(sigs, question, walks)
    assert prior(0.2).expected_hops(question) == pytest.approx(2 / 1.75)  # country, born
    kind = prior(0.2).kind_steps(sigs, question, types)
    assert kind.tolist() == [False, True]
    assert np.allclose(prior(0.2).expected_steps(sigs, question, kind), [2 / 1.75, 2.0])  # as many as the path takes
    # words counting less than a step name little but the kind: it is asked for by that step ("which country is E in")
    assert not prior(0.2).kind_steps(sigs, "which country is E in", types).any()
    # a birthplace may read a little as a country, more than the paths' ends on average (Vienna): the gap still tells
    assert prior(0.2).kind_steps(sigs, question, np.array([0.06, 0.3])).tolist() == [False, True]
    assert not prior(0.2).kind_steps(sigs, question, np.array([0.06, 0.2])).any()  # less than the gap apart
    # nor past a path already longer than the words count ("what movies was E the writer of": not the films of the
    # directors of E's films' actors, past E's films' actors)
    further = (["born_in", "located_in", "located_in"], [False, False, False])
    longer = [signature(*country), signature(*further)]
    assert not prior(0.2, (country, further)).kind_steps(longer, question, np.array([-0.3, 0.3])).any()
    assert prior(0.2, (country, further)).kind_steps(longer, "in which country was the CEO of E born", np.array([-0.3, 0.3])).tolist() == [False, True]
    assert np.argmax(prior(0.2).shares(question, axis[:1], walks)) == 1  # the country
    assert np.argmax(prior(0.0).shares(question, axis[:1], walks)) == 0  # off: the step count keeps the city
    assert not prior(0.95).kind_steps(sigs, question, types).any()  # the ends' match (0.9 apart) less than the gap apart
    # "where" asks for a place: a step past the named ones only where the words count it, as no birthplace is past "born"
    assert not prior(0.2).kind_steps(sigs, "where was E born", types).any()
    assert prior(0.2).kind_steps(sigs, "where is E's birthplace situated", types).tolist() == [False, True]
    assert not prior(0.2).kind_steps(sigs, "how was E born", types).any()  # no kind asked
    # no step goes down to a town from another place: "which city" asks for the birthplace however its country reads
    assert not prior(0.2).kind_steps(sigs, "in which city was E born", types).any()
    # the noun's head names the kind, a word before it may name a step ("E's birth country": the birthplace's country)
    assert prior(0.2).kind_steps(sigs, "what is the born country of E", types).tolist() == [False, True]
    # so do a noun the question starts with before a relative clause, and a search's last word
    assert prior(0.2).kind_steps(sigs, "the country where E was born", types).tolist() == [False, True]
    assert prior(0.2).kind_steps(sigs, "E born country", types).tolist() == [False, True]
    # a step whose phrase names a kind any place is ("has location") contradicts no kind asked for
    located = (["born_in", "has_location"], [False, False])
    others = [signature(*born), signature(*located)]
    at = prior(0.2, (born, located))
    assert at.kind_steps(others, question, at.answer_types(others, question, [_EndWalk(others[0], "Lakeford"), _EndWalk(others[1], "Veronia")])).tolist() == [False, True]
    # the last step's phrase names another kind for its end ("has region"), or goes back by the step before (a peer): no step owed
    for other in (region, back):
        paths = walks_of(born, other)
        others = [signature(*born), signature(*other)]
        assert not prior(0.2, (born, other)).kind_steps(others, question, prior(0.2, (born, other)).answer_types(others, question, paths)).any()
    # nor one step past a peer (the country of someone born where E was): E's own country is not asked through a peer
    past_peer = (["born_in", "born_in", "located_in"], [False, True, False])
    paths = [_EndWalk(signature(*back), "Lakeford"), _EndWalk(signature(*past_peer), "Veronia")]
    others = [signature(*back), signature(*past_peer)]
    assert not prior(0.2, (back, past_peer)).kind_steps(others, question, prior(0.2, (back, past_peer)).answer_types(others, question, paths)).any()
    # unless the peers are on the way, not the answer: then a step past them is as any other
    asking = "which home country do the classmates of E come from"
    types = prior(0.2, (back, past_peer)).answer_types(others, asking, paths)
    assert prior(0.2, (back, past_peer)).kind_steps(others, asking, types).tolist() == [False, True]
    # and still no kind step that goes back by the step before: the peers' own birthplaces, not what they were born in
    ends_back = (["born_in", "located_in", "located_in"], [False, False, True])
    paths = [_EndWalk(signature(*country), "Veronia"), _EndWalk(signature(*ends_back), "Veronia")]
    others = [signature(*country), signature(*ends_back)]
    assert not prior(0.2, (country, ends_back)).kind_steps(others, asking, np.array([-0.3, 0.3])).any()
    # nor where the peers are the answer: the noun asked for among the words of sharing, or the wh-word's "other"
    for peers_asked in ("the classmates of E also come from which home country", "which other home country do the classmates of E come from"):
        assert not prior(0.2, (back, past_peer)).kind_steps([signature(*back), signature(*past_peer)], peers_asked, np.array([-0.3, 0.3])).any()
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.kind_step' must be"):
        load_config(overrides=["query.synthetic.kind_step=-1"])


def test_a_kind_step_scores_at_least_as_its_prefix_with_its_own_ends_type():
    """The words name the prefix ("in which country was the CEO of E born": the CEO, the birth) and the kind asks for the
    step past it: the word terms must not hold the unnamed step ("is located in") against it."""
    sigs = ["has_ceo>|born_in>", "has_ceo>|born_in>|located_in>", "has_ceo>|born_in>|has_region>"]
    scores, typed = np.array([1.0, 0.7, 0.6]), np.array([0.02, 0.15, 0.1])
    read = SyntheticPrior.as_prefixes(sigs, scores, typed, np.array([False, True, False]))
    assert read.tolist() == pytest.approx([1.0, 1.0 - 0.02 + 0.15, 0.6])  # the country wins; a path not a kind step keeps its own
    assert scores.tolist() == [1.0, 0.7, 0.6]
    assert SyntheticPrior.as_prefixes(sigs, np.array([0.5, 0.9, 0.6]), typed, np.array([False, True, False]))[1] == 0.9  # its own where more


def test_an_end_its_steps_phrase_names_as_the_asked_kind_is_of_that_kind(tmp_path, monkeypatch):
    """"the national teams of the players of E": the players whose national team is E's club's country may read more
    like "national teams" than a country's name does, but a step "has national team" names its end one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    forward, backward = (["national_team"], [False]), (["national_team"], [True])
    axis = np.eye(8, dtype=np.float32)
    words = {"national": axis[2], "teams": axis[2], "sides": axis[2], "portugal": axis[4], "silva": 0.6 * axis[2] + 0.8 * axis[3]}

    class Words:  # path questions on one axis, the words and end labels as above
        def encode(self, texts):
            return np.array([axis[0] if " " in t else words.get(t.lower(), axis[5]) for t in texts], np.float32)

    prior = SyntheticPrior([forward, backward], TemplateVerbalizer({}), Words(), "named-end", _settings(answer_type=0.5))
    sigs = [signature(*forward), signature(*backward)]
    walks = [_EndWalk(sigs[0], "Portugal"), _EndWalk(sigs[1], "Silva")]
    types = prior.answer_types(sigs, "which national teams do the players of E play for", walks)
    assert types[0] > 0 > types[1]
    types = prior.answer_types(sigs, "which teams do the players of E play for", walks)  # "national" unsaid: the labels tell
    assert types[1] > 0 > types[0]
    # a search's last word is its noun where it names no relation; one naming a relation may be the topic's role ("E
    # filmography actor": E's films as an actor), so it asks for no kind
    assert is_search("E national teams") and not is_search("E's national teams?") and not is_search("which teams do E play for")
    assert not prior.answer_types(sigs, "E national teams", walks).any()
    assert prior.answer_types(sigs, "E sides", walks)[1] > 0  # "sides" names no relation: the labels tell


def test_a_freebase_names_type_is_the_kind_a_step_back_along_it_ends_at(tmp_path, monkeypatch):
    """"films starring the actors of E's films": on a KG with Freebase names a backward step along film.film.starring
    ends at films, which its phrases (read from "starring") do not say; an actor's name may read as much like "films"
    as a title does. A forward step ends at what the relation's last part names, not at a film."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cast, films = (["film.film.starring"], [False]), (["film.film.starring"], [True])
    axis = np.eye(8, dtype=np.float32)
    words = {"films": axis[2], "casablanca": 0.5 * axis[2] + 0.866 * axis[3], "bogart": 0.6 * axis[2] + 0.8 * axis[4]}

    class Words:  # path questions on one axis, the words and end labels as above
        def encode(self, texts):
            return np.array([axis[0] if " " in t else words.get(t.lower(), axis[5]) for t in texts], np.float32)

    prior = SyntheticPrior([cast, films], TemplateVerbalizer({}), Words(), "dotted-kind", _settings(answer_type=0.5))
    sigs = [signature(*cast), signature(*films)]
    assert prior._subject_kind(sigs[1]) == ["film"] and prior._subject_kind(sigs[0]) == []  # a forward step ends at the cast
    walks = [_EndWalk(sigs[0], "Bogart"), _EndWalk(sigs[1], "Casablanca")]
    types = prior.answer_types(sigs, "what films do the actors of E appear in", walks)
    assert types[1] > 0 > types[0]  # by the labels alone the actor's end read more like "films"
    walks = [_EndWalk(sigs[0], "Bogart"), _EndWalk(sigs[1], "Casablanca")]
    assert prior.answer_types(sigs, "which filmmakers did E act for", walks)[0] >= 0  # a compound's first part is no kind
    plain = SyntheticPrior([(["starring"], [False]), (["starring"], [True])], TemplateVerbalizer({}), Words(), "plain-kind", _settings(answer_type=0.5))
    assert plain._subject_kind("<starring") == []  # a name without a type says nothing of its subjects


def test_where_asks_for_a_step_whose_phrase_names_its_end_a_kind_of_place(tmp_path, monkeypatch):
    """"where is E's club based": a club's name ("Munich FC") may read more like a place than its country's does, but a
    step "has country" names its end a place, so it is the step "where" asks for past the club; one "has club" is not."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    club, country, coach = (["club"], [False]), (["club", "country"], [False, False]), (["club", "coach"], [False, False])
    axis = np.eye(8, dtype=np.float32)
    words = {"place": axis[2], "munich fc": 0.8 * axis[2] + 0.6 * axis[4], "germany": axis[3], "tom ray": axis[3]}

    class Words:  # labels as above, every other text on an axis of its own
        def encode(self, texts):
            return np.array([words.get(t.lower(), axis[5]) for t in texts], np.float32)

    prior = SyntheticPrior([club, country, coach], TemplateVerbalizer({}), Words(), "where-place", _settings(answer_type=0.5, kind_step=0.2))
    sigs = [signature(*club), signature(*country), signature(*coach)]
    walks = [_EndWalk(sigs[0], "Munich FC"), _EndWalk(sigs[1], "Germany"), _EndWalk(sigs[2], "Tom Ray")]
    question = "where is E's club based"
    types = prior.answer_types(sigs, question, walks)
    assert types[0] > types[1]  # the labels alone: the club reads more as a place
    assert prior.kind_steps(sigs, question, types).tolist() == [False, True, False]
    assert not prior.kind_steps(sigs, "where is E's club", types).any()  # the words count no step past the club
    assert not prior.kind_steps(sigs, "which coach does E's club have", types).any()  # no "where"


def test_a_question_asking_when_takes_the_path_ending_in_times(tmp_path, monkeypatch):
    """"when was E born": a birthplace and a birth year read alike to a prior whose relation names say nothing (opaque
    ids), but only one path ends in years or dates; "when" asks for a time whatever the KG calls the relation."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    place, year = (["R19"], [False]), (["R569"], [False])

    walks = [_EndWalk(signature(*place), "Lakeford"), _EndWalk(signature(*year), "1987"), _EndWalk(signature(*year), "12 May 1990"),
             _EndWalk(signature(*year), "Unknown")]
    sigs = [signature(*place), signature(*year)]
    prior = SyntheticPrior([place, year], TemplateVerbalizer({}), _Tie(), "when", _settings(hop_weight=0.0, content_mix=0.0, center=False, answer_type=0.5))
    # ends that are times: none of the first path's, 2 of 3 of the second's; less their mean 1/3, brought the margin nearer 0
    assert np.allclose(prior.answer_types(sigs, "when was E born", walks), [-(1 / 3 - 0.05), 1 / 3 - 0.05])
    assert prior.shares("when was E born", np.array([[1.0, 0.0]], np.float32), walks)[1] > 0.99
    assert not prior.answer_types(sigs, "who was E", walks).any()  # no time asked, no noun: no term
    assert asks_when("when did the films E starred in come out") and not asks_when("who knows when E was born")


def test_peer_words_and_paths_that_come_back_by_their_relation():
    assert asks_for_peers("which other films did the director of E make")
    assert asks_for_peers("what films share actors with E")
    assert asks_for_peers("who Co-starred with E")
    assert asks_for_peers("the actor E starred together with who")
    assert asks_for_peers("who are E's club teammates") and asks_for_peers("who were the classmates of E")
    assert not asks_for_peers("in which country was the director of E born")  # "country" is no "co-" word
    assert not asks_for_peers("what is the estimate of E's climate")  # no "-mates" word
    assert not asks_for_peers("who directed E")
    # what is asked is the peer: after "other", a "co-" word, or the answer's word and then a word of sharing
    for question in ("what other films were made by the directors E worked with", "who co-starred with E",
                     "which movies share actors with E", "what are the films that have the same screenwriter of E",
                     "who acted together with E", "who are movie co-writers of E", "who are E's club teammates"):
        assert asks_for_a_peer(question), question
    for question in ("the actors of the other films of the director of E", "who directed the films that share actors with E",
                     "who else starred in E", "the actor E starred together with who"):  # a peer on the way; "else": E's actors; nothing after a last wh-word to read
        assert not asks_for_a_peer(question), question
    assert peer_pairs(signature(["directed_by", "directed_by"], [False, True])) == (True,)
    assert peer_pairs(signature(["starred_actors", "starred_actors", "has_genre"], [False, True, False])) == (True, False)
    assert peer_pairs(signature(["directed_by", "written_by"], [False, True])) == (False,)  # another relation back: no shared node
    assert peer_pairs(signature(["located_in", "located_in"], [False, False])) == (False,)  # onwards, not back
    assert peer_pairs(signature(["directed_by"], [False])) == ()
    # a relation and one stating it the other way round, the same way: E's children's parents are E and a co-parent
    kin = frozenset({("children", "parents"), ("parents", "children")})
    assert peer_pairs(signature(["children", "parents"], [False, False]), kin) == (True,)
    assert peer_pairs(signature(["parents", "children"], [True, True]), kin) == (True,)
    assert peer_pairs(signature(["children", "parents"], [False, True]), kin) == (False,)  # E's children's children: onwards
    assert peer_pairs(signature(["children", "parents"], [False, False])) == (False,)  # no mirror known: two relations


def test_the_step_table_places_each_path_s_steps_among_the_distinct_steps():
    """The prior's per-step terms are read per path through this table: a step shared by paths is one place, and a
    shorter path is padded with a place past the steps, which a per-step array leaves 0."""
    steps, at = step_table(("directed_by>", "directed_by>|<directed_by", "starred_actors>|<starred_actors|directed_by>"))
    assert steps == ["directed_by>", "<directed_by", "starred_actors>", "<starred_actors"]
    assert at.tolist() == [[0, 4, 4], [0, 1, 4], [2, 3, 0]]
    per_step = np.array([1.0, 2.0, 4.0, 8.0, 0.0])
    assert per_step[at].sum(axis=1).tolist() == [1.0, 3.0, 13.0]
    assert not at.flags.writeable  # shared by the terms of one question


def test_a_question_asking_for_peers_takes_the_path_back_through_a_shared_node(tmp_path, monkeypatch):
    """"which other films share E's director": E's director's films and E's genre's films read alike to a prior that cannot
    tell the relations apart (opaque names); only the first comes back by the relation it left by. Unasked, a path ending
    in a peer loses a little: "which label was E signed to" is not the label's other artists."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    peers, onward, through = (["R57", "R57"], [False, True]), (["R57", "R136"], [False, True]), (["R57", "R57", "R136"], [False, True, False])

    sigs = [signature(*onward), signature(*peers), signature(*through)]
    walks = [_Walk(sigs[0]), _Walk(sigs[1]), _Walk(sigs[1])]

    def prior(peer: float, unasked: float = 0.0) -> SyntheticPrior:
        return SyntheticPrior([peers, onward, through], TemplateVerbalizer({}), _Tie(), f"peers-{peer}-{unasked}",
                              _settings(hop_weight=0.0, content_mix=0.0, center=False, peer=peer, peer_unasked=unasked))

    asked, unasked = "which other films share the director of E", "which films did the director of E make"
    # "which other films": the answer is the peer, so the pair ends the path (a pair on the way: the next test); centred
    assert np.allclose(prior(0.2).peers(sigs, asked), 0.2 * (np.array([0, 1, 0]) - 1 / 3))
    assert not prior(0.2).peers(sigs, unasked).any()  # unasked and no unasked weight: no term
    assert np.allclose(prior(0.2, 0.03).peers(sigs, unasked), -0.03 * (np.array([0, 1, 0]) - 1 / 3))  # only a pair at the end costs
    assert np.allclose(prior(0.0).shares(asked, np.array([[1.0, 0.0]], np.float32), walks), 1 / 2)  # off: the tie stays
    shares = prior(0.2).shares(asked, np.array([[1.0, 0.0]], np.float32), walks)
    assert shares[1] == shares[2] > 0.99 > 0.01 > shares[0]
    # unasked, the path onwards leads by 0.03 / temperature 0.03: e to 1
    assert prior(0.2, 0.03).shares(unasked, np.array([[1.0, 0.0]], np.float32), walks)[0] == pytest.approx(np.e / (1 + np.e))
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.peer_unasked' must be"):
        load_config(overrides=["query.synthetic.peer_unasked=-1"])


def test_a_path_taking_the_relation_the_question_names_wins(tmp_path, monkeypatch):
    """"which films share the screenwriter with E": the paths back through E's writer, its director and its actors read
    alike to the sentence encoder (here: exactly alike), but only relations the question names by a form of their words
    count ("screenwriter" holds "writ", as "written" begins), however near "films" reads to "directed". A path more
    steps longer than the question asks for than query.synthetic.focus_slack gains nothing."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    writer, director = (["written_by", "written_by"], [False, True]), (["directed_by", "directed_by"], [False, True])
    onward = (["written_by", "directed_by"], [False, True])  # E's writer's films as a director: one of two named words
    longer = (["written_by", "written_by", "directed_by"], [False, True, False])

    paths = [writer, director, onward, longer]
    sigs = [signature(*p) for p in paths]
    walks = [_Walk(sig) for sig in sigs]

    def prior(named: float) -> SyntheticPrior:
        return SyntheticPrior(paths, TemplateVerbalizer({}), _Tie(), f"named-{named}", _settings(hop_weight=0.0, content_mix=0.0, center=False, named=named))

    # 3 content words: 1.7 steps asked; the 3-step path is 1.3 longer, past the slack of 1
    asked = "which films share the screenwriter with E"
    assert np.allclose(prior(0.2).named_relations(sigs, asked), [1.0, 0.0, 1.0, 0.0])
    # two words name relations: "screenwriter" (written_by) and "directed" (directed_by); each met path takes its share, but
    # for the 3-step one: "E's", the topic's possessive, is no content word, so 3 words ask for 1.7 steps here too
    both = "which films directed by E's screenwriter"
    assert np.allclose(prior(0.2).named_relations(sigs, both), [0.5, 0.5, 1.0, 0.0])
    assert not prior(0.2).named_relations(sigs, "which films share something with E").any()  # no word names a relation
    assert np.allclose(prior(0.0).shares(asked, np.array([[1.0, 0.0]], np.float32), walks), 1 / 4)  # off: the tie stays
    shares = prior(0.2).shares(asked, np.array([[1.0, 0.0]], np.float32), walks)
    # 0.2 / temperature 0.03 apart: e ** (20 / 3) to 1
    assert shares[0] == shares[2] == pytest.approx(np.exp(20 / 3) / (2 * np.exp(20 / 3) + 2))
    assert shares[1] == shares[3] < 0.01
    with pytest.raises(KgwalkError, match=r"'query\.synthetic\.named' must be"):
        load_config(overrides=["query.synthetic.named=-0.2"])


def test_the_asked_noun_names_a_relation_only_where_a_step_ends_at_that_kind(tmp_path, monkeypatch):
    """"in which country is E based": a club's players play for a country, and its own country is where it is located.
    "country" is the object of plays_for_country's verb ("plays for country"): the kind of what it reaches, which a
    club's located_in reaches too, so as the asked noun it names no relation (the ends' kind is `answer_types`'). A
    relation named by the noun itself (`country`) keeps it; a step back along a relation starts at the kind its phrase
    names and does not end at one; a word that is no kind of the phrase ("plays" in "who plays for E") meets either way."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    based, back, forward = (["located_in"], [False]), (["located_in", "plays_for_country"], [False, True]), (["plays_for_country"], [False])
    own, own_back = (["country"], [False]), (["country"], [True])
    paths = [based, back, forward, own, own_back]
    sigs = [signature(*p) for p in paths]
    prior = SyntheticPrior(paths, TemplateVerbalizer({}), _Tie(), "noun-way", _settings(hop_weight=0.0, content_mix=0.0, center=False))
    assert prior._end_kinds("<plays_for_country") == []  # "is the country {} plays for": no end's kind
    # where a relation is named by the noun itself (`country`), the noun names relations, plays_for_country's step on
    assert prior._kind_words("in which country is E based?") == set()
    assert np.allclose(prior.named_relations(sigs, "in which country is E based?"), [0.0, 0.0, 1.0, 1.0, 0.0])
    without_own = SyntheticPrior(paths[:3], TemplateVerbalizer({}), _Tie(), "noun-way", _settings(hop_weight=0.0, content_mix=0.0, center=False))
    assert without_own._kind_words("in which country is E based?") == {"country"}
    assert not without_own.named_relations(sigs[:3], "in which country is E based?").any()
    # "play", no kind of the phrase, meets a step either way; "country", the verb's object, names none
    assert np.allclose(without_own.named_relations(sigs[:3], "what country does E play for?"), [0.0, 1.0, 1.0])
    # not the asked noun: "country" says what E is (`topic_kind_words`), no step; "plays" names one, and the two-step
    # path is past the steps asked
    assert np.allclose(without_own.named_relations(sigs[:3], "who plays for the country E?"), [0.0, 0.0, 1.0])
    assert np.allclose(without_own.named_relations(sigs[:3], "who plays for the country of E?"), [0.0, 1.0, 1.0])


def test_a_step_whose_name_says_nothing_of_its_end_reads_as_the_kind_a_category_names_for_it(tmp_path, monkeypatch):
    """"in which country does E's club play": the club's located_in reaches countries, as plays_for_country does, but
    only the teammates' plays_for_country says "country", and the wh-phrase's focus took that path. Read from the KG's
    edges, located_in's ends are of the kind plays_for_country's verb object names, and the focus meets it there too;
    a step naming its own end's kind (`country>`: "has country") keeps its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    edges, relations = tmp_path / "edges", tmp_path / "relations"
    ids = {"plays_for_country": 10, "plays_for_club": 11, "located_in": 12, "country": 13}
    facts = [(100 + p, "plays_for_country", 1 + p % 2) for p in range(8)] + [(100 + p, "plays_for_club", 50 + p % 6) for p in range(8)]
    facts += [(50 + c, "located_in", 1 + c % 2) for c in range(6)] + [(50 + c, "country", 1 + c % 2) for c in range(6)]
    write_table(edges, pa.table({"src": [f[0] for f in facts], "rel": [ids[f[1]] for f in facts], "dst": [f[2] for f in facts]}))
    write_table(relations, pa.table({"id": list(ids.values()), "label": list(ids)}))
    covers = read_covering_steps(str(edges), str(relations))
    assert covers["located_in>"] == {"plays_for_country>", "country>"}  # three clubs a country: a category too
    assert list((tmp_path / "kgwalk" / "tables").glob("covering-steps-*.npz"))  # cached for the next load

    own_club, teammates = (["plays_for_club", "located_in"], [False, False]), (["plays_for_club", "plays_for_club", "plays_for_country"], [False, True, False])
    sigs = [signature(*own_club), signature(*teammates)]
    axis = np.eye(64, dtype=np.float32)

    class Words:  # one axis per word: only a word itself (or its stem) matches
        vocabulary: dict[str, int] = {}

        def encode(self, texts):
            return np.array([axis[1 + Words.vocabulary.setdefault(t, len(Words.vocabulary))] if " " not in t else axis[0] for t in texts], np.float32)

    def prior(covers) -> SyntheticPrior:
        return SyntheticPrior([own_club, teammates, (["country"], [False])], TemplateVerbalizer({}), Words(), "covered", _settings(focus=0.3), covers=covers)

    typed, untyped = prior(covers), prior({})
    assert typed._step_words("located_in>") == [["located", "country"]]  # plays_for_country's object, once
    assert untyped._step_words("located_in>") == [["located"]]
    assert typed._step_words("country>") == untyped._step_words("country>")  # its phrase names its end's kind itself
    question = "in which country does E's club play?"
    before, after = untyped.focuses(sigs, question, 2.0), typed.focuses(sigs, question, 2.0)
    assert before[0] < before[1]  # "country" beside the wh-word met only by the teammates' plays_for_country
    # now met at located_in too ("play" still only by plays_for_country); the teammates' steps are as they were
    assert after[0] > before[0] and after[1] == pytest.approx(before[1])
    # coverage reads the path once more naming its end's kind, and takes the better reading: "country" is covered where
    # asked, and a question that does not say it ("where is E's club based") covers the plain reading as before
    assert typed._path_words(sigs[0])[-1][-1] == "country"
    covered, plain = typed.coverages(sigs, question), untyped.coverages(sigs, question)
    assert covered[0] > plain[0] and covered[1] == pytest.approx(plain[1])
    assert np.allclose(typed.coverages(sigs, "where is E's club based?"), untyped.coverages(sigs, "where is E's club based?"))
    # the kind asked for one step past the club the words name: the KG says located_in> ends at countries, however
    # the labels read ("country" names plays_for_country only as its verb's object: a kind, no step)
    club = (["plays_for_club"], [False])
    kind_sigs = [signature(*own_club), signature(*club)]

    def kind_steps(covers) -> list[bool]:
        noun_prior = SyntheticPrior([own_club, club, teammates], TemplateVerbalizer({}), Words(), "covered", _settings(kind_step=0.1), covers=covers)
        return noun_prior.kind_steps(kind_sigs, "what country is E's club in?", np.zeros(2)).tolist()

    assert kind_steps(covers) == [True, False] and kind_steps({}) == [False, False]


def test_an_end_a_category_relation_reaches_is_of_the_kind_its_name_says(tmp_path, monkeypatch):
    """"in which country was the CEO of E born": the CEO's birthplace is a city, its located_in one step on a country, but
    made-up names ("Eldonia") read like no country to word vectors, so the answer type could not tell the two paths
    apart. The KG says it: citizen_of (a category, three citizens a country) reaches Eldonia, and what one is a citizen
    of is a country. located_in's own name says nothing of its end, so its walk to Eldonia matches "country" fully;
    the city it also reaches (a located_in walk to a region) and a step naming its own end's kind keep their labels'
    match."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    edges, relations = tmp_path / "edges", tmp_path / "relations"
    ids = {"has_ceo": 10, "born_in": 11, "located_in": 12, "citizen_of": 13, "spouse": 14}
    eldonia, hestica, tamville, quelwyn, region = 1, 2, 3, 4, 5
    facts = [(100 + p, "citizen_of", eldonia if p % 2 else hestica) for p in range(8)] + [(200, "has_ceo", 100), (100, "born_in", tamville)]
    facts += [(tamville, "located_in", eldonia), (quelwyn, "located_in", hestica), (tamville, "located_in", region), (100, "spouse", 101)]
    write_table(edges, pa.table({"src": [f[0] for f in facts], "rel": [ids[f[1]] for f in facts], "dst": [f[2] for f in facts]}))
    write_table(relations, pa.table({"id": list(ids.values()), "label": list(ids)}))
    objects = read_category_objects(str(edges), str(relations))
    assert objects["citizen_of"].tolist() == [eldonia, hestica]  # four citizens each
    assert "spouse" not in objects and "has_ceo" not in objects  # one subject an object: roles, no categories
    assert list((tmp_path / "kgwalk" / "tables").glob("category-objects-*.npz"))  # cached for the next load

    born, country = (["has_ceo", "born_in"], [False, False]), (["has_ceo", "born_in", "located_in"], [False, False, False])
    sigs = [signature(*born), signature(*country)]

    def walk(sig: str, *labelled: tuple[int, str]) -> WalkHit:
        return WalkHit(walk_id=labelled[-1][0], score=0.0, kind="bfs", text="", nodes=[n for n, _ in labelled], node_labels=[label for _, label in labelled],
                       triples=[], signature=sig, cosine=0.0)

    start = [(200, "Primela Biotech"), (100, "Ines Varga"), (tamville, "New Tamville")]
    walks = [walk(sigs[0], *start), walk(sigs[1], *start, (eldonia, "Eldonia")), walk(sigs[1], *start, (region, "Tamshire"))]

    class Same:  # no label reads like "country": only what the KG says tells the ends apart
        def encode(self, texts):
            return np.array([[1.0, 0.0] if t == "country" else [0.0, 1.0] for t in texts], np.float32)

    def types(objects) -> list[float]:
        prior = SyntheticPrior([born, country], TemplateVerbalizer({}), Same(), "kinds", _settings(answer_type=0.5, answer_type_margin=0.0), objects=objects)
        return prior.answer_types(sigs, "in which country was the CEO of E born?", walks).tolist()

    plain, kinded = types({}), types(objects)
    assert plain == pytest.approx([0.0, 0.0])
    assert kinded[1] > 0 > kinded[0]  # half its walks end at a country the KG names so
    # a step naming its end's kind itself keeps its labels' match: "has capital" ends at capitals, whatever else reaches them
    capital = (["has_ceo", "born_in", "capital"], [False, False, False])
    capital_sigs = [sigs[0], signature(*capital)]
    prior = SyntheticPrior([born, capital], TemplateVerbalizer({}), Same(), "kinds", _settings(answer_type=0.5, answer_type_margin=0.0), objects=objects)
    capital_walks = [walks[0], walk(capital_sigs[1], *start, (eldonia, "Eldonia"))]
    assert prior.answer_types(capital_sigs, "in which country was the CEO of E born?", capital_walks).tolist() == pytest.approx([0.0, 0.0])
    assert prior.answer_types(sigs, "when was the CEO of E born?", walks).tolist() == pytest.approx([0.0, 0.0])  # a time: by the labels' form
    # a place of another level is none of the kind asked: a country the KG names so is no city, however its label reads
    # (every label reads as much like "city" here)
    prior = SyntheticPrior([born, country], TemplateVerbalizer({}), Same(), "kinds", _settings(answer_type=0.5, answer_type_margin=0.0), objects=objects)
    assert prior.answer_types(sigs, "in which city was the CEO of E born?", walks).tolist() == pytest.approx([0.25, -0.25])
    plain = SyntheticPrior([born, country], TemplateVerbalizer({}), Same(), "kinds", _settings(answer_type=0.5, answer_type_margin=0.0), objects={})
    assert plain.answer_types(sigs, "in which city was the CEO of E born?", walks).tolist() == pytest.approx([0.0, 0.0])
    # "has location" names a kind any place is, a city or a country: the KG's kind stands. A step naming a kind by its
    # verb's object, even the noun's ("lies in country"), says what its ends are by its own words: the labels decide
    for last, kinded in (("location", True), ("lies_in_country", False)):
        located = (["has_ceo", "born_in", last], [False, False, False])
        located_sigs = [sigs[0], signature(*located)]
        prior = SyntheticPrior([born, located], TemplateVerbalizer({}), Same(), "kinds", _settings(answer_type=0.5, answer_type_margin=0.0), objects=objects)
        located_walks = [walks[0], walk(located_sigs[1], *start, (eldonia, "Eldonia"))]
        found = prior.answer_types(located_sigs, "in which country was the CEO of E born?", located_walks).tolist()
        assert (found[1] > 0 > found[0]) if kinded else found == pytest.approx([0.0, 0.0]), last


def _peer_terms(*paths: tuple[list[str], list[bool]]) -> Callable[[str], np.ndarray]:
    """A question -> the peer term of each of `paths` (peer 0.2), under a prior whose cosines tie."""
    prior = SyntheticPrior(list(paths), TemplateVerbalizer({}), _Tie(), "peers", _settings(peer=0.2))
    sigs = [signature(*path) for path in paths]
    return lambda question: prior.peers(sigs, question)


def test_the_peers_asked_for_share_what_the_question_names(tmp_path, monkeypatch):
    """"the actors of the other films of the director of E": both paths go back through a shared node, E's director's or
    E's actors'; the question names directing, so only the pair on directed_by counts. Naming none, any pair would."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    by_director = (["directed_by", "directed_by", "starred_actors"], [False, True, False])
    by_actors = (["starred_actors", "starred_actors", "directed_by"], [False, True, False])

    peers = _peer_terms(by_director, by_actors)
    assert np.allclose(peers("the cast of the other films of the director of E"), [0.1, -0.1])
    # "actors" names starred_actors too ("actors" and "starring" are synonyms), but before the peer word: what is asked of
    # the peers, not what they share
    assert shared_words("the actors of the other films of the director of E") == ["other", "films", "director"]
    assert np.allclose(peers("the actors of the other films of the director of E"), [0.1, -0.1])
    assert np.allclose(peers("who directed the films that share actors with E"), [-0.1, 0.1])
    assert np.allclose(peers("who are in the other films of the people in E"), [0.0, 0.0])  # nothing named: both pairs


def test_a_peer_asked_for_is_where_the_path_ends(tmp_path, monkeypatch):
    """"what other films were made by the directors E worked with": the answer is the peer, so only a path ending in the
    pair gains (E's films' directors' films), not one going on from it (the cast of E's director's films). Where the
    peer is on the way ("the cast of the other films of the director of E"), a pair anywhere counts."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ends = (["starred_actors", "directed_by", "directed_by"], [True, False, True])
    goes_on = (["directed_by", "directed_by", "starred_actors"], [False, True, False])

    peers = _peer_terms(ends, goes_on)
    assert np.allclose(peers("what other films were made by the directors E worked with"), [0.1, -0.1])
    assert np.allclose(peers("the cast of the other films of the director of E"), [0.0, 0.0])


def _unit_rows(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def football_kg(tmp_path_factory):
    root = tmp_path_factory.mktemp("zero_shot_ranking")
    kg = root / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in triples()))
    # the real sentence embedder, automatic phrases only (no map for these relations)
    cfg = corpus.config(root / "warehouse", kg, ["embed.model=all-MiniLM-L6-v2", "query.encoder=torch", "verbalize.phrases={}"])
    corpus.build_in_process(cfg)
    return cfg


def test_the_synthetic_prior_puts_the_asked_path_first_on_plain_questions(football_kg):
    cfg = football_kg
    zero_shot = Retriever(cfg)
    assert zero_shot.rerank == "synthetic"  # auto without a fitted prior
    cosine = Retriever(corpus.config(cfg.warehouse, None, ["embed.model=all-MiniLM-L6-v2", "query.encoder=torch",
                                                          "verbalize.phrases={}", "query.rerank=none"]),
                       embedder=zero_shot.embedder)
    hits = {"synthetic": 0, "none": 0}
    for player, team, city, country in PLAYERS:
        for template, answer in QUESTIONS:
            question, gold = template.format(p=player), answer(player, team, city, country)
            for name, retriever in (("synthetic", zero_shot), ("none", cosine)):
                best = retriever.retrieve(question).walks[0]
                hits[name] += best.node_labels[-1] == gold
            best = zero_shot.retrieve(question).walks[0]
            assert best.score > best.cosine  # the prior's share is added to the topic's walks
    asked = len(PLAYERS) * len(QUESTIONS)
    assert hits["synthetic"] >= 0.75 * asked and hits["synthetic"] > hits["none"], hits
    zero_shot.close()
    cosine.close()
