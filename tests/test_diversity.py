"""Diversity of a node's k walks (query.diversity): the selection rules on hand-made walks, and the
retriever choosing each named node's walks by the rule among its candidates, on a small KG."""

import pytest

import corpus
from kgwalk.query import Retriever
from kgwalk.query.diversity import select_walks
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
    shown = {}
    for rule in ("none", "ends", "facts"):
        # (a hashing embedder: no prior, so the rule alone decides beyond cosine order)
        retriever = Retriever(corpus.config(folder, kg, [f"query.diversity={rule}", "query.mode=walks"]))
        [ann] = [n for n in retriever.retrieve(question, k_nodes=1).nodes]
        [every] = [n for n in retriever.retrieve(question, k_nodes=1, k_walks=50).nodes]
        retriever.close()
        assert ann.label == "Ann Actor" and ann.matched and len(every.walks) > 3
        assert [w.walk_id for w in ann.walks] == [w.walk_id for w in select_walks(every.walks, 3, rule)]
        shown[rule] = ann.walks
    assert len({walks[0].walk_id for walks in shown.values()}) == 1  # the best walk stays first
    for rule in ("ends", "facts"):
        assert len(shown[rule]) == 3
        for i, w in enumerate(shown[rule]):  # no walk ends on a better one
            assert not any(w.end_node in better.nodes for better in shown[rule][:i])
    none_ids = [w.walk_id for w in shown["none"]]
    assert any([w.walk_id for w in shown[rule]] != none_ids for rule in ("ends", "facts"))


@pytest.mark.parametrize("diversity", ["none", "ends", "facts"])
def test_walks_with_equal_scores_come_out_in_one_order_whatever_order_they_came_in(diversity):
    # a short sentence's vector often ties with another's, and the store returns ties in the order
    # the build wrote them: the shown order (and the answer prompt) must not depend on that
    tied = [walk(0.5, ANN, F1), walk(0.5, ANN, F2), walk(0.5, ANN, F3), walk(0.5, ANN, DIRECTOR), walk(0.5, ANN, FRENCH)]
    orders = {tuple(w.walk_id for w in select_walks(list(arrangement), 3, diversity))
              for arrangement in (tied, tied[::-1], tied[2:] + tied[:2])}
    assert len(orders) == 1
    assert list(next(iter(orders))) == sorted(next(iter(orders)))
