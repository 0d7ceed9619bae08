"""Complete answer sets at query time (query.also_chars; kgwalk/query/answer_sets.py): every end of a
retrieved walk's relation path from its root, read off the KG's edges, within a character budget,
in the walk's own fields; in walk mode, ego mode, the answer prompt, the eval and the HTTP API."""

from pathlib import Path

import pyarrow as pa
import pytest

import corpus
from kgwalk.eval.metaqa import load_questions, score_retrieval
from kgwalk.kg.ids import hash64, normalize_label
from kgwalk.query import Answerer, Retriever
from kgwalk.query.answer import context_text
from kgwalk.query.answer_sets import AnswerSets, also_text, name_answer_sets, walk_routes
from kgwalk.query.ego import ego_contexts
from kgwalk.query.hits import NodeHit, WalkHit
from kgwalk.walks.labels import signature, walk_triples

# Dieterle directed four films, Curtiz two; Kismet and Juarez share a star; the genre is a hub.
KG = [("Dieterle", "directed", film) for film in ("Kismet", "Juarez", "Tennessee Johnson", "Satan Met a Lady")] + [
    ("Curtiz", "directed", "Casablanca"), ("Curtiz", "directed", "Mildred Pierce"),
    ("Kismet", "starred", "Colman"), ("Juarez", "starred", "Colman"), ("Juarez", "starred", "Muni"),
    ("Casablanca", "starred", "Bogart")] + [(film, "has_genre", "Drama") for film in ("Kismet", "Juarez", "Casablanca", "Mildred Pierce")]


def ident(label: str) -> int:
    return hash64(normalize_label(label))


def tables(triples: list[tuple[str, str, str]]) -> tuple[pa.Table, pa.Table, pa.Table]:
    """edges, entities and relations as ingest writes them (ids hash the normalized labels)."""
    entities = sorted({x for h, _, t in triples for x in (h, t)})
    relations = sorted({r for _, r, _ in triples})
    edges = pa.table({"src": [ident(h) for h, _, _ in triples], "rel": [ident(r) for _, r, _ in triples], "dst": [ident(t) for _, _, t in triples]})
    return (edges, pa.table({"id": [ident(e) for e in entities], "label": entities}),
            pa.table({"id": [ident(r) for r in relations], "label": relations}))


def reference_ends(triples: list[tuple[str, str, str]], root: str, path: list[tuple[str, bool]]) -> set[str]:
    """The ends of `path` from `root`, followed triple by triple (the test's own reading of the KG)."""
    frontier = {root}
    for relation, inverse in path:
        frontier = {(h if inverse else t) for h, r, t in triples if r == relation and (t if inverse else h) in frontier}
    return frontier


@pytest.fixture(scope="module")
def sets() -> AnswerSets:
    return AnswerSets.from_tables(*tables(KG), "both")


def labels_of(sets: AnswerSets, ids) -> set[str]:
    return set(sets.labels(list(ids)))


@pytest.mark.parametrize("root, path", [
    ("Dieterle", [("directed", False)]),
    ("Kismet", [("directed", True), ("directed", False)]),  # the films of Kismet's director
    ("Kismet", [("starred", False), ("starred", True), ("directed", True)]),  # who directed the films Kismet's stars starred in
    ("Casablanca", [("has_genre", False), ("has_genre", True)]),  # through the hub
    ("Kismet", [("written_by", False)]),  # a relation the KG lacks
    ("Drama", [("has_genre", False)]),  # no forward edge of it from here
])
def test_every_end_of_a_relation_path_from_its_root(sets, root, path):
    assert labels_of(sets, sets.ends(ident(root), path)) == reference_ends(KG, root, path)


def test_an_unknown_root_reaches_nothing_and_a_walk_graph_out_only_never_steps_backwards(sets):
    assert len(sets.ends(ident("Nobody"), [("directed", False)])) == 0
    forward_only = AnswerSets.from_tables(*tables(KG), "out")
    assert len(forward_only.ends(ident("Kismet"), [("directed", True)])) == 0
    assert labels_of(forward_only, forward_only.ends(ident("Dieterle"), [("directed", False)])) == reference_ends(KG, "Dieterle", [("directed", False)])


def test_the_hub_guard_stops_the_traversal_early(sets):
    path = [("has_genre", False), ("has_genre", True), ("directed", True)]
    everything = labels_of(sets, sets.ends(ident("Casablanca"), path))
    assert everything == {"Dieterle", "Curtiz"}
    # Casablanca has 3 adjacency entries (directed, starred, has_genre), Drama 4 (its films), the
    # films 12 together: at most 4 per step reaches all of Drama's films, then the first film's director or two
    capped = sets.ends(ident("Casablanca"), path, max_visits=4)
    assert 0 < len(capped) < len(everything) and labels_of(sets, capped) <= everything


LABELS = {ident(x): x for h, _, t in KG for x in (h, t)}


def walk(score: float, root: str, *steps: tuple[str, bool, str]) -> WalkHit:
    """A retrieved walk from (relation, inverse, next node) steps."""
    names = [root, *(s[2] for s in steps)]
    rels, inverse = [s[0] for s in steps], [s[1] for s in steps]
    return WalkHit(walk_id=hash(names[-1]) % 1000, score=score, kind="bfs", text=" ".join(names) + ".", nodes=[ident(n) for n in names],
                   node_labels=names, triples=walk_triples(names, rels, inverse), signature=signature(rels, inverse), cosine=score)


def test_lists_name_what_the_context_lacks_best_walk_first_within_the_budget(sets):
    best = walk(0.9, "Kismet", ("directed", True, "Dieterle"), ("directed", False, "Juarez"))
    second = walk(0.5, "Dieterle", ("directed", False, "Satan Met a Lady"))  # its set is the best walk's, less Kismet
    third = walk(0.4, "Curtiz", ("directed", False, "Casablanca"))
    hits = [third, second, best]
    name_answer_sets(walk_routes(hits), sets, 1000)
    # the best walk names its path's other ends (not Kismet or Juarez, on the walk, nor Satan Met a
    # Lady, on another); the second walk's ends are all named by then; the third lists its own
    assert set(best.also_labels) == {"Tennessee Johnson"} and best.also == [ident("Tennessee Johnson")]
    assert second.also == [] and third.also_labels == ["Mildred Pierce"]
    assert best.text == "Kismet Dieterle Juarez." and also_text(best) == " Also: Tennessee Johnson."
    assert also_text(second) == ""
    # a tight budget: only the best walk's list fits, and the lists never exceed it
    hits = [walk(0.9, "Dieterle", ("directed", False, "Kismet")), walk(0.4, "Curtiz", ("directed", False, "Casablanca"))]
    budget = len(" Also: Juarez, Satan Met a Lady, Tennessee Johnson.")
    name_answer_sets(walk_routes(hits), sets, budget)
    assert sum(len(also_text(h)) for h in hits) <= budget
    assert len(hits[0].also) >= 2 and hits[1].also == []
    assert [LABELS[e] for e in hits[0].also] == hits[0].also_labels
    nothing = [walk(0.9, "Dieterle", ("directed", False, "Kismet"))]
    name_answer_sets(walk_routes(nothing), sets, len(" Also: ") + 2)  # room for no name here
    assert nothing[0].also == [] and nothing[0].also_labels == []


@pytest.fixture(scope="module")
def films_corpus(tmp_path_factory):
    return corpus.built_kg(tmp_path_factory.mktemp("answer_sets"), KG)


def named_in(hits: list[WalkHit]) -> set[str]:
    return {label for w in hits for label in (*w.node_labels, *w.also_labels)}


def test_an_ego_line_is_completed_by_the_path_from_the_root_that_reaches_it(sets):
    kismet = NodeHit(ident("Kismet"), "Kismet", 1.0)
    candidates = [walk(0.9, "Kismet", ("directed", True, "Dieterle"), ("directed", False, "Juarez")), walk(0.8, "Kismet", ("starred", False, "Colman"))]
    routes = ego_contexts([kismet], {kismet.id: candidates}, 10_000, lambda relation, inverse: ("<" if inverse else "", ">" if not inverse else ""))
    assert [(h.node_labels[0], LABELS[root], path) for h, root, path in routes] == [
        ("Kismet", "Kismet", (("directed", True),)), ("Kismet", "Kismet", (("starred", False),)),
        ("Dieterle", "Kismet", (("directed", True), ("directed", False)))]
    name_answer_sets(routes, sets, 1000)
    by_node = {h.node_labels[0] + h.triples[0][1]: h for h, _, _ in routes}
    # the director's line lists his other films: the ends of Kismet's path to it, less Kismet and Juarez
    assert set(by_node["Dieterledirected"].also_labels) == {"Tennessee Johnson", "Satan Met a Lady"}
    # Kismet's director and star are all the KG has on those paths: nothing to add
    assert by_node["Kismetdirected"].also == [] and by_node["Kismetstarred"].also == []


def test_an_ego_graph_lists_its_best_walks_end_first(sets):
    # One walk makes both lines (same score): the director's films, then their stars, which the
    # question asks for. A budget with room for one list gives it to the walk's end.
    dieterle = NodeHit(ident("Dieterle"), "Dieterle", 1.0)
    candidates = [walk(0.9, "Dieterle", ("directed", False, "Kismet"), ("starred", False, "Colman"))]
    routes = ego_contexts([dieterle], {dieterle.id: candidates}, 10_000, lambda relation, inverse: ("", ""))
    assert [len(path) for _, _, path in routes] == [1, 2]  # shown root first
    budget = len(" Also: Tennessee Johnson.")  # any one of the director's other films, or Muni, not both
    name_answer_sets(routes, sets, budget)
    films, stars = (h for h, _, _ in routes)
    assert stars.also_labels == ["Muni"] and films.also == []


@pytest.mark.parametrize("mode", ["walks", "ego"])
def test_the_retriever_completes_each_shown_walks_answer_set(films_corpus, mode):
    folder, kg = films_corpus
    question = "the director of Kismet directed which films"
    plain, listed = (Retriever(corpus.config(folder, kg, [f"query.mode={mode}", f"query.also_chars={chars}"])) for chars in (0, 10_000))
    before, after = (r.retrieve(question, k_nodes=1, k_walks=3) for r in (plain, listed))
    plain.close()
    listed.close()
    assert after.nodes[0].label == "Kismet" and [w.text for w in after.walks] == [w.text for w in before.walks]  # texts stay the records'
    assert all(w.also == [] for w in before.walks) and any(w.also for w in after.walks)
    for w in after.walks:
        assert [LABELS[e] for e in w.also] == w.also_labels and not set(w.also_labels) & set(w.node_labels)
    if mode == "walks":  # with room, every end of each shown walk's path from its root is named
        for w in after.walks:
            path = [(s[:-1], False) if s.endswith(">") else (s[1:], True) for s in w.signature.split("|")]
            assert reference_ends(KG, w.node_labels[0], path) <= named_in(after.walks)
    # the API's JSON carries the lists as their own fields
    first = after.to_json()["nodes"][0]["walks"][0]
    assert {"also", "also_labels"} <= set(first) and first["text"] == before.walks[0].text


@pytest.fixture(scope="module")
def films_only(tmp_path_factory):
    """Dieterle's films with no facts of their own: each of his walks is one film."""
    return corpus.built_kg(tmp_path_factory.mktemp("films_only"), [t for t in KG if t[1] == "directed"])


def test_the_answer_prompt_and_the_eval_read_the_lists(films_only, tmp_path: Path):
    folder, kg = films_only
    cfg = corpus.config(folder, kg, ["query.mode=walks", "answer.context=walks", "query.also_chars=10000"])
    model = corpus.EchoModel()
    answerer = Answerer(cfg, model=model)
    answer = answerer.answer("which films did Dieterle direct", k_nodes=1, k_walks=1)
    listed = [w for w in answer.retrieval.walks if w.also]
    assert listed and f"- {listed[0].text} Also: {', '.join(listed[0].also_labels)}." in context_text(answer.retrieval)
    assert context_text(answer.retrieval) in model.prompts[0][1]["content"]
    answerer.close()
    # Dieterle's four films: with one walk shown, only the lists bring the whole set into the context
    (tmp_path / "qa.txt").write_text("which films did [Dieterle] direct\tKismet|Juarez|Tennessee Johnson|Satan Met a Lady\n"
                                     "who directed [Casablanca]\tCurtiz\n")
    questions = load_questions(tmp_path / "qa.txt")
    scores = {}
    for chars in (0, 10_000):
        retriever = Retriever(corpus.config(folder, kg, ["query.mode=walks", f"query.also_chars={chars}", "query.k_nodes=1", "query.k_walks=1"]))
        scores[chars] = score_retrieval(retriever, questions, 1, plain=True)
        retriever.close()
    assert scores[0].multi_answer_questions == scores[10_000].multi_answer_questions == 1
    assert scores[0].multi_answer_recall <= 0.5 and scores[10_000].multi_answer_recall == 1.0
    assert scores[10_000].context_chars > scores[0].context_chars
