"""Every fact walked once: explicit inverse relations (`r` beside `r_inverse`) recognised by name,
confirmed by their edges, and walked once under `direction: both`; the quality gate agrees."""

import numpy as np
import pyarrow as pa
import pytest
from conftest import labelled_walks, tables_from

from kgwalk.kg.ids import hash64
from kgwalk.kg.relations import inverse_relation_pairs
from kgwalk.quality.checks import WalkReference, walk_checks
from kgwalk.walks import Graph, WalkSpec, all_walks
from kgwalk.walks.graph import category_objects, covered_ends, mirrored_copies, mirrored_relations
from kgwalk.walks.table import WALKS_SCHEMA


def relations_named(*names):
    return pa.table({"id": [hash64(n) for n in names], "label": list(names)})


def test_inverse_pairs_are_recognised_by_name():
    snake = relations_named("plays_for", "plays_for_inverse", "directed_by", "inverse_directed_by", "genre_inverse", "reverse")
    assert inverse_relation_pairs(snake) == sorted([
        (hash64("plays_for"), hash64("plays_for_inverse")),
        (hash64("directed_by"), hash64("inverse_directed_by")),
    ])  # genre_inverse has no `genre` to invert; `reverse` alone is a name
    camel = relations_named("playsFor", "playsForInverse", "film.film.directed_by", "film.film.directed_by_inverse")
    assert inverse_relation_pairs(camel) == sorted([
        (hash64("playsFor"), hash64("playsForInverse")),
        (hash64("film.film.directed_by"), hash64("film.film.directed_by_inverse")),
    ])


def test_only_inverse_edges_whose_mirror_exists_are_copies():
    t = tables_from([("Dirk", "plays_for", "Turkey"), ("Turkey", "plays_for_inverse", "Dirk"),
                     ("Spain", "plays_for_inverse", "Xavi"), ("Turkey", "plays_for", "Dirk")])
    copies = mirrored_copies(t.edges, t.relations)
    rel = dict(zip(t.relations.column("label").to_pylist(), t.relations.column("id").to_pylist()))
    src, rels, dst = (t.edges.column(c).to_pylist() for c in ("src", "rel", "dst"))
    dropped = {(s, r, d) for s, r, d, c in zip(src, rels, dst, copies) if c}
    # Xavi's inverse edge states a fact no forward edge states; (Turkey plays_for Dirk) is forward
    assert dropped == {(hash64("Turkey"), rel["plays_for_inverse"], hash64("Dirk"))}


def test_relations_stating_one_relation_both_ways_under_names_of_their_own_are_found_by_their_edges():
    """parents and children say each fact twice, by names no inverse marker ties; their edges do. A symmetric relation
    (spouse) mirrors itself, a relation half mirrored (mentor, student_of) is two relations, and a self-loop says nothing."""
    families = [("Ada", "Ben"), ("Ben", "Cy"), ("Dee", "Eve"), ("Fay", "Gus")]
    triples = [(child, "parents", parent) for child, parent in families] + [(parent, "children", child) for child, parent in families]
    triples += [("Ada", "spouse", "Hal"), ("Hal", "spouse", "Ada"), ("Ada", "mentor", "Ben"), ("Ben", "student_of", "Ada"),
                ("Cy", "mentor", "Dee"), ("Eve", "student_of", "Fay"), ("Gus", "parents", "Gus")]
    t = tables_from(triples)
    rel = dict(zip(t.relations.column("label").to_pylist(), t.relations.column("id").to_pylist()))
    assert mirrored_relations(t.edges, min_share=0.9) == [tuple(sorted((rel["parents"], rel["children"])))]
    # half of mentor's edges are student_of's reversed: a pair only where half is enough
    assert {frozenset(p) for p in mirrored_relations(t.edges, min_share=0.5)} == {
        frozenset((rel["parents"], rel["children"])), frozenset((rel["mentor"], rel["student_of"]))}


def test_a_step_reaching_what_a_category_relation_reaches_is_covered_by_it():
    """A club's located_in reaches countries plays_for_country reaches (a category: many players per country), so it is
    covered; citizen_of's coaches are one per country, so it covers nothing, whatever it reaches. Checked against a
    count by sets on a random KG too."""
    countries, players = ["Veronia", "Caldonia", "Ostmark"], [f"player {i}" for i in range(12)]
    triples = [(p, "plays_for_country", countries[i % 3]) for i, p in enumerate(players)]
    triples += [(p, "plays_for_club", f"club {i % 4}") for i, p in enumerate(players)]
    triples += [(f"club {i}", "located_in", countries[i % 2]) for i in range(4)]
    triples += [(f"coach {i}", "citizen_of", c) for i, c in enumerate(countries)]
    t = tables_from(triples)
    rel = dict(zip(t.relations.column("label").to_pylist(), t.relations.column("id").to_pylist()))
    found = set(covered_ends(t.edges, min_share=0.75, min_fan_in=3.0))
    assert (rel["located_in"], False, rel["plays_for_country"]) in found
    assert (rel["citizen_of"], False, rel["plays_for_country"]) in found  # its ends are countries too
    assert not any(s == rel["citizen_of"] for _, _, s in found)  # one coach per country: a role, no category
    # a club's players are the players plays_for_country leaves from: a backward step, covered by no forward one
    assert (rel["plays_for_club"], True, rel["plays_for_country"]) not in found

    rng = np.random.default_rng(0)
    nodes, rels = rng.integers(-(2**62), 2**62, 40), rng.integers(0, 6, 600)  # ids of any sign, as hash64's
    src = nodes[rng.integers(0, 40, 600)]
    dst = nodes[np.where(rels < 3, rng.integers(0, 5, 600), rng.integers(0, 40, 600))]  # relations 0-2 reach 5 nodes, categories
    edges = pa.table({"src": src, "rel": rels.astype(np.int64), "dst": dst})
    ends = {(r, back): set((src if back else dst)[rels == r].tolist()) for r in range(6) for back in (False, True)}
    fan_in = {r: (rels == r).sum() / max(len(ends[(r, False)]), 1) for r in range(6)}
    by_sets = {(r, back, s) for (r, back), reached in ends.items() for s in range(6) if (r, back) != (s, False) and fan_in[s] >= 3.0
               and reached and len(reached & ends[(s, False)]) >= 0.75 * len(reached)}
    assert set(covered_ends(edges, min_share=0.75, min_fan_in=3.0)) == by_sets
    assert len(by_sets) > 6  # the check compares something
    assert covered_ends(edges.slice(0, 0), min_share=0.75, min_fan_in=3.0) == []  # a KG with no edges yet


def test_a_category_relations_objects_are_what_it_says_they_are():
    """The objects of each relation shared by 3 subjects on average, as distinct (relation, node) pairs; checked against a
    count by sets on a random KG whose ids are of any sign."""
    rng = np.random.default_rng(1)
    nodes, rels = rng.integers(-(2**62), 2**62, 60), rng.integers(0, 5, 500)
    src = nodes[rng.integers(0, 60, 500)]
    dst = nodes[np.where(rels < 2, rng.integers(0, 6, 500), rng.integers(0, 60, 500))]  # relations 0-1 reach 6 nodes
    found_rels, found_nodes = category_objects(pa.table({"src": src, "rel": rels.astype(np.int64), "dst": dst}), min_fan_in=3.0)
    objects = {r: set(dst[rels == r].tolist()) for r in range(5)}
    by_sets = {(r, n) for r, reached in objects.items() if (rels == r).sum() >= 3.0 * len(reached) for n in reached}
    assert set(zip(found_rels.tolist(), found_nodes.tolist())) == by_sets
    assert {r for r, _ in by_sets} == {0, 1}  # the check compares something: the two categories, no other relation
    assert len(found_rels) == len(by_sets)  # distinct pairs
    empty = category_objects(pa.table({"src": src[:0], "rel": rels[:0].astype(np.int64), "dst": dst[:0]}), min_fan_in=3.0)
    assert [len(a) for a in empty] == [0, 0]


def test_a_fact_stated_twice_is_walked_once_under_both_and_kept_walking_out():
    triples = [("Dirk", "plays_for", "Turkey"), ("Turkey", "plays_for_inverse", "Dirk")]
    t = tables_from(triples)
    both = Graph.from_arrow(t.edges, t.entities, t.relations, "both")
    assert both.num_entries == 2  # one fact, an entry at each end
    walks = {(w["node_labels"][0], w["rel_labels"][0], w["inverse"][0]) for w in labelled_walks(triples, WalkSpec(depth=1))}
    assert walks == {("Dirk", "plays_for", False), ("Turkey", "plays_for", True)}
    out = {(w["node_labels"][0], w["rel_labels"][0]) for w in labelled_walks(triples, WalkSpec(direction="out", depth=1))}
    assert out == {("Dirk", "plays_for"), ("Turkey", "plays_for_inverse")}  # walking out, the copy is the only way back


def test_the_gate_counts_degrees_as_the_walks_do():
    # H has 3 players, each fact stated twice: 6 edges, 3 facts. With hub_degree 4 the walks pass
    # through H (3 entries), and the gate must not call that passing through a hub.
    triples = [(f"P{i}", "plays_for", "H") for i in range(3)] + [("H", "plays_for_inverse", f"P{i}") for i in range(3)]
    t = tables_from(triples)
    graph = Graph.from_arrow(t.edges, t.entities, t.relations, "both")
    walks = all_walks(graph, WalkSpec(depth=2, hub_degree=4, max_per_signature=None)).cast(WALKS_SCHEMA)
    assert (walks.column("steps").to_numpy() == 2).sum() == 6  # P_i -> H -> P_j
    ref = WalkReference.from_tables(t.edges, t.entities, t.relations, "both", 4)
    assert not np.any(walk_checks(walks, ref).column("through_hub").to_numpy(zero_copy_only=False))


def test_the_join_engine_drops_the_same_copies(spark):
    from kgwalk.walks.join_engine import join_walks

    triples = [(f"P{i}", "plays_for", f"T{i % 2}") for i in range(5)] + [(f"T{i % 2}", "plays_for_inverse", f"P{i}") for i in range(4)]
    triples += [("T0", "plays_for_inverse", "Z"), ("P1", "genre", "P1")]
    t = tables_from(triples)
    spec = WalkSpec(depth=3, hub_degree=3, max_per_signature=None)
    expected = all_walks(Graph.from_arrow(t.edges, t.entities, t.relations, "both"), spec).sort_by("walk_id")
    joined = join_walks(spark, spark.createDataFrame(t.edges.to_pandas()), spark.createDataFrame(t.entities.to_pandas()), t.relations, spec)
    got = pa.Table.from_pandas(joined.toPandas(), schema=WALKS_SCHEMA, preserve_index=False).sort_by("walk_id")
    assert got.equals(expected)
    rel = dict(zip(t.relations.column("label").to_pylist(), t.relations.column("id").to_pylist()))
    steps = {(n[i], r[i], n[i + 1]) for n, r in zip(got.column("nodes").to_pylist(), got.column("rels").to_pylist()) for i in range(len(r))}
    assert (hash64("P1"), rel["genre"], hash64("P1")) in steps  # the self-loop is walked
    assert {(a, b) for a, r, b in steps if r == rel["plays_for_inverse"]} <= {(hash64("T0"), hash64("Z")), (hash64("Z"), hash64("T0"))}


@pytest.mark.parametrize("direction", ["out", "both"])
def test_without_labels_nothing_is_dropped(direction):
    t = tables_from([("Dirk", "plays_for", "Turkey"), ("Turkey", "plays_for_inverse", "Dirk")])
    assert Graph.from_arrow(t.edges, t.entities, t.relations.select(["id"]), direction).num_entries == (4 if direction == "both" else 2)


@pytest.mark.parametrize("seed", range(24))
def test_refresh_rewalks_every_root_whose_mirrors_change(seed):
    """Whether an inverse edge is a copy depends on another edge: adding or removing either one
    changes the walks only of roots the refresh already re-walks (the edges' ends and what reaches them)."""
    rng = np.random.default_rng(seed)

    def fact():
        return f"e{rng.integers(12)}", f"r{rng.integers(2)}", f"e{rng.integers(12)}"

    facts = {fact() for _ in range(24)}
    mirrored = {f for f in facts if rng.random() < 0.6}
    old = facts | {(t, r + "_inverse", h) for h, r, t in mirrored}
    dropped = {f for f in sorted(facts) if rng.random() < 0.2}  # their mirrors stay, now unconfirmed
    new = (old - dropped) | {(t, r + "_inverse", h) for h, r, t in sorted(facts - mirrored) if rng.random() < 0.5} | {fact() for _ in range(3)}
    spec = WalkSpec(kinds=("bfs", "random"), depth=int(rng.integers(2, 4)), hub_degree=[3, 5, None][seed % 3], walks_per_root=6,
                    max_per_signature=None)
    by_root, tables = [], []
    for triples in (sorted(old), sorted(new)):
        t = tables_from(triples)
        rows: dict[int, set] = {}
        for w in all_walks(Graph.from_arrow(t.edges, t.entities, t.relations, "both"), spec).to_pylist():
            rows.setdefault(w["root"], set()).add((w["walk_id"], w["count"]))
        by_root.append(rows)
        tables.append(t)
    from kgwalk.walks.affected import affected_roots

    changed = {r for r in set(by_root[0]) | set(by_root[1]) if by_root[0].get(r) != by_root[1].get(r)}
    relations = pa.concat_tables([t.relations.select(["id", "label"]) for t in tables]).group_by(["id", "label"]).aggregate([])
    assert changed <= set(affected_roots(tables[0].edges, tables[1].edges, spec, relations).tolist())
