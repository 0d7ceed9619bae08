"""Automatic relation phrases from relation names as real KGs spell them, with no phrase map."""

import pyarrow as pa
import pytest

from kgwalk.kg.relations import relation_words, subject_kind
from kgwalk.verbalize import TemplateVerbalizer
from kgwalk.verbalize.template import fallback_phrases


@pytest.mark.parametrize(
    "relation,words",
    [
        ("plays_for_country", ["plays", "for", "country"]),
        ("people.person.gender", ["gender"]),
        ("http://dbpedia.org/ontology/birthPlace", ["birth", "place"]),
        ("/people/person/place_of_birth", ["place", "of", "birth"]),
        ("isPartOf", ["is", "part", "of"]),
        ("hasIMDBRating", ["has", "IMDB", "rating"]),
        ("member-of", ["member", "of"]),
        ("people.person.spouse_s", ["spouse"]),  # Freebase's "(s)"
        ("location.location.containedby", ["contained", "by"]),  # a preposition Freebase glues on
        ("location.location.contains", ["contains"]),
        ("s", ["s"]),  # a name that is only an "s" keeps it
        ("DIRECTED_BY", ["directed", "by"]),  # a property graph's relation type: capitals, no acronyms
        ("IMDB_RATING", ["imdb", "rating"]),
        ("bedin", ["bedin"]),  # too short a stem for a participle
        ("P57", ["director"]),  # a Wikidata property id reads as its label
        ("wdt:P27", ["country", "of", "citizenship"]),
        ("http://www.wikidata.org/prop/direct/P19", ["place", "of", "birth"]),
        ("P413", ["position", "played", "on", "team", "speciality"]),  # the label's "/" is no word
        ("P99999999", ["p99999999"]),  # an id Wikidata's list does not have stays as it is
        ("P057", ["p057"]),
    ],
)
def test_relation_words_of_snake_camel_dotted_and_uri_names(relation, words):
    assert relation_words(relation) == words


@pytest.mark.parametrize(
    "relation,kind",
    [
        ("film.film.starring", ["film"]),  # a Freebase name's type: what its subjects are
        ("/people/person/place_of_birth", ["person"]),
        ("location.location.containedby", ["location"]),
        ("tv.tv_program.genre", ["tv", "program"]),
        ("http://dbpedia.org/ontology/birthPlace", []),  # a URI's parts are a namespace
        ("directed_by", []),
        ("P57", []),
        ("film.starring", []),  # two parts: no type between a domain and a property
    ],
)
def test_a_freebase_name_says_what_kind_its_subjects_are(relation, kind):
    assert subject_kind(relation) == kind


@pytest.mark.parametrize(
    "relation,forward,inverse",
    [
        ("plays_for_country", "plays for country", "is the country {} plays for"),
        ("plays_for_country_inverse", "is the country {} plays for", "plays for country"),
        ("inverse_plays_for_country", "is the country {} plays for", "plays for country"),
        ("people.person.gender", "has gender", "is the gender of"),
        ("location.location.containedby", "was contained by", "contained"),
        ("people.person.spouse_s", "has spouse", "is the spouse of"),
        ("P161", "has cast member", "is the cast member of"),  # Wikidata's "cast member", not "has p161"
        ("aged", "aged", "was aged by"),
        ("has_aged", "aged", "was aged by"),
        ("birthPlace", "has birth place", "is the birth place of"),
        ("isPartOf", "is part of", "has part"),
        ("capital_of", "is the capital of", "has capital"),
        ("located_in", "is located in", "has {} located in it"),
        ("lives_in", "lives in", "is what {} lives in"),
        ("wears_number", "wears number", "is the number {} wears"),  # a verb and its object
        ("DIRECTED_BY", "was directed by", "directed"),
        ("HAS_GENRE", "has genre", "is the genre of"),
        ("WROTE", "wrote", "was written by"),  # an irregular past alone
        ("ACTED_IN", "acted in", "is what {} acted in"),  # a verb with no object is active, not "is acted in"
        ("awards_won", "has awards won", "is the awards won of"),  # a plural noun first: no verb
        ("written_by", "was written by", "wrote"),
        ("film.film.directed_by", "was directed by", "directed"),
        ("directedByInverse", "directed", "was directed by"),
    ],
)
def test_fallback_phrases_of_real_relation_names(relation, forward, inverse):
    assert fallback_phrases(relation) == (forward, inverse)


def test_sentences_read_as_english_without_a_phrase_map():
    v = TemplateVerbalizer()
    labels = [["Turkey", "Dirk_KUYT"], ["Dirk_KUYT", "male"], ["Bob", "23"], ["Turkey", "Dirk_KUYT", "Feyenoord"]]
    rels = [["plays_for_country_inverse"], ["people.person.gender"], ["aged"], ["plays_for_country", "plays_for"]]
    inverse = [[False], [False], [False], [True, False]]
    expected = [
        "Turkey is the country Dirk_KUYT plays for.",
        "Dirk_KUYT has gender male.",
        "Bob aged 23.",
        "Turkey is the country Dirk_KUYT plays for, which plays for Feyenoord.",
    ]
    assert [v.sentence(n, r, i) for n, r, i in zip(labels, rels, inverse)] == expected
    # the column-wise path gives the same sentences
    walks = pa.table({"node_labels": labels, "rel_labels": rels, "inverse": inverse})
    assert v.sentences(walks).to_pylist() == expected


def test_a_mapped_phrase_may_place_the_entity_too():
    v = TemplateVerbalizer({"plays_for": ["plays for", "has {} among its players"]})
    assert v.sentence(["Feyenoord", "Dirk"], ["plays_for"], [True]) == "Feyenoord has Dirk among its players."
