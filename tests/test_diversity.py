"""How many walks each top node shows (query.unnamed_walks) and which (query.diversity): the rules on
hand-made walks, and the retriever applying them among a node's candidates, on a small KG."""

import pytest

import corpus
from kgwalk.query import Retriever
from kgwalk.query.diversity import select_walks, walks_per_node
from kgwalk.query.hits import WalkHit

ANN, F1, F2, F3, DIRECTOR, DIRECTOR2, FRENCH, TOWN = 1, 11, 12, 13, 21, 22, 31, 41
NAMES = {ANN: "Ann", F1: "Farewell", F2: "Kismet", F3: "Juarez", DIRECTOR: "Christian Carion", DIRECTOR2: "William Dieterle",
         FRENCH: "French", TOWN: "Cambrai"}
RELATION = {F1: "acted_in>", F2: "acted_in>", F3: "acted_in>", DIRECTOR: "directed_by>", DIRECTOR2: "directed_by>",
            FRENCH: "in_language>", TOWN: "born_in>"}


def walk(score: float, *nodes: int) -> WalkHit:
    return WalkHit(walk_id=hash(nodes), score=score, kind="bfs", text=", ".join(NAMES[n] for n in nodes), nodes=list(nodes),
                   node_labels=[NAMES[n] for n in nodes], triples=[], signature="|".join(RELATION[n] for n in nodes[1:]), cosine=score)


# best first: one fact with suffixes, another way to the director, then other films
CANDIDATES = [walk(0.90, ANN, F1, DIRECTOR), walk(0.85, ANN, F1), walk(0.80, ANN, F2, DIRECTOR), walk(0.70, ANN, F2),
              walk(0.65, ANN, F2, FRENCH), walk(0.60, ANN, F3)]


def ends(walks: list[WalkHit]) -> list[str]:
    return [w.text for w in walks]


def test_rules_pass_over_walks_that_repeat_the_chosen_ones():
    shuffled = CANDIDATES[::-1]  # the rules rank by score themselves
    assert ends(select_walks(shuffled, 3, "none")) == ["Ann, Farewell, Christian Carion", "Ann, Farewell", "Ann, Kismet, Christian Carion"]
    # ends: "Ann, Farewell" is a prefix of the best walk, and Carion is already its end
    assert ends(select_walks(shuffled, 3, "ends")) == ["Ann, Farewell, Christian Carion", "Ann, Kismet", "Ann, Kismet, French"]
    # facts: nor "Kismet, which is in French" once "Ann, Kismet" is chosen
    assert ends(select_walks(shuffled, 3, "facts")) == ["Ann, Farewell, Christian Carion", "Ann, Kismet", "Ann, Juarez"]


def test_the_paths_rule_passes_over_a_walk_whose_relation_path_a_chosen_one_has_from_its_root():
    born = walk(0.55, ANN, TOWN)
    assert ends(select_walks([*CANDIDATES, born], 4, "ends"))[-1] == "Ann, Juarez"
    # "Ann, Juarez" is Ann's acted_in> as "Ann, Kismet" is: the place goes to another relation
    assert ends(select_walks([*CANDIDATES, born], 4, "paths")) == ["Ann, Farewell, Christian Carion", "Ann, Kismet", "Ann, Kismet, French", "Ann, Cambrai"]
    # from another root (an aligned alias's walks) the same path is another fact
    other_root = walk(0.60, DIRECTOR, TOWN)
    other_root.signature = "acted_in>"
    films = [walk(0.70, ANN, F2), walk(0.65, ANN, F3)]
    assert ends(select_walks([*films, other_root], 2, "paths")) == ["Ann, Kismet", "Christian Carion, Cambrai"]


def test_the_best_walks_next_step_takes_the_last_place_where_asked():
    """query.extend_best: "in which country was the director of Farewell born" is one step past the best walk's end (the
    director); its extension along an edge (born_in, an attribute of the director) takes the last of 4 or more places,
    before one taken backwards (a film the director made) and however low it scores."""
    film_of_director, birthplace = walk(0.50, ANN, F1, DIRECTOR, F2), walk(0.40, ANN, F1, DIRECTOR, TOWN)
    film_of_director.signature, birthplace.signature = "acted_in>|directed_by>|<directed_by", "acted_in>|directed_by>|born_in>"
    candidates = [*CANDIDATES, film_of_director, birthplace]
    for diversity in ("none", "ends", "paths"):
        plain = select_walks(candidates, 4, diversity)
        extended = select_walks(candidates, 4, diversity, extend_best=True)
        assert extended[:3] == plain[:3] and extended[-1] is birthplace  # the last place, and only it, changes
    assert select_walks([*CANDIDATES, film_of_director], 4, "ends", extend_best=True)[-1] is film_of_director  # backwards: none better
    assert select_walks(candidates, 3, "ends", extend_best=True) == select_walks(candidates, 3, "ends")  # 3 places keep their runners-up
    assert select_walks(candidates, 4, "facts", extend_best=True) == select_walks(candidates, 4, "facts")  # facts: no extensions
    assert select_walks(CANDIDATES, 4, "ends", extend_best=True) == select_walks(CANDIDATES, 4, "ends")  # nothing goes past it
    # the retriever shows a node's best few candidates and looks for the next step among all of them: it ranks low
    assert select_walks(CANDIDATES, 4, "ends", extend_best=True, extensions=candidates)[-1] is birthplace
    assert select_walks(candidates, 4, "ends", extend_best=True, extensions=CANDIDATES) == select_walks(candidates, 4, "ends")


def test_passed_over_walks_fill_the_rest_best_first():
    # four walks pass the ends rule: the fifth place goes to the best passed-over one
    chosen = select_walks(CANDIDATES, 5, "ends")
    assert ends(chosen) == ["Ann, Farewell, Christian Carion", "Ann, Farewell", "Ann, Kismet", "Ann, Kismet, French", "Ann, Juarez"]
    assert [w.score for w in chosen] == sorted((w.score for w in chosen), reverse=True)
    assert select_walks(CANDIDATES[:1], 3, "ends") == CANDIDATES[:1] and select_walks([], 3, "facts") == []


# Ann acted in one film with many facts and in two others with none: her walks through Farewell
# outnumber the rest, so her k best share it
KG = [("Ann Actor", "acted_in", "Farewell"), ("Ann Actor", "acted_in", "Kismet"), ("Ann Actor", "acted_in", "Juarez"),
      ("Farewell", "directed_by", "Christian Carion"), ("Farewell", "in_language", "French"), ("Farewell", "has_genre", "Drama"),
      ("Farewell", "written_by", "Eric Raynaud"), ("Christian Carion", "born_in", "Cambrai"), ("Bob Other", "acted_in", "Kismet")]


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    return corpus.built_kg(tmp_path_factory.mktemp("diversity"), KG)


@pytest.mark.parametrize("question", ["in which language is the Ann Actor film Farewell",
                                      "where was the director of the Ann Actor film Farewell born"])
def test_the_retriever_chooses_a_named_nodes_walks_by_the_rule(small_corpus, question):
    folder, kg = small_corpus
    shown, by_k = {}, {}
    for rule in ("none", "ends", "facts", "paths"):
        # (a hashing embedder: no prior, so the rule alone decides beyond cosine order)
        retriever = Retriever(corpus.config(folder, kg, [f"query.diversity={rule}", "query.mode=walks", "serve.max_k=50"]))
        [ann] = [n for n in retriever.retrieve(question, k_nodes=1).nodes]
        [every] = [n for n in retriever.retrieve(question, k_nodes=1, k_walks=50).nodes]
        # what the rule shows at k = 2..6: which of Ann's walks repeat one another among her best k depends on the
        # embedder's cosines and the phrases, but among her six best some walk extends or ends on another
        by_k[rule] = [[w.walk_id for w in retriever.retrieve(question, k_nodes=1, k_walks=k).nodes[0].walks] for k in range(2, 7)]
        retriever.close()
        assert ann.label == "Ann Actor" and ann.matched and len(every.walks) > 3
        assert [w.walk_id for w in ann.walks] == [w.walk_id for w in select_walks(every.walks, 3, rule, extend_best=True)]  # the default
        shown[rule] = ann.walks
    assert len({walks[0].walk_id for walks in shown.values()}) == 1  # the best walk stays first
    for rule in ("ends", "facts"):
        assert len(shown[rule]) == 3
        for i, w in enumerate(shown[rule]):  # no walk ends on a better one
            assert not any(w.end_node in better.nodes for better in shown[rule][:i])
    assert any(by_k[rule] != by_k["none"] for rule in ("ends", "facts"))  # the rules change what is shown


@pytest.mark.parametrize("diversity", ["none", "ends", "facts", "paths"])
def test_walks_with_equal_scores_come_out_in_one_order_whatever_order_they_came_in(diversity):
    # a short sentence's vector often ties with another's, and the store returns ties in the order
    # the build wrote them: the shown order (and the answer prompt) must not depend on that
    tied = [walk(0.5, ANN, F1), walk(0.5, ANN, F2), walk(0.5, ANN, F3), walk(0.5, ANN, DIRECTOR), walk(0.5, ANN, FRENCH)]
    orders = {tuple(w.walk_id for w in select_walks(list(arrangement), 3, diversity))
              for arrangement in (tied, tied[::-1], tied[2:] + tied[:2])}
    assert len(orders) == 1
    assert list(next(iter(orders))) == sorted(next(iter(orders)))


def test_the_nodes_the_question_names_take_the_places_the_others_leave():
    # one named node among three: the others keep one walk each, the named one the six they free
    assert walks_per_node([True, False, False], [50, 3, 3], 3, 1) == [7, 1, 1]
    assert walks_per_node([False, True, False], [3, 50, 3], 3, 0) == [0, 9, 0]
    # two named: the freed places alternate between them in rank order
    assert walks_per_node([True, False, True], [50, 3, 50], 3, 1) == [4, 1, 4]
    assert walks_per_node([True, False, True], [50, 3, 50], 3, 0) == [5, 0, 4]
    # a named node with few walks: its places go to the next named one, then back to the others
    assert walks_per_node([True, True, False], [2, 50, 3], 3, 1) == [2, 6, 1]
    assert walks_per_node([True, False, False], [2, 3, 2], 3, 1) == [2, 3, 2]
    # the paper's places: the setting off, no node named (nothing to go by), every node named, or more than k_walks asked
    for named in ([True, False, False], [False, False, False], [True, True, True]):
        assert walks_per_node(named, [50, 3, 3], 3, None if any(named) and not all(named) else 1) == [3, 3, 3]
    assert walks_per_node([True, False, False], [50, 3, 3], 3, 5) == [3, 3, 3]


def test_the_retriever_gives_the_node_the_question_names_the_places_the_others_leave(small_corpus):
    folder, kg = small_corpus
    question = "which films did Ann Actor act in"
    places, told = {}, {}
    for setting in ("1", "null"):
        retriever = Retriever(corpus.config(folder, kg, [f"query.unnamed_walks={setting}", "query.ego_chars=2000"]))
        shown = retriever.retrieve(question, k_nodes=3, k_walks=2, mode="walks").nodes
        lines = retriever.retrieve(question, k_nodes=3, k_walks=2, mode="ego").nodes
        retriever.close()
        assert shown[0].label == "Ann Actor" and shown[0].matched and not any(n.matched for n in shown[1:])
        assert [n.id for n in shown] == [n.id for n in lines]
        places[setting] = [len(n.walks) for n in shown]
        # ego mode: the entities each unnamed node's lines name, and those on the walks walk mode shows of it
        told[setting] = [({e for line in told_node.walks for e in line.nodes}, {e for w in shown_node.walks for e in w.nodes})
                         for told_node, shown_node in zip(lines[1:], shown[1:])]
    assert places == {"null": [2, 2, 2], "1": [4, 1, 1]}
    assert all(named <= on_walks for named, on_walks in told["1"])
    assert any(not named <= on_walks for named, on_walks in told["null"])  # its ego-graph reached further
