"""Questions that name several entities and ask for what lies at all of them ("which films did A
direct that B starred in"): the reach of each named entity, their joint reach, and the retriever
ranking a walk that ends there first and naming such entities first in answer-set lists."""

import pytest

import corpus
from kgwalk.query import Retriever
from kgwalk.query.answer_sets import AnswerSets
from kgwalk.query.hits import WalkHit
from kgwalk.query.steps import joint_reach, reward_joint_ends
from kgwalk.storage import read_table

# Dana Director made six films; Abe Actor starred in one of them (Film Five) and in four others
FILMS = [f"Film {n}" for n in ("One", "Two", "Three", "Four", "Five", "Six")]
OTHERS = [f"Other Film {n}" for n in ("Red", "Blue", "Green", "Gold")]
KG = ([(f, "directed_by", "Dana Director") for f in FILMS] + [("Film Five", "starred_actors", "Abe Actor")]
      + [(f, "starred_actors", "Abe Actor") for f in OTHERS] + [(f, "has_genre", "Drama") for f in (*FILMS, *OTHERS)]
      + [("Film One", "starred_actors", "Cy Lead"), ("Other Film Red", "directed_by", "Eve Maker")])
QUESTION = "which films did Dana Director direct that Abe Actor starred in"


@pytest.fixture(scope="module")
def joint_corpus(tmp_path_factory):
    folder, kg = corpus.built_kg(tmp_path_factory.mktemp("joint"), KG)
    return corpus.config(folder, kg)


def ids_of(cfg) -> dict[str, int]:
    entities = read_table(cfg.table("entities"), ["id", "label"])
    return dict(zip(entities.column("label").to_pylist(), entities.column("id").to_pylist()))


def test_reach_counts_the_fewest_steps_and_joint_reach_keeps_what_every_entity_reaches(joint_corpus):
    cfg, ids = joint_corpus, ids_of(joint_corpus)
    sets = AnswerSets.from_tables(read_table(cfg.table("edges")), read_table(cfg.table("entities")), read_table(cfg.table("relations")), "both")
    director, actor = sets.reach(ids["Dana Director"], 2), sets.reach(ids["Abe Actor"], 2)
    assert director[ids["Film Five"]] == 1 and director[ids["Drama"]] == 2 and director[ids["Cy Lead"]] == 2
    assert ids["Eve Maker"] not in director and ids["Dana Director"] not in director  # 3 steps away; the root itself
    assert sets.reach(ids["Dana Director"], 1) == {ids[f]: 1 for f in FILMS}
    assert sets.reach(ids["Dana Director"], 2, max_visits=3).keys() < director.keys()  # a hub guard: a partial reach
    joint = joint_reach([director, actor])
    assert joint == {ids["Film Five"]: 1, ids["Drama"]: 2}  # Film One is 3 steps from Abe (through Drama)
    assert joint_reach([director]) == {}  # one named entity: nothing joint
    walk = WalkHit(1, 0.5, "bfs", "", [ids["Dana Director"], ids["Film Five"]], [], [], "<directed_by", 0.5)
    reward_joint_ends({0: [walk]}, joint, 4.0)
    assert walk.score == pytest.approx(4.5)


def test_the_walk_to_what_both_named_entities_reach_ranks_first(joint_corpus):
    ids = ids_of(joint_corpus)
    joint, apart = Retriever(joint_corpus), Retriever(corpus.config(joint_corpus.root.parent, None, ["query.joint_weight=0"]))
    together, alone = joint.retrieve(QUESTION), apart.retrieve(QUESTION)
    assert {n.label for n in together.nodes if n.matched} == {"Dana Director", "Abe Actor"}
    assert together.best.end_node == ids["Film Five"]
    # each named node's best walk ends at the film of both; without the joint term the director's is one of his others
    best_of = {n.label: n.walks[0].end_node for n in together.nodes if n.matched}
    assert set(best_of.values()) == {ids["Film Five"]}
    assert [n.walks[0].end_node for n in alone.nodes if n.label == "Dana Director"] != [ids["Film Five"]]
    # a list of the director's films names the one both reach first
    lists = [w.also_labels for w in together.walks if w.also_labels and "Film One" in (*w.also_labels, *w.node_labels)]
    assert all(labels[0] == "Film Five" for labels in lists if "Film Five" in labels)
    # one named entity, or a second one named by a lowercase word only (in a question typed all lowercase the lexicon
    # takes "drama" as the genre Drama, but a word is no evidence of a name): no joint term, the order without it
    for question in ("which films did Dana Director direct", "which films did dana director direct in drama"):
        assert [w.walk_id for w in joint.retrieve(question).walks] == [w.walk_id for w in apart.retrieve(question).walks]
    assert {n.label for n in joint.retrieve("which films did dana director direct in drama").nodes if n.matched} >= {"Dana Director", "Drama"}
    joint.close()
    apart.close()


# Four people born in Springfield, one of them a chemist; two chemists born elsewhere. The profession is an entity.
PEOPLE = ([(p, "place_of_birth", "Springfield") for p in ("Ann Lee", "Bo Park", "Cy Ray", "Di Vu")]
          + [(p, "place_of_birth", "Shelbyville") for p in ("Ed Fox", "Flo Hart")]
          + [("Ann Lee", "profession", "chemist"), ("Ed Fox", "profession", "chemist"), ("Flo Hart", "profession", "chemist")]
          + [(p, "profession", "poet") for p in ("Bo Park", "Cy Ray", "Di Vu")])


@pytest.fixture(scope="module")
def people_corpus(tmp_path_factory):
    folder, kg = corpus.built_kg(tmp_path_factory.mktemp("kinds"), PEOPLE)
    return corpus.config(folder, kg)


def test_an_answer_kind_that_is_an_entity_counts_as_one_more_named(people_corpus):
    ids = ids_of(people_corpus)
    joint, apart = Retriever(people_corpus), Retriever(corpus.config(people_corpus.root.parent, None, ["query.joint_weight=0"]))
    assert joint.lexicon.kind(["chemists"]) == joint.lexicon.kind(["chemist"]) == ids["chemist"]  # a plural, its singular
    assert joint.lexicon.kind(["people"]) is None and joint.lexicon.kind([]) is None
    for question in ("which chemist was born in Springfield", "which chemists were born in Springfield"):
        got = joint.retrieve(question)
        assert {n.label for n in got.nodes if n.matched} == {"Springfield"}  # "chemist", lowercase, is no mention of its own
        assert got.best.end_node == ids["Ann Lee"]  # the one born there of the kind asked for
    # the kind said after a copula at the end: "which people ... are chemists"
    for question in ("which people born in Springfield are chemists?", "who among the people born in Springfield is a chemist"):
        assert joint.retrieve(question).best.end_node == ids["Ann Lee"]
        assert apart.retrieve(question).best.end_node != ids["Ann Lee"]  # without the joint term, any of the four
    # no kind among the KG's entities: the order without the joint term
    question = "which people were born in Springfield"
    assert [w.walk_id for w in joint.retrieve(question).walks] == [w.walk_id for w in apart.retrieve(question).walks]
    joint.close()
    apart.close()


# Two squads: each player's national team, shirt number and position; numbers and positions are nodes of their own
SQUADS = [("Ana Silva", "Brazil", "9", "forward"), ("Bea Costa", "Brazil", "10", "goalkeeper"), ("Cid Lima", "Brazil", "4", "defender"),
          ("Kofi Mensah", "Ghana", "9", "goalkeeper"), ("Kwame Boateng", "Ghana", "10", "forward"), ("Yaw Osei", "Ghana", "4", "forward")]
FOOTBALL = [t for player, team, number, position in SQUADS
            for t in ((player, "national_team", team), (player, "shirt_number", number), (player, "position", position))]


@pytest.fixture(scope="module")
def football_corpus(tmp_path_factory):
    folder, kg = corpus.built_kg(tmp_path_factory.mktemp("squads"), FOOTBALL)
    return folder, kg


def test_a_numeral_is_named_and_the_walk_to_the_one_player_at_both_hubs_joins_the_candidates(football_corpus):
    folder, kg = football_corpus
    # walks scored from the graph (the default with a static model), fewer candidates than a team's or a number's walks
    few = ["query.walk_search=graph", "query.candidates=2"]
    joint, apart = Retriever(corpus.config(folder, kg, few)), Retriever(corpus.config(folder, None, [*few, "query.joint_weight=0"]))
    ids = ids_of(joint.cfg)
    got = joint.retrieve("who wears number 9 for Brazil?")
    assert {n.label for n in got.nodes if n.matched} == {"9", "Brazil"}  # one digit names a number, not a letter's weak mention
    assert got.best.end_node == ids["Ana Silva"]
    shown_apart = {w.end_node for n in apart.retrieve("who wears number 9 for Brazil?").nodes for w in n.walks}
    assert ids["Ana Silva"] not in shown_apart  # without the joint term, no walk to her among the candidates
    # the answer noun runs on into a verb ("goalkeeper plays"): its first word names the kind
    assert joint.lexicon.kind(["goalkeeper", "plays"]) == ids["goalkeeper"]
    assert joint.retrieve("which goalkeeper plays for Ghana?").best.end_node == ids["Kofi Mensah"]
    joint.close()
    apart.close()
