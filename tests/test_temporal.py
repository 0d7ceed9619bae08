"""Temporal filters (query.temporal): time expressions parsed into year ranges, time relations
learned from a hand-made KG, and the retriever keeping only walks in the question's range."""

import pyarrow as pa
import pytest

import corpus
from kgwalk.query import Retriever
from kgwalk.query.lexicon import EntityLexicon
from kgwalk.query.temporal import OPEN, TemporalIndex, constraint, label_year, time_expressions

# Ann starred in six films, two of them in the 1990s; "1984" is a film too, and a year.
FILMS = {"Red Dawn Rising": 1985, "Blue Harbor": 1992, "Green Mile High": 1995, "Long Night": 2003,
         "Short Day": 2010, "1984": 1956}
KG = [*(("Ann Actor", "acted_in", film) for film in FILMS),
      *((film, "came_out", str(year)) for film, year in FILMS.items()),
      ("Ann Actor", "born_on", "12 May 1950"), ("Ann Actor", "has_tag", "comedian"),
      ("Blue Harbor", "has_tag", "1990s"), ("Long Night", "has_tag", "2003"), ("Short Day", "has_tag", "remake"),
      ("Bob Other", "acted_in", "1984"), ("Stars", "came_out", "1977")]


@pytest.mark.parametrize("text, expected", [
    ("what films did Ann act in in 1994", [("in 1994", 1994, 1994)]),
    ("films released before 2000", [("before 2000", -OPEN, 1999)]),
    ("films after 1990?", [("after 1990", 1991, OPEN)]),
    ("films since 1990", [("since 1990", 1990, OPEN)]),
    ("films until 1990", [("until 1990", -OPEN, 1990)]),
    ("movies of the 90s", [("the 90s", 1990, 1999)]),
    ("movies from the 1980s", [("from the 1980s", 1980, 1989)]),
    ("movies in the late '70s", [("in the late '70s", 1977, 1979)]),
    ("1960s westerns", [("1960s", 1960, 1969)]),
    ("novels of the 19th century", [("the 19th century", 1800, 1899)]),
    ("films made between 1990 and 1995", [("between 1990 and 1995", 1990, 1995)]),
    ("films from 1980 to 1985", [("from 1980 to 1985", 1980, 1985)]),
    ("films after 1990 and before 2000", [("after 1990", 1991, OPEN), ("before 2000", -OPEN, 1999)]),
    ("actors in their 40s", []),           # an age, not a decade
    ("who directed Death Race 2000", []),  # a bare year is a time only after a cue word
    ("who starred in [Gold Diggers of 1935] in 1940", [("in 1940", 1940, 1940)]),  # brackets are names
])
def test_time_expressions(text, expected):
    assert [(e.text(text), e.first, e.last) for e in time_expressions(text)] == expected


def test_label_year_reads_years_and_dates_only():
    for label, year in [("1994", 1994), ("1994-05-12", 1994), ("2010-01-01T00:00:00Z", 2010), ("12 May 1950", 1950),
                        ("May 12, 1950", 1950), ("May 1950", 1950), ("12/05/1950", 1950)]:
        assert label_year(label) == year, label
    for label in ("1990s", "Kismet", "7.5", "123", "Death Race 2000", ""):
        assert label_year(label) is None, label


def kg_tables(triples):
    entities = sorted({x for h, _, t in triples for x in (h, t)})
    relations = sorted({r for _, r, _ in triples})
    eid, rid = {e: i for i, e in enumerate(entities)}, {r: i for i, r in enumerate(relations)}
    return (pa.table({"id": list(eid.values()), "label": entities}), pa.table({"id": list(rid.values()), "label": relations}),
            pa.table({"src": [eid[h] for h, _, _ in triples], "rel": [rid[r] for _, r, _ in triples], "dst": [eid[t] for _, _, t in triples]}),
            eid)


def test_time_relations_are_learned_from_their_tails():
    entities, relations, edges, eid = kg_tables(KG)
    index = TemporalIndex(entities, relations, edges)
    # years and dates as tails, whatever the relation is called; has_tag is mostly not times
    assert index.time_relation_labels == ["born_on", "came_out"]
    assert list(index.years(eid["Blue Harbor"])) == [1992]         # the tag "1990s" is no year
    assert list(index.years(eid["Long Night"])) == [2003]          # its tag "2003" is not a time relation
    assert list(index.years(eid["1984"])) == [1956]                # the film "1984" came out in 1956
    assert list(index.years(eid["1992"])) == [1992]                # a time value has its own year
    assert list(index.years(eid["Ann Actor"])) == [1950]
    assert len(index.years(eid["comedian"])) == 0
    root = eid["Ann Actor"]
    assert index.judge([root, eid["Blue Harbor"]], 1990, 1999) == 1
    assert index.judge([root, eid["Short Day"]], 1990, 1999) == -1
    assert index.judge([root, eid["comedian"]], 1990, 1999) == 0
    assert index.judge([root], 1950, 1950) == 0                    # the root's own times do not count
    assert index.is_name(eid["1984"]) and index.is_name(eid["Ann Actor"])  # "1984" is a film too
    assert not index.is_name(eid["1992"])                              # only a time value


def test_a_year_that_names_the_topic_is_not_a_time():
    entities, relations, edges, _ = kg_tables(KG)
    lexicon = EntityLexicon(entities)
    index = TemporalIndex(entities, relations, edges)
    assert constraint("who acted in 1984", lexicon.mentions) is None             # the film, named alone
    assert constraint("who stars in [1984]", lexicon.mentions) is None
    when = constraint("what films did Ann Actor act in in the 90s?", lexicon.mentions)
    assert (when.first, when.last, when.question) == (1990, 1999, "what films did Ann Actor act in?")
    when = constraint("Ann Actor films after 1990 and before 2000", lexicon.mentions)
    assert (when.first, when.last, when.question) == (1991, 1999, "Ann Actor films and")
    when = constraint("which film did Ann Actor make in 1984", lexicon.mentions)  # another entity is named
    assert (when.first, when.last) == (1984, 1984)
    # "stars" may be the film "Stars" in a lowercase question: a single word does not outweigh a
    # year that is a film; a two-word name does
    assert constraint("who stars in 1984", lexicon.mentions) is not None
    assert constraint("who stars in 1984", lexicon.mentions, index.is_name) is None
    assert constraint("who stars before 1984", lexicon.mentions, index.is_name).last == 1983  # no film is "before 1984"
    assert constraint("what did ann actor make in 1984", lexicon.mentions, index.is_name).question == "what did ann actor make"
    assert constraint("what did stars make in 1992", lexicon.mentions, index.is_name).question == "what did stars make"  # 1992: only a year


@pytest.fixture(scope="module")
def temporal_corpus(tmp_path_factory):
    return corpus.built_kg(tmp_path_factory.mktemp("temporal"), KG)


def retriever(temporal_corpus, on: bool) -> Retriever:
    folder, kg = temporal_corpus
    return Retriever(corpus.config(folder, kg, [f"query.temporal={str(on).lower()}", "query.k_walks=20"]))


def test_walks_outside_the_range_are_dropped(temporal_corpus):
    question = "what films did Ann Actor act in in the 90s"
    off, on = retriever(temporal_corpus, False), retriever(temporal_corpus, True)
    [ann_off] = [n for n in off.retrieve(question, k_nodes=1).nodes]
    [ann_on] = [n for n in on.retrieve(question, k_nodes=1).nodes]
    assert ann_off.label == ann_on.label == "Ann Actor"
    ends_off = {w.node_labels[-1] for w in ann_off.walks}
    ends_on = [w.node_labels[-1] for w in ann_on.walks]
    assert {"Red Dawn Rising", "Short Day", "1984"} <= ends_off        # without the filter: every film
    assert {"Blue Harbor", "Green Mile High"} <= set(ends_on)
    assert not {"Red Dawn Rising", "Long Night", "Short Day", "1984", "1985", "2010"} & set(ends_on)
    # a walk with no time (Ann's tag) stays, after every walk in range
    timed = [w.score for w in ann_on.walks if w.node_labels[-1] != "comedian"]
    [untimed] = [w.score for w in ann_on.walks if w.node_labels[-1] == "comedian"]
    assert untimed < min(timed)
    # the film named "1984" is still found as the question's topic
    topic = on.retrieve("who acted in 1984", k_nodes=1).nodes[0]
    assert topic.label == "1984" and topic.matched
    assert "Bob Other" in {w.node_labels[-1] for w in topic.walks}
    off.close()
    on.close()


def test_a_warmed_up_retriever_has_its_time_index(temporal_corpus, monkeypatch):
    """A server's first question with a year must not pay for building the time index (70 ms on
    MetaQA): warm_up builds it when query.temporal is on, and not when it is off."""
    import kgwalk.query.temporal as temporal

    built = []
    real = temporal.TemporalIndex
    monkeypatch.setattr(temporal, "TemporalIndex", lambda *a: built.append(1) or real(*a))
    on, off = retriever(temporal_corpus, True), retriever(temporal_corpus, False)
    on.warm_up()
    off.warm_up()
    assert built == [1]
    on.retrieve("what films did Ann Actor act in in the 90s")
    assert built == [1]  # the question used the index warm_up built
    on.close()
    off.close()
