"""Exact BFS walks on hand-made graphs."""

import numpy as np
import pytest

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64
from kgwalk.walks import Graph, WalkSpec, all_walks

from conftest import SAMPLE_KG, graph_from, labelled_walks


def walks_of(triples, root, **spec):
    """Walks from `root` as token tuples: (node, rel, node, ...) with inverse relations as 'rel^-1';
    BFS as the paper's reference walks (bfs_mode `reached`) unless a test names a mode."""
    spec.setdefault("bfs_mode", "reached")
    out = []
    for w in labelled_walks(triples, WalkSpec(**spec)):
        if w["node_labels"][0] != root:
            continue
        tokens = [w["node_labels"][0]]
        for rel, inv, node in zip(w["rel_labels"], w["inverse"], w["node_labels"][1:]):
            tokens += [rel + ("^-1" if inv else ""), node]
        out.append(tuple(tokens))
    return out


CHAIN = [("A", "r", "B"), ("B", "s", "C"), ("C", "t", "D"), ("D", "u", "E")]


@pytest.mark.parametrize(
    "direction,root,expected",
    [
        ("out", "B", {("B", "s", "C"), ("B", "s", "C", "t", "D")}),
        ("in", "C", {("C", "s^-1", "B"), ("C", "s^-1", "B", "r^-1", "A")}),
        ("both", "B", {("B", "r^-1", "A"), ("B", "s", "C"), ("B", "s", "C", "t", "D")}),
    ],
)
def test_directions(direction, root, expected):
    assert set(walks_of(CHAIN, root, direction=direction, depth=2, max_per_signature=None)) == expected


def test_depth_limits_walk_length():
    for depth in (1, 2, 3, 4):
        walks = walks_of(CHAIN, "A", direction="out", depth=depth, max_per_signature=None)
        assert len(walks) == depth
        assert max(len(w) for w in walks) == 2 * depth + 1
        assert walks == sorted(walks, key=len)  # emitted shortest first


def test_one_walk_per_reached_node_via_shortest_path():
    # D is reachable from A in 2 steps (A-u-C-t-D) and 3 steps (A-r-B-s-C-t-D): only the shortest is kept.
    triples = [("A", "r", "B"), ("B", "s", "X"), ("A", "u", "C"), ("C", "t", "D"), ("X", "v", "D")]
    walks = walks_of(triples, "A", direction="out", depth=3, max_per_signature=None)
    ends = [w[-1] for w in walks]
    assert sorted(ends) == ["B", "C", "D", "X"]
    assert ("A", "u", "C", "t", "D") in walks


def test_equal_length_tie_goes_to_canonical_order():
    # D reachable in two steps via B (relation r) and via C (relation q): the relation with the
    # smaller id comes first in canonical order, and its path is the one kept.
    triples = [("A", "r", "B"), ("A", "q", "C"), ("B", "s", "D"), ("C", "s", "D")]
    walks = walks_of(triples, "A", direction="out", depth=2, max_per_signature=None)
    via = "B" if hash64("r") < hash64("q") else "C"
    assert [w for w in walks if w[-1] == "D"] == [("A", "r" if via == "B" else "q", via, "s", "D")]


def test_hub_ends_walks_but_is_not_passed_through():
    triples = [(f"X{i}", "r", "H") for i in range(5)] + [("A", "s", "H"), ("A", "t", "B")]
    walks = walks_of(triples, "A", depth=3, hub_degree=3, max_per_signature=None)
    assert set(walks) == {("A", "s", "H"), ("A", "t", "B")}
    # The hub as a root still expands.
    from_hub = walks_of(triples, "H", depth=3, hub_degree=3, max_per_signature=None)
    assert {w[-1] for w in from_hub} == {"X0", "X1", "X2", "X3", "X4", "A"} | {"B"}
    assert all(len(w) <= 5 for w in from_hub)
    # Without the rule the walk from A reaches the X nodes through H.
    uncapped = walks_of(triples, "A", depth=3, hub_degree=None, max_per_signature=None)
    assert {w[-1] for w in uncapped} == {"H", "B"} | {f"X{i}" for i in range(5)}


def test_signature_cap_keeps_first_m_in_canonical_order_and_all_own_facts():
    movies = ["M1", "M2", "M3", "M4"]
    triples = [("R", "r", m) for m in movies] + [(m, "g", f"G{m}") for m in movies]
    walks = walks_of(triples, "R", depth=2, max_per_signature=2)
    one_step = [w for w in walks if len(w) == 3]
    two_step = [w for w in walks if len(w) == 5]
    assert {w[-1] for w in one_step} == set(movies)  # own facts never capped
    kept = sorted(movies, key=hash64)[:2]  # canonical order = neighbour id order
    assert two_step == [("R", "r", m, "g", f"G{m}") for m in kept]
    assert len(walks_of(triples, "R", depth=2, max_per_signature=None)) == 8


def test_self_loops_appear_once_and_are_walks_of_their_own():
    graph = graph_from([("A", "r", "A"), ("A", "s", "B")], "both")
    a = graph.index_of(np.array([hash64("A")]))[0]
    assert graph.degree[a] == 2  # the loop once, plus A-s-B
    # the loop is a fact of A's: one walk of one step, which leads nowhere further
    assert sorted(walks_of([("A", "r", "A"), ("A", "s", "B"), ("B", "t", "C")], "A", depth=3)) == [
        ("A", "r", "A"), ("A", "s", "B"), ("A", "s", "B", "t", "C")]
    assert walks_of([("A", "r", "A"), ("A", "s", "B")], "B", depth=3) == [("B", "s^-1", "A")]  # others' loops are no steps


@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_an_entity_whose_only_edges_are_self_loops_gets_a_walk_per_loop(direction):
    triples = [("Abra", "genre", "Abra"), ("Abra", "sameAs", "Abra"), ("X", "r", "Y")]
    step = "^-1" if direction == "in" else ""  # walking `in`, every step is a backward one
    assert sorted(walks_of(triples, "Abra", direction=direction, depth=2, max_per_root=5)) == [
        ("Abra", "genre" + step, "Abra"), ("Abra", "sameAs" + step, "Abra")]


def test_parallel_edges_give_one_walk_per_node():
    triples = [("A", "r", "B"), ("A", "s", "B")]
    walks = walks_of(triples, "A", depth=2)
    first = "r" if hash64("r") < hash64("s") else "s"
    assert walks == [("A", first, "B")]
    assert walks_of(triples, "B", depth=2) == [("B", f"{first}^-1", "A")]


def test_max_per_root_keeps_shortest():
    walks = walks_of(CHAIN, "A", direction="out", depth=4, max_per_signature=None, max_per_root=2)
    assert [len(w) for w in walks] == [3, 5]


def test_maximal_mode_drops_exactly_the_walks_another_walk_extends():
    # A-r-B-s-C and A-t-D: the reached walks A>B, A>B>C, A>D; A>B is a prefix of A>B>C.
    triples = [("A", "r", "B"), ("B", "s", "C"), ("A", "t", "D")]
    reached = walks_of(triples, "A", direction="out", depth=3)
    maximal = walks_of(triples, "A", direction="out", depth=3, bfs_mode="maximal")
    assert set(reached) == {("A", "r", "B"), ("A", "r", "B", "s", "C"), ("A", "t", "D")}
    assert set(maximal) == {("A", "r", "B", "s", "C"), ("A", "t", "D")}


def test_maximal_mode_keeps_every_fact_of_the_reached_walks():
    """On a real sample: no information is lost, only repeated (every dropped walk is a prefix
    of a kept one), and no kept walk is a prefix of another."""
    from kgwalk.kg.ingest import build_tables
    from kgwalk.kg.readers import read_kg

    tables = build_tables(read_kg(SAMPLE_KG), "sample")
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, "both")
    reached = all_walks(graph, WalkSpec(bfs_mode="reached")).to_pylist()
    maximal = all_walks(graph, WalkSpec(bfs_mode="maximal")).to_pylist()

    def path(w):
        return (w["root"], *zip(w["rels"], w["inverse"], w["nodes"][1:]))

    kept = {path(w) for w in maximal}
    prefixes = {p[:i] for p in kept for i in range(2, len(p))}
    assert len(maximal) < len(reached)
    assert all(path(w) in kept or path(w) in prefixes for w in reached)
    assert not kept & prefixes


def test_paths_mode_walks_a_relation_path_whose_ends_another_path_reached_first():
    # X directed and wrote F; F's genre G is reached first through whichever relation sorts first,
    # so `reached` has no "wrote, then genre" walk and a question asking it has no answer walk.
    triples = [("X", "directed", "F"), ("X", "wrote", "F"), ("F", "genre", "G")]
    reached = walks_of(triples, "X", direction="out", depth=2)
    paths = walks_of(triples, "X", direction="out", depth=2, bfs_mode="paths")
    first, second = sorted(["directed", "wrote"], key=hash64)
    assert set(reached) == {("X", first, "F"), ("X", first, "F", "genre", "G")}
    assert set(paths) == {("X", "directed", "F"), ("X", "wrote", "F"),
                          ("X", "directed", "F", "genre", "G"), ("X", "wrote", "F", "genre", "G")}


def test_paths_mode_never_revisits_a_node_and_caps_each_relation_path():
    # A film with three actors, each in two more films: "films sharing an actor with M" is one
    # relation path with six ends; no walk goes back to M or to an actor it came from.
    triples = [("M", "starred", a) for a in ("a1", "a2", "a3")]
    triples += [(f"F{a}{i}", "starred", a) for a in ("a1", "a2", "a3") for i in (1, 2)]
    for cap, ends in ((1, 1), (2, 2), (None, 6)):
        walks = walks_of(triples, "M", direction="both", depth=3, bfs_mode="paths", max_per_signature=cap)
        assert all(len(set(w[::2])) == len(w[::2]) for w in walks)  # no node twice on a walk
        shared = [w for w in walks if w[1::2] == ("starred", "starred^-1")]
        assert len(shared) == ends and len({w[-1] for w in shared}) == ends
        assert sorted(w for w in walks if len(w) == 3) == [("M", "starred", a) for a in ("a1", "a2", "a3")]


def test_paths_mode_holds_every_reached_relation_path_on_a_real_sample():
    """Every relation path a `reached` walk follows has a `paths` walk, and more; with no cap
    every reached walk is itself a `paths` walk (a shortest path's prefixes are the first paths
    to their nodes, so the first of their relation path too)."""
    from kgwalk.kg.ingest import build_tables
    from kgwalk.kg.readers import read_kg

    tables = build_tables(read_kg(SAMPLE_KG), "sample")
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, "both")

    def relation_paths(walks):
        return {(w["root"], tuple(w["rels"]), tuple(w["inverse"])) for w in walks}

    reached = all_walks(graph, WalkSpec(bfs_mode="reached")).to_pylist()
    paths = all_walks(graph, WalkSpec(bfs_mode="paths")).to_pylist()
    assert relation_paths(reached) < relation_paths(paths)
    uncapped = {w["walk_id"] for w in all_walks(graph, WalkSpec(bfs_mode="paths", max_per_signature=None)).to_pylist()}
    assert {w["walk_id"] for w in all_walks(graph, WalkSpec(bfs_mode="reached", max_per_signature=None)).to_pylist()} <= uncapped


def test_bounded_working_memory_gives_the_same_walks():
    """max_paths splits a BFS level into chunks (and random walkers into groups); the walks must
    not change, however small the bound."""
    from kgwalk.kg.ingest import build_tables
    from kgwalk.kg.readers import read_kg

    tables = build_tables(read_kg(SAMPLE_KG), "sample")
    graph = Graph.from_arrow(tables.edges, tables.entities, tables.relations, "both")
    for spec in (WalkSpec(kinds=("bfs", "random"), walks_per_root=10), WalkSpec(bfs_mode="paths"),
                 WalkSpec(bfs_mode="paths", max_per_signature=2)):
        expected = all_walks(graph, spec).sort_by("walk_id")
        assert all_walks(graph, spec, roots_per_batch=64, max_paths=50).sort_by("walk_id").equals(expected)


def test_bad_spec_is_a_clear_error():
    with pytest.raises(KgwalkError, match="direction"):
        WalkSpec(direction="sideways")
    with pytest.raises(KgwalkError, match="depth"):
        WalkSpec(depth=0)
    with pytest.raises(KgwalkError, match="bfs_mode"):
        WalkSpec(bfs_mode="longest")


def test_first_in_groups_marks_the_rows_ranked_first_within_their_group():
    """The cap of one walk per relation path (walkers.first_in_groups) keeps exactly the rows rank_within_groups ranks
    0, on hash-like keys with repeats, one row and none."""
    from kgwalk.walks.walkers import first_in_groups, rank_within_groups

    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 50, 1500):
        group = rng.integers(0, max(n // 4, 1), n).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        assert first_in_groups(group).tolist() == (rank_within_groups(group) == 0).tolist()
