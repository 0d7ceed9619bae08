"""Ego-graph retrieval (query.mode=ego): a top node's candidate walks pruned, best edge first, to a
character budget and told as grouped lines, root first (kgwalk/query/ego.py)."""

import pytest

import corpus
from kgwalk.query import Answerer, Retriever
from kgwalk.query.answer import context_text
from kgwalk.query.ego import context_chars, ego_contexts, walk_steps
from kgwalk.query.hits import NodeHit, WalkHit
from kgwalk.walks.labels import signature, walk_triples

PHRASES = {("directed", False): ("directed ", ""), ("directed", True): ("was directed by ", ""),
           ("starred", False): ("starred ", ""), ("starred", True): ("starred in ", ""),
           ("genre", False): ("is a ", " film"), ("genre", True): ("is the genre of ", "")}
LABELS = {1: "Dieterle", 2: "Kismet", 3: "Juarez", 4: "Tennessee Johnson", 5: "Colman", 6: "Drama", 7: "Random Harvest"}


def walk(walk_id: int, score: float, path: list[tuple[int, str, bool, int]]) -> WalkHit:
    """A walk from (node, relation, inverse, next node) steps."""
    nodes = [path[0][0], *(s[3] for s in path)]
    labels = [LABELS[n] for n in nodes]
    rels, inverse = [s[1] for s in path], [s[2] for s in path]
    return WalkHit(walk_id, score, "bfs", "", nodes, labels, walk_triples(labels, rels, inverse), signature(rels, inverse), score)


def phrase(relation: str, inverse: bool) -> tuple[str, str]:
    return PHRASES[(relation, inverse)]


# Dieterle directed three films; Kismet starred Colman, who starred in Random Harvest; Kismet is a drama.
CANDIDATES = [
    walk(10, 0.9, [(1, "directed", False, 2)]),
    walk(11, 0.8, [(1, "directed", False, 3)]),
    walk(12, 0.7, [(1, "directed", False, 4)]),
    walk(13, 0.6, [(1, "directed", False, 2), (2, "starred", False, 5)]),
    walk(14, 0.5, [(1, "directed", False, 2), (2, "starred", False, 5), (5, "starred", True, 7)]),
    walk(15, 0.1, [(1, "directed", False, 2), (2, "genre", False, 6)]),
]


def ego(budget: int, candidates=CANDIDATES) -> list[WalkHit]:
    node = NodeHit(1, "Dieterle", 1.0)
    ego_contexts([node], {1: candidates}, budget, phrase)
    return node.walks


def test_steps_read_their_direction_off_the_triples():
    steps = walk_steps(CANDIDATES[4])
    assert [(s.node, s.relation, s.inverse, s.neighbour) for s in steps] == [(1, "directed", False, 2), (2, "starred", False, 5), (5, "starred", True, 7)]


def test_parallel_answers_share_one_line_and_the_graph_is_told_root_first():
    lines = ego(10_000)
    assert [w.text for w in lines] == [
        "Dieterle directed Kismet, Juarez, Tennessee Johnson.",
        "Kismet starred Colman.",
        "Kismet is a Drama film.",
        "Colman starred in Random Harvest.",
    ]
    assert all(w.kind == "ego" for w in lines)
    assert lines[0].nodes == [1, 2, 3, 4] and lines[0].walk_id == 10
    # an inverse step is stated the KG's way round
    assert lines[3].triples == [("Random Harvest", "starred", "Colman")] and lines[3].signature == "<starred"
    assert context_chars(lines) == sum(len(f"- {w.text}\n") for w in lines)


def test_the_budget_keeps_the_best_edges_and_the_paths_to_them():
    everything = context_chars(ego(10_000))
    for budget in range(1, everything + 1):
        lines = ego(budget)
        assert context_chars(lines) <= budget
    # room for a line and a bit: the best edge, then the next best that fits
    lines = ego(len("- Dieterle directed Kismet, Juarez.\n"))
    assert [w.text for w in lines] == ["Dieterle directed Kismet, Juarez."]
    # the deepest edge is worth more than the shallow ones here: it comes with its path
    deep_first = [walk(14, 0.95, [(1, "directed", False, 2), (2, "starred", False, 5), (5, "starred", True, 7)]), *CANDIDATES[1:3]]
    lines = ego(len("- Dieterle directed Kismet.\n- Kismet starred Colman.\n- Colman starred in Random Harvest.\n"), deep_first)
    assert [w.text for w in lines] == ["Dieterle directed Kismet.", "Kismet starred Colman.", "Colman starred in Random Harvest."]


def test_nothing_fits_a_budget_smaller_than_a_line():
    assert ego(5) == []


KG = [("Dieterle", "directed", film) for film in ("Kismet", "Juarez", "Tennessee Johnson", "Satan Met a Lady")] + [
    ("Kismet", "starred", "Colman"), ("Kismet", "starred", "Dietrich"), ("Juarez", "starred", "Muni"),
    ("Colman", "starred_in", "Random Harvest"), ("Tennessee Johnson", "has_genre", "Drama")]


@pytest.fixture(scope="module")
def dieterle_corpus(tmp_path_factory):
    return corpus.built_kg(tmp_path_factory.mktemp("ego"), KG)


def test_ego_mode_in_the_retriever(dieterle_corpus):
    folder, kg = dieterle_corpus
    question = "which films did Dieterle direct"
    retrievers = [Retriever(corpus.config(folder, kg, overrides)) for overrides in
                  ([], ["query.mode=ego"], ["query.mode=ego", "query.ego_chars=2000"], ["query.mode=ego", "query.ego_chars=40"])]
    by_walks, by_ego, roomy, small = (r.retrieve(question, k_nodes=1, k_walks=2) for r in retrievers)
    assert by_walks.nodes[0].label == by_ego.nodes[0].label == "Dieterle"
    assert by_ego.mode == "ego" and {w.kind for w in by_ego.walks} == {"ego"}
    # by default in no more characters than walk mode's walks; a set budget is kept
    assert 0 < context_chars(by_ego.walks) <= context_chars(by_walks.walks)
    assert 0 < context_chars(small.walks) <= 40
    # the walk ranking is walk mode's: the best walk (the extractive answer's) is the same
    assert by_ego.best is not None and by_ego.best.walk_id == by_walks.walks[0].walk_id == by_walks.best.walk_id
    # with room, the root's line names all four films (the automatic phrase of `directed`)
    first = roomy.walks[0]
    assert first.text.startswith("Dieterle directed ") and set(first.node_labels[1:]) == {"Kismet", "Juarez", "Tennessee Johnson", "Satan Met a Lady"}
    # every line states KG facts the KG's way round, and the root's line comes first
    assert {t for w in roomy.walks for t in w.triples} <= set(KG)
    assert [w.node_labels[0] for w in roomy.walks][0] == "Dieterle"
    for r in retrievers:
        r.close()


def test_the_answer_prompt_reads_the_ego_graph_by_default(dieterle_corpus):
    folder, kg = dieterle_corpus
    question = "which films did Dieterle direct"
    for context in ("ego", "walks"):
        model = corpus.EchoModel()
        answerer = Answerer(corpus.config(folder, kg, [f"answer.context={context}"] if context == "walks" else []), model=model)
        answer = answerer.answer(question, k_nodes=1, k_walks=2)
        answerer.close()
        assert answer.retrieval.mode == context
        assert {w.kind for w in answer.retrieval.walks} <= ({"ego"} if context == "ego" else {"bfs", "random"})
        user = model.prompts[0][1]["content"]
        assert context_text(answer.retrieval) in user
