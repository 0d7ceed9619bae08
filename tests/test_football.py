"""The football development set's KG (kgwalk/eval/football.py): full squads whose facts agree, clubs in their
leagues' countries, the same graph for the same seed, and two-topic questions that name two hubs."""

from collections import Counter, defaultdict

from kgwalk.eval.football import LEAGUES, SQUAD, TEAMS, VERBS, football_kg, football_sets


def test_every_team_fields_a_full_squad_and_every_player_has_five_facts():
    triples = football_kg(1)
    assert triples == football_kg(1)
    edges = defaultdict(set)
    for h, r, t in triples:
        edges[r].add((h, t))
    players = {h for h, _ in edges["national_team"]}
    for relation in ("club", "position", "shirt_number", "age"):
        assert {h for h, _ in edges[relation]} == players and len(edges[relation]) == len(players)  # one of each
    squads = defaultdict(list)
    for player, team in edges["national_team"]:
        squads[team].append(player)
    assert set(squads) == set(TEAMS) and all(len(s) == sum(n for _, n in SQUAD) for s in squads.values())
    number, position = dict(edges["shirt_number"]), dict(edges["position"])
    for squad in squads.values():
        assert sorted(int(number[p]) for p in squad) == list(range(1, 24))  # 1 to 23, once each
        assert Counter(position[p] for p in squad) == dict(SQUAD)
        assert {number[p] for p in squad if position[p] == "goalkeeper"} == {"1", "12", "23"}
    assert {t for _, t in edges["coach"]} == {h for h, _ in edges["nationality"]} and len(edges["coach"]) == len(TEAMS)
    club_country = dict(edges["country"])
    assert {c for _, c in edges["club"]} <= club_country.keys() and set(club_country.values()) == set(LEAGUES)
    assert all(19 <= int(age) <= 39 for _, age in edges["age"])


def test_its_two_topic_questions_name_a_hub_beside_a_team_or_club():
    football, _ = football_sets(0, per_path=5, per_conjunction=10, hub_degree=50)
    assert {q.group for q in football.questions} == {"1-hop", "2-hop", "3-hop", "conj"}
    conj = [q for q in football.questions if q.group == "conj"]
    assert {q.source for q in conj} == {"club and national team", "national team and position", "national team and shirt number", "club and age"}
    numbered = [q for q in conj if q.source == "national team and shirt number"]
    assert numbered and all(len(q.answers) == 1 and q.topics[1].isdigit() for q in numbered)  # one player wears a number in a squad


def test_its_verb_named_twin_renames_every_relation_and_asks_the_same():
    football, verbs = football_sets(0, per_path=5, per_conjunction=10, hub_degree=50)
    assert verbs.name == "football-verbs" and verbs.questions == football.questions
    assert {verbs.relation(r) for _, r, _ in football.triples} == set(VERBS.values())  # none left with its noun name
