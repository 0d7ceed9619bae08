"""The retrieval's named steps (kgwalk/query/steps.py) on their own, the one argument check the
Python API shares with the CLI and the service, the prior's nested settings, the prior's vector
cache kept per encoder, and the 'no good match' signal on a real corpus."""

import copy
import dataclasses
import itertools

import numpy as np
import pyarrow as pa
import pytest

from kgwalk.config import MOVED_KEYS, QueryConf, load_config
from kgwalk.errors import KgwalkError
from kgwalk.query import Retriever
from kgwalk.query.corpus_paths import embed_cached
from kgwalk.query.hits import EgoLine, NodeHit, WalkHit
from kgwalk.query.lexicon import Mention
from kgwalk.query.steps import (Laps, best_walks, check_request, choose_walks, ego_candidates, fetch_counts, names_an_entity, nearest_joint_ends,
                                path_keys, restrict_in_time, topic_nodes, walk_ends, weak_match)


def walk(walk_id: int, score: float, nodes: list[int], sig: str = "r>") -> WalkHit:
    return WalkHit(walk_id, score, "bfs", f"walk {walk_id}", nodes, [str(n) for n in nodes], [], sig, score)


def test_best_walks_of_each_node_among_its_roots_ties_to_the_lower_walk_id():
    rows = [(7, 1, 0.5), (3, 1, 0.9), (9, 2, 0.9), (4, 2, 0.2), (5, 8, 0.95), (2, 1, 0.5)]  # walk_id, root, score
    walks = pa.table({"walk_id": [w for w, _, _ in rows], "root": [r for _, r, _ in rows], "kind": ["bfs"] * 6,
                      "text": [f"walk {w}" for w, _, _ in rows], "nodes": [[r, 100 + w] for w, r, _ in rows],
                      "node_labels": [[str(r), str(100 + w)] for w, r, _ in rows], "rel_labels": [["p"]] * 6, "inverse": [[False]] * 6})
    scores = np.array([s for _, _, s in rows], np.float32)
    best = best_walks(walks, scores, {1: [1], 2: [2, 8]}, {1: 3, 2: 2})  # node 2's alias 8 is its root too
    assert [(w.walk_id, w.score, w.nodes) for w in best[1]] == [(3, pytest.approx(0.9), [1, 103]), (2, 0.5, [1, 102]), (7, 0.5, [1, 107])]
    assert [w.walk_id for w in best[2]] == [5, 9] and best[2][0].text == "walk 5" and best[2][0].signature == "p>"
    assert best_walks(walks, scores, {1: [1], 6: [6]}, {1: 1, 6: 4}) == {1: best[1][:1], 6: []}  # a root with no walks has none


def test_a_nodes_candidates_take_the_best_walk_of_each_path_the_best_by_cosine_lack():
    # walk_id, relation path, score: three walks by directed_by score best, then one by born_in, one by a path back
    rows = [(1, ["directed_by"], [False], 0.9), (2, ["directed_by"], [False], 0.8), (3, ["directed_by"], [False], 0.7),
            (4, ["born_in"], [False], 0.3), (5, ["born_in"], [False], 0.2), (6, ["directed_by"], [True], 0.1)]
    walks = pa.table({"walk_id": [r[0] for r in rows], "root": [1] * 6, "kind": ["bfs"] * 6, "text": [f"walk {r[0]}" for r in rows],
                      "nodes": [[1, 100 + r[0]] for r in rows], "node_labels": [["1", str(100 + r[0])] for r in rows],
                      "rel_labels": [r[1] for r in rows], "inverse": [r[2] for r in rows]})
    scores = np.array([r[3] for r in rows], np.float32)
    best = best_walks(walks, scores, {1: [1]}, {1: 2})
    assert [w.walk_id for w in best[1]] == [1, 2, 4, 6]  # the two best, then the best of each path they lack
    assert [w.walk_id for w in best_walks(walks, scores, {1: [1]}, {1: 1})[1]] == [1, 4]  # at most as many more as fetched
    # a node the prior reranks takes the best walk of every path it has, however many: the prior ranks paths
    assert [w.walk_id for w in best_walks(walks, scores, {1: [1]}, {1: 1}, every_path={1})[1]] == [1, 4, 6]
    assert [w.walk_id for w in best_walks(walks, scores, {1: [1]}, {1: 1}, every_path={2})[1]] == [1, 4]
    assert [w.walk_id for w in best_walks(walks, scores, {1: [1]}, {1: 6})[1]] == [1, 2, 3, 4, 5, 6]


def test_walk_hits_built_column_by_column_are_each_records_own():
    """hits.walk_hits: every walk of a real sample's records (walks of 1-3 steps, both directions), sliced and in chunks as
    a take leaves them, is the WalkHit its record alone makes: its triples, signature and score."""
    from conftest import SAMPLE_KG, tables_from

    from kgwalk.kg.readers import read_kg
    from kgwalk.query.hits import walk_hits
    from kgwalk.walks import Graph, WalkSpec, all_walks
    from kgwalk.walks.labels import LabelLookup, signature, walk_triples

    t = tables_from([(h, r, tail) for _, h, r, tail in read_kg(SAMPLE_KG).triples[:400]])
    spec = WalkSpec(depth=3, bfs_mode="paths")
    walks = LabelLookup(t.entities, t.relations).attach(all_walks(Graph.from_arrow(t.edges, t.entities, t.relations, "both"), spec))
    records = walks.append_column("text", pa.array([f"walk {i}" for i in range(walks.num_rows)]))
    records = pa.concat_tables([records.slice(3, 40), records.slice(50)])
    assert {len(r) for r in records.column("rel_labels").to_pylist()} == {1, 2, 3} and any(i for r in records.column("inverse").to_pylist() for i in r)
    scores = np.linspace(0.1, 0.9, records.num_rows).tolist()
    expected = [WalkHit(r["walk_id"], score, r["kind"], r["text"], r["nodes"], r["node_labels"], walk_triples(r["node_labels"], r["rel_labels"], r["inverse"]),
                        signature(r["rel_labels"], r["inverse"]), score) for r, score in zip(records.to_pylist(), scores)]
    assert walk_hits(scores, records) == expected and walk_hits([], records.slice(0, 0)) == []


def test_a_walks_path_key_is_its_relations_and_directions_in_order():
    rels = [[1], [1, 2], [2, 1], [1, 2], [1, 2], [-1], [2, 1, -1]]
    inverse = [[False], [False, False], [False, False], [False, True], [False, False], [False], [False, False, True]]
    keys = path_keys(pa.table({"rels": rels, "inverse": inverse}))
    assert keys[1] == keys[4] and len(set(keys.tolist())) == 6  # only the equal paths share a key: order and direction count
    assert keys[6] != path_keys(pa.table({"rels": [[2, 1]], "inverse": [[False, False]]}))[0]  # a longer path is another
    sliced = pa.concat_tables([pa.table({"rels": rels, "inverse": inverse}).slice(3), pa.table({"rels": rels, "inverse": inverse}).slice(0, 3)])
    assert path_keys(sliced).tolist() == [*keys[3:].tolist(), *keys[:3].tolist()]  # the same in any table, chunked or sliced
    labels = path_keys(pa.table({"rel_labels": [[str(r) for r in p] for p in rels], "inverse": inverse}))
    assert labels[1] == labels[4] and len(set(labels.tolist())) == 6  # records name relations by label


def test_a_nodes_candidates_take_the_best_walk_to_each_nearest_joint_end_they_lack():
    # walk_id, end, score: node 1's walks by cosine end at 101, 102, 103, then two at 105 and one at 104
    rows = [(1, 101, 0.9), (2, 102, 0.8), (3, 103, 0.7), (4, 105, 0.3), (5, 105, 0.5), (6, 104, 0.1)]
    walks = pa.table({"walk_id": [r[0] for r in rows], "root": [1] * 6, "kind": ["bfs"] * 6, "text": [f"walk {r[0]}" for r in rows],
                      "nodes": [[1, 50, r[1]] for r in rows], "node_labels": [["1", "50", str(r[1])] for r in rows],
                      "rel_labels": [["p", "q"]] * 6, "inverse": [[False, False]] * 6})
    scores = np.array([r[2] for r in rows], np.float32)
    assert walk_ends(walks).tolist() == [101, 102, 103, 105, 105, 104]
    joint = {105: 1, 102: 1, 104: 2}  # what the named entities all reach, in the most steps any takes
    assert nearest_joint_ends(joint).tolist() == [102, 105] and not len(nearest_joint_ends({}))
    best = best_walks(walks, scores, {1: [1]}, {1: 2}, joint_ends=nearest_joint_ends(joint))
    assert [w.walk_id for w in best[1]] == [1, 2, 5]  # 102 is reached already; 105's best walk joins, 104 (two steps) does not
    assert [w.walk_id for w in best_walks(walks, scores, {1: [1]}, {1: 2})[1]] == [1, 2]
    assert [w.walk_id for w in best_walks(walks, scores, {1: [1]}, {1: 1}, joint_ends=np.array([104, 105]))[1]] == [1, 5]  # at most as many more


def test_one_check_of_a_retrievals_arguments():
    conf = QueryConf()
    request = check_request("who directed Kismet", None, 5, "ego", conf, 20)
    assert (request.k_nodes, request.k_walks, request.mode) == (conf.k_nodes, 5, "ego")
    for args, message in [(("q", 10**9, None, None), "k_nodes must be 1..20 (serve.max_k), got 1000000000"),
                          (("q", "3", None, None), "k_nodes must be 1..20 (serve.max_k), got '3'"),
                          (("q", None, 0, None), "k_walks must be 1..20 (serve.max_k), got 0"),
                          (("q", True, None, None), "k_nodes must be 1..20 (serve.max_k), got True"),
                          ((None, None, None, None), "the question must be a string, got NoneType"),
                          (("  ", None, None, None), "the question is empty"),
                          (("q", None, None, "graph"), "mode must be one of walks, ego, got 'graph'")]:
        with pytest.raises(KgwalkError) as refused:
            check_request(*args, conf, 20)
        assert str(refused.value) == message
    with pytest.raises(KgwalkError, match="^--k-walks must be 1..20"):
        check_request("q", None, 21, None, conf, 20, names=("--k-nodes", "--k-walks"))


def test_laps_read_an_injected_clock():
    ticks = iter([10.0, 10.002, 10.0025, 10.0075])
    lap = Laps(lambda: next(ticks))
    lap("embed")
    lap("search")
    lap("embed")
    assert lap.ms == {"embed": 7.0, "search": 0.5}


def test_fetch_counts_widen_only_where_walks_are_chosen():
    named, other = NodeHit(1, "A", 0.9, matched=True), NodeHit(2, "B", 0.8)
    nodes = [named, other]
    paper = dataclasses.replace(QueryConf(), diversity="none", unnamed_walks=None, candidates=50)
    assert fetch_counts(nodes, topic_nodes(nodes), paper, 3, prior=False, timed=False) == {1: 3, 2: 3}
    assert fetch_counts(nodes, topic_nodes(nodes), paper, 3, prior=True, timed=False) == {1: 50, 2: 3}  # the topic only
    assert fetch_counts(nodes, topic_nodes(nodes), paper, 3, prior=False, timed=True) == {1: 50, 2: 50}  # time filters all
    assert topic_nodes([other]) == [other]  # none named: every node is a topic


def test_restrict_in_time_drops_walks_outside_and_ranks_untimed_ones_after():
    inside, outside, untimed = walk(1, 0.5, [1, 10]), walk(2, 0.9, [1, 20]), walk(3, 0.8, [1, 30])
    verdicts = {10: 1, 20: -1, 30: 0}
    kept = restrict_in_time({1: [inside, outside, untimed]}, lambda nodes: verdicts[nodes[-1]], 1.0)
    assert kept == {1: [inside, untimed]} and untimed.score == pytest.approx(-0.2)


def test_choose_walks_gives_the_named_node_the_places_and_ego_builds_from_them():
    named, other = NodeHit(1, "A", 0.9, matched=True), NodeHit(2, "B", 0.8)
    fetched = [[walk(i, 1 - i / 100, [1, 100 + i], f"r{i}>") for i in range(10)], [walk(50 + i, 0.5 - i / 100, [2, 200 + i]) for i in range(10)]]
    conf = QueryConf()
    places = choose_walks([named, other], fetched, 3, conf)
    assert places == [5, 1] and [len(named.walks), len(other.walks)] == [5, 1]
    candidates = {1: fetched[0], 2: fetched[1]}
    assert ego_candidates([named, other], candidates, places, conf) == {1: fetched[0], 2: fetched[1][:1]}
    budget = dataclasses.replace(conf, walk_budget=2)
    choose_walks([named, other], fetched, 3, budget)
    assert [w.walk_id for w in named.walks + other.walks] == [0, 1]  # the two best over all nodes


def test_no_good_match_needs_no_named_entity_and_a_low_cosine():
    weak, strong = walk(1, 0.3, [1, 2]), walk(2, 0.9, [1, 2])
    lowercase_word = Mention(7, "water", False)
    assert weak_match([], weak, 0.55) and not weak_match([], strong, 0.55) and weak_match([], None, 0.55)
    assert weak_match([lowercase_word], weak, 0.55)  # one lowercase word is no evidence of a name
    for named in (Mention(7, "Water", False), Mention(7, "the water", False), Mention(7, "water", True), Mention(7, "9", False)):  # a numeral names a number
        assert names_an_entity(named) and not weak_match([named], weak, 0.55)


def test_the_synthetic_settings_are_nested_and_old_keys_name_the_new_one():
    cfg = load_config(None, ["query.synthetic.focus=0.5"])
    assert cfg.query.synthetic.focus == 0.5 and cfg.query.synthetic.coverage == QueryConf().synthetic.coverage
    for old, new in MOVED_KEYS.items():
        with pytest.raises(KgwalkError) as refused:
            load_config(None, [f"{old}=0.1"])
        assert str(refused.value) == f"config: '{old}' is now '{new}': rename it in your conf or --set"
    for key, value, bound in [("temperature", 0, "> 0"), ("content_mix", 1.5, "<= 1"), ("focus_decay", 2, "<= 1"), ("hop_weight", -1, ">= 0")]:
        with pytest.raises(KgwalkError, match=f"^config: 'query.synthetic.{key}' must be {bound}"):
            load_config(None, [f"query.synthetic.{key}={value}"])


def test_the_prior_cache_keeps_each_encoders_vectors(tmp_path, monkeypatch):
    """One model run by two encoders (ONNX Runtime and torch, two precisions) gives vectors that differ in the last
    bits; a cache keyed by the model alone handed one's to the other, so a cached and an uncached run scored apart."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    class Onnx:
        precision = "float32"

        def encode(self, texts):
            return np.array([[1.0, 0.0, 0.0]] * len(texts), np.float32)

    class Torch(Onnx):
        def encode(self, texts):
            return np.array([[1.0, 1e-4, 0.0]] * len(texts), np.float32)

    texts = ["what directed E?", "E was directed by what?"]
    first = embed_cached(Onnx(), "all-MiniLM-L6-v2", texts)
    other = embed_cached(Torch(), "all-MiniLM-L6-v2", texts)
    assert not np.array_equal(first, other) and np.allclose(other[:, 1], 1e-4, atol=1e-6)
    assert np.array_equal(embed_cached(Onnx(), "all-MiniLM-L6-v2", texts), first)  # and each finds its own again


def test_the_retriever_checks_its_arguments_and_says_when_nothing_matches(sample_corpus):
    cfg = copy.deepcopy(sample_corpus)
    cfg.query.weak_cosine = 0.99  # the test embedder's cosines are not MetaQA's static model's (0.55)
    retriever = Retriever(cfg, clock=itertools.count(0, 0.001).__next__)
    for bad in ((10**9, None), ("3", None), (None, 0)):
        with pytest.raises(KgwalkError, match="must be 1..20"):
            retriever.retrieve("who directed Kismet", *bad)
    with pytest.raises(KgwalkError, match="must be a string"):
        retriever.retrieve(None)  # type: ignore[arg-type]
    named = retriever.retrieve("who directed Kismet")
    assert not named.no_good_match and named.to_json()["match_note"] == ""
    assert all(ms == pytest.approx(1.0) for ms in named.timings_ms.values())  # one tick of the injected clock a phase
    nothing = retriever.retrieve("?!?")
    assert nothing.walks and nothing.no_good_match and nothing.to_json()["no_good_match"] is True
    assert nothing.to_json()["match_note"].startswith("No good match")
    ego = retriever.retrieve("who directed Kismet", mode="ego")
    assert ego.walks and all(isinstance(line, EgoLine) and line.kind == "ego" for line in ego.walks)
    assert retriever.rerank == "none" and retriever.prior is None  # the test embedder has no meaning to compare paths with
    retriever.close()
