"""The people development set's KG (kgwalk/eval/people.py): families whose kin relations agree
with each other, every person described, real places, the same graph for the same seed."""

from collections import defaultdict

from kgwalk.eval.people import FREEBASE, people_kg, people_sets
from kgwalk.eval.real_places import cities_by_country


def test_a_family_kg_s_kin_relations_agree_and_every_person_is_described():
    triples = people_kg(3, couples=60)
    assert triples == people_kg(3, couples=60)
    edges = defaultdict(set)
    for h, r, t in triples:
        edges[r].add((h, t))
    assert edges["spouse"] and all((t, h) in edges["spouse"] for h, t in edges["spouse"])  # spouse goes both ways
    assert edges["children"] == {(t, h) for h, t in edges["parents"]}  # children are the parents' inverse
    people = {h for h, _ in edges["gender"]}
    for relation in ("nationality", "profession", "place_of_birth"):
        assert {h for h, _ in edges[relation]} == people  # each person has one of each
        assert len(edges[relation]) == len(people)
    assert all(len([p for c, p in edges["parents"] if c == child]) == 2 for child in {c for c, _ in edges["parents"]})
    assert {h for h, _ in edges["spouse"]} <= people and not people & {t for _, t in edges["location"]}
    country_of = {city: country for country, cities in cities_by_country().items() for city in cities}
    assert edges["location"] == {(city, country_of[city]) for _, city in edges["place_of_birth"]}  # real cities in their real countries


def test_its_questions_nest_from_person_to_person():
    people, _ = people_sets(0, per_path=5, per_conjunction=5, hub_degree=50)
    groups = {q.group for q in people.questions}
    assert groups == {"1-hop", "2-hop", "3-hop", "conj"}
    nested = [q for q in people.questions if q.line().startswith("the nationality of the spouse of the parent of [")]
    assert nested and all(q.group == "3-hop" for q in nested)


def test_its_freebase_twin_renames_every_relation_and_asks_the_same(tmp_path):
    people, freebase = people_sets(0, per_path=5, per_conjunction=5, hub_degree=50)
    assert freebase.name == "people-freebase" and freebase.questions == people.questions
    freebase.write(tmp_path)
    kb = (tmp_path / "people-freebase" / "kb.txt").read_text().splitlines()
    assert len(kb) == len(people.triples)
    assert {line.split("|")[1] for line in kb} == set(FREEBASE.values())  # none left with its bare name
    assert (tmp_path / "people-freebase" / "dev.txt").read_text().splitlines() == people.files()["dev.txt"]
