"""Walk points carry ids only; a reader shows walks from the Delta tables at the versions its index
reflects (kgwalk.index.records): what a hit shows is what the tables said when the index was built."""

import threading
from pathlib import Path

import numpy as np
import pytest

import corpus
import kgwalk.index.records as records_module
import kgwalk.query.hub_walks as hub_walks_module
from kgwalk.errors import KgwalkError
from kgwalk.index.records import RECORD_BYTES, WalkRecords, record_source
from kgwalk.index.store import collection_names, open_store
from kgwalk.query.retriever import Retriever
from kgwalk.query.steps import path_keys
from kgwalk.refresh.job import run_refresh
from kgwalk.storage import read_rows, read_table
from kgwalk.walks.labels import signature, walk_triples

TRIPLES = [
    ("Kismet", "directed_by", "William Dieterle"),
    ("Kismet", "starred_actors", "Marlene Dietrich"),
    ("The Devil and Daniel Webster", "directed_by", "William Dieterle"),
    ("Blonde Venus", "starred_actors", "Marlene Dietrich"),
    ("Blonde Venus", "directed_by", "Josef von Sternberg"),
    ("Shanghai Express", "directed_by", "Josef von Sternberg"),
]


def built_config(tmp_path: Path):
    """TRIPLES built in this process, read with dense node search in cosine order."""
    folder, kg = corpus.built_kg(tmp_path, TRIPLES)
    return corpus.config(folder, kg, ["query.node_search=dense", "query.rerank=none"])


def expected_walks(cfg) -> dict[int, dict]:
    """Every walk as the tables state it, labels joined by hand."""
    entities = dict(zip(*(read_table(cfg.table("entities"), ["id", "label"]).column(c).to_pylist() for c in ("id", "label"))))
    relations = dict(zip(*(read_table(cfg.table("relations"), ["id", "label"]).column(c).to_pylist() for c in ("id", "label"))))
    texts = dict(zip(*(read_table(cfg.table("texts"), ["walk_id", "text"]).column(c).to_pylist() for c in ("walk_id", "text"))))
    out = {}
    for w in read_table(cfg.table("walks"), ["walk_id", "root", "kind", "nodes", "rels", "inverse"]).to_pylist():
        out[w["walk_id"]] = w | {"text": texts[w["walk_id"]], "node_labels": [entities[n] for n in w["nodes"]],
                                 "rel_labels": [relations[r] for r in w["rels"]]}
    return out


def test_walk_hits_show_the_tables_rows_while_points_carry_ids_only(tmp_path):
    cfg = built_config(tmp_path)
    walks = expected_walks(cfg)
    store = open_store(cfg)
    _, walks_c = collection_names(cfg)
    _, _, payloads = store.retrieve(walks_c, np.array(sorted(walks), np.int64))
    assert payloads == [{"root": walks[i]["root"]} for i in sorted(walks)]  # the walk id is the point id
    store.close()
    retriever = Retriever(cfg)
    seen = 0
    for question in ("who directed Kismet", "which films starred Marlene Dietrich", "Shanghai Express director"):
        for node in retriever.retrieve(question, k_nodes=3, k_walks=10).nodes:
            for hit in node.walks:
                w = walks[hit.walk_id]
                assert w["root"] == node.id and (hit.kind, hit.text, hit.nodes, hit.node_labels) == (w["kind"], w["text"], w["nodes"], w["node_labels"])
                assert hit.triples == walk_triples(w["node_labels"], w["rel_labels"], w["inverse"])
                assert hit.signature == signature(w["rel_labels"], w["inverse"])
                seen += 1
    assert seen >= 9
    retriever.close()


def walk_roots(cfg) -> dict[int, int]:
    return dict(zip(*(read_table(cfg.table("walks"), ["walk_id", "root"]).column(c).to_pylist() for c in ("walk_id", "root"))))


def index_reflects(cfg) -> dict:
    store = open_store(cfg)
    try:
        return store.reflects()
    finally:
        store.close()


def test_records_read_from_the_tables_or_remade_from_the_graph_equal_those_held_in_memory(tmp_path, monkeypatch):
    """A one-shot reader (`kgwalk query`) reads only its hits' rows, and the graph source makes its hits'
    roots' walks and sentences again: the very same records, in the order asked, repeated ids included;
    a missing id is an error every way."""
    cfg = built_config(tmp_path)
    roots = walk_roots(cfg)
    ids = sorted(roots)
    reflects = index_reflects(cfg)
    held, tables, graph = WalkRecords(cfg, "memory"), WalkRecords(cfg, "tables"), WalkRecords(cfg, "graph")
    for records in (held, tables, graph):
        records.sync(reflects)
    assert graph.graph is not None and held.graph is None and tables.graph is None
    rows_read = []  # the walk ids each lookup read from the tables
    monkeypatch.setattr(records_module, "read_rows", lambda *a, **kw: rows_read.append(list(kw.get("values", []))) or read_rows(*a, **kw))
    asked = [ids[3], ids[0], ids[-1], ids[3]]
    assert graph.lookup(ids, [roots[i] for i in ids]).to_pylist() == held.lookup(ids).to_pylist() and rows_read == []  # all remade, none read
    for records in (tables, graph):
        assert records.lookup(asked, [roots[i] for i in asked]).to_pylist() == held.lookup(asked).to_pylist()
        assert records.lookup(ids, [roots[i] for i in ids]).to_pylist() == held.lookup(ids).to_pylist() and records.lookup([], []).to_pylist() == []
    assert [r["walk_id"] for r in graph.lookup(asked, [roots[i] for i in asked]).to_pylist()] == asked
    assert graph.lookup(asked).to_pylist() == held.lookup(asked).to_pylist()  # no roots: read from the tables
    wrong_roots = [roots[ids[0]]] * len(ids)  # walks the graph does not remake from these roots are read
    rows_read.clear()
    assert graph.lookup(ids, wrong_roots).to_pylist() == held.lookup(ids).to_pylist()
    assert sorted(rows_read[0]) == sorted(i for i in ids if roots[i] != roots[ids[0]])
    for records in (held, tables, graph):
        with pytest.raises(KgwalkError, match="run `kgwalk index`"):
            records.lookup([ids[0], 12345], [roots[ids[0]]] * 2)


def test_the_graph_source_makes_the_sentences_of_the_configured_phrases(tmp_path):
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    cfg = corpus.config(tmp_path, kg, ["query.node_search=dense", "query.rerank=none", "verbalize.phrases.directed_by=[was made by, made]"])
    corpus.build_in_process(cfg)
    roots = walk_roots(cfg)
    ids = sorted(roots)
    records = WalkRecords(cfg, "graph")
    records.sync(index_reflects(cfg))
    texts = [r["text"] for r in records.lookup(ids, [roots[i] for i in ids]).to_pylist()]
    assert any("was made by William Dieterle" in t for t in texts)
    assert texts == [expected_walks(cfg)[i]["text"] for i in ids]


def test_auto_remakes_template_walks_else_holds_records_in_memory_where_they_fit_else_reads_tables(tmp_path):
    cfg = built_config(tmp_path)
    source = lambda *settings: record_source(corpus.config(tmp_path, None, list(settings)))  # noqa: E731
    model = "verbalize.verbalizer=openai"  # a model's sentences cannot be made again
    assert source() == "graph" and source("query.records_memory_mib=0") == "graph"
    assert len(walk_roots(cfg)) * RECORD_BYTES <= 2**20 and source(model, "query.records_memory_mib=1") == "memory"
    assert source(model, "query.records_memory_mib=0") == "tables"  # what the 10M-edge KG's 64M walks are to 2 GiB
    assert source("query.records=tables") == "tables" and source("query.records=memory") == "memory"
    with pytest.raises(KgwalkError, match="query.records=graph makes the template's sentences"):
        record_source(corpus.config(tmp_path, None, ["query.records=graph", model]))
    with pytest.raises(KgwalkError, match="query.records=graph makes the template's sentences"):
        WalkRecords(corpus.config(tmp_path, None, [model]), "graph")
    retriever = Retriever(corpus.config(tmp_path, None, ["query.node_search=dense", "query.rerank=none"]))
    try:
        assert retriever.records.source == "graph"
        hits = [h for node in retriever.retrieve("who directed Kismet", k_nodes=3, k_walks=10).nodes for h in node.walks]
        assert hits and retriever.records._table is None  # no walk held in memory
        walks = expected_walks(cfg)
        assert all((h.text, h.node_labels) == (walks[h.walk_id]["text"], walks[h.walk_id]["node_labels"]) for h in hits)
        assert retriever.answer_sets.graph is retriever.records.graph  # one graph, not two
    finally:
        retriever.close()


def test_walks_scored_from_the_graph_rank_as_the_index_search_ranks_them(tmp_path, monkeypatch):
    """query.walk_search=graph: each top node's walks made again from the graph, their sentences embedded now, scored
    by their exact cosines with the question; the same walks, in the same order, as the index search of their walk
    points (vectors stored as float32 here: the same cosines), and no walk point read."""
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    settings = ["query.node_search=dense", "query.rerank=none", "index.vector_datatype=float32"]  # the walks stored exactly
    corpus.build_in_process(corpus.config(tmp_path, kg, settings))
    by_index = Retriever(corpus.config(tmp_path, kg, [*settings, "query.walk_search=index"]))
    by_graph = Retriever(corpus.config(tmp_path, kg, [*settings, "query.walk_search=graph"]))
    # films with one edge from the graph, the rest (two adjacency entries) from the index
    mixed = Retriever(corpus.config(tmp_path, kg, [*settings, "query.walk_search=graph", "query.walk_search_max_degree=1", "query.hub_walks=index"]))
    assert not by_index.walks_from_graph and by_graph.walks_from_graph
    searched: dict[str, list[str]] = {"graph": [], "mixed": []}
    remade: list[list[int]] = []
    for name, retriever in (("graph", by_graph), ("mixed", mixed)):
        real_search = retriever.store.search
        monkeypatch.setattr(retriever.store, "search", lambda c, *a, real=real_search, seen=searched[name], **kw: seen.append(c) or real(c, *a, **kw))
    real_made = mixed.records.made
    monkeypatch.setattr(mixed.records, "made", lambda roots: remade.append(list(roots)) or real_made(roots))
    try:
        shown = 0
        for question in ("who directed Kismet", "which films starred Marlene Dietrich", "Shanghai Express director"):
            a, b, c = (r.retrieve(question, k_nodes=3, k_walks=4) for r in (by_index, by_graph, mixed))
            assert [n.id for n in a.nodes] == [n.id for n in b.nodes] == [n.id for n in c.nodes]
            for x, y, z in zip(a.nodes, b.nodes, c.nodes):
                assert [(w.walk_id, w.text, w.nodes) for w in x.walks] == [(w.walk_id, w.text, w.nodes) for w in y.walks] == [
                    (w.walk_id, w.text, w.nodes) for w in z.walks]
                assert np.allclose([w.score for w in x.walks], [w.score for w in y.walks], atol=1e-5)
                shown += len(y.walks)
            q = by_graph.embedder.encode([question])[0]
            exact = by_graph.embedder.encode([w.text for n in b.nodes for w in n.walks]) @ q
            assert np.allclose([w.score for n in b.nodes for w in n.walks], exact, atol=1e-6)
            assert {"walk_search", "walk_records"} <= set(b.timings_ms)
        assert shown >= 9 and by_graph.walks_collection not in searched["graph"] and by_graph.nodes_collection in searched["graph"]
        films = {i for i, label in zip(*(read_table(corpus.config(tmp_path, kg).table("entities"), ["id", "label"]).column(k).to_pylist()
                                         for k in ("id", "label"))) if label in ("Shanghai Express", "The Devil and Daniel Webster")}
        assert len(films) == 2 and remade and {r for roots in remade for r in roots} <= films and mixed.walks_collection in searched["mixed"]
    finally:
        for retriever in (by_index, by_graph, mixed):
            retriever.close()


def test_walk_search_auto_scores_from_the_graph_only_where_records_are_remade_and_the_model_is_static(tmp_path):
    cfg = built_config(tmp_path)
    retriever = Retriever(cfg)  # a hashing model: its sentences are cheap, but auto keeps graph search to static models
    one_shot = Retriever(corpus.config(tmp_path, None, ["query.walk_search=graph"]), records="tables")  # `kgwalk query`'s reader
    try:
        assert retriever.records.source == "graph" and not retriever.walks_from_graph
        hits = one_shot.retrieve("who directed Kismet", k_nodes=2, k_walks=3).nodes
        assert one_shot.walks_from_graph and one_shot.records.walks_of([hits[0].id]) is None  # holds no graph: the index searched
        assert all(w.walk_id in expected_walks(cfg) for n in hits for w in n.walks) and any(n.walks for n in hits)
    finally:
        retriever.close()
        one_shot.close()
    with pytest.raises(KgwalkError, match="query.walk_search=graph embeds the template's sentences"):
        Retriever(corpus.config(tmp_path, None, ["query.walk_search=graph", "verbalize.verbalizer=openai"]))


@pytest.mark.parametrize("source", ["memory", "tables", "graph"])
def test_records_follow_the_versions_the_index_reflects(tmp_path, source):
    """After a refresh, records synced to the old index version still show its walks (a reader
    on the old generation), and the new version's walks only at the new version."""
    cfg = built_config(tmp_path)
    old_walks = expected_walks(cfg)
    old_reflects = index_reflects(cfg)
    changes = tmp_path / "changes.txt"
    changes.write_text("Kismet|directed_by|William Dieterle|remove\nKismet|written_by|Edward Knoblock|add\n")
    run_refresh(cfg, str(changes))
    new_walks = expected_walks(cfg)
    new_reflects = index_reflects(cfg)
    gone, added = sorted(set(old_walks) - set(new_walks)), sorted(set(new_walks) - set(old_walks))
    assert gone and added and new_reflects != old_reflects

    records = WalkRecords(cfg, source)
    records.sync(old_reflects)
    assert [r["text"] for r in records.lookup(gone, [old_walks[i]["root"] for i in gone]).to_pylist()] == [old_walks[i]["text"] for i in gone]
    with pytest.raises(KgwalkError, match="run `kgwalk index`"):
        records.lookup(added, [new_walks[i]["root"] for i in added])
    records.sync(new_reflects)
    shown = records.lookup(added, [new_walks[i]["root"] for i in added]).to_pylist()
    assert [(r["text"], r["node_labels"]) for r in shown] == [(new_walks[i]["text"], new_walks[i]["node_labels"]) for i in added]
    assert any("written_by" in r["rel_labels"] for r in shown)
    with pytest.raises(KgwalkError, match="run `kgwalk index`"):
        records.lookup(gone, [old_walks[i]["root"] for i in gone])


def test_hub_walks_cached_once_per_walks_version_score_as_the_graph_remakes_them(tmp_path, monkeypatch):
    """query.hub_walks=cache: the walks of roots past walk_search_max_degree made once with their vectors, in the
    user's cache; a question scores them there: the same walks, sentences and exact cosines as remaking every node's
    walks, no walk point read and no hub's walks remade. A second reader loads the entry; a refresh makes a new one
    (the index answers for hubs until it is ready) and removes the old."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    settings = ["query.node_search=dense", "query.rerank=none", "query.walk_search=graph"]
    corpus.build_in_process(corpus.config(tmp_path, kg, settings))
    hub_settings = [*settings, "query.walk_search_max_degree=1"]  # the directors, actors and two films: hubs
    by_graph, cached = Retriever(corpus.config(tmp_path, kg, settings)), Retriever(corpus.config(tmp_path, kg, hub_settings))
    made, ready = [], threading.Event()
    ready.set()
    real_make = hub_walks_module._make
    monkeypatch.setattr(hub_walks_module, "_make", lambda *a: made.append(a[2]) or ready.wait(60) and real_make(*a))
    searched: list[str] = []
    real_search = cached.store.search
    monkeypatch.setattr(cached.store, "search", lambda c, *a, **kw: searched.append(c) or real_search(c, *a, **kw))
    try:
        assert by_graph.hub_walks is None  # no root past 1,000 entries
        cached.warm_up()  # its question starts the making and finds hubs' walks in the index; it waits for them
        hubs = cached.hub_walks.result()
        searched.clear()
        labels = dict(zip(*(read_table(corpus.config(tmp_path, kg).table("entities"), ["id", "label"]).column(k).to_pylist() for k in ("id", "label"))))
        assert len(made) == 1 and sorted(labels[r] for r in hubs.roots) == [
            "Blonde Venus", "Josef von Sternberg", "Kismet", "Marlene Dietrich", "William Dieterle"]
        # a hub's candidates: its best walk by cosine, then the best of a relation path that one lacks (at most as many
        # more as fetched), as the graph's are chosen
        q = cached.embedder.encode(["who directed Kismet"])[0]
        for at, root in enumerate(hubs.roots.tolist()):
            rows = np.arange(hubs.starts[at], hubs.starts[at + 1])
            walks, scores = hubs.best(q, {root: [root]}, {root: 1})
            assert len(set(hubs.paths[rows].tolist())) > 1 and len(walks) == 2 and len(set(path_keys(walks).tolist())) == 2
            assert scores.max() == pytest.approx((hubs.vectors[rows] @ q).max())
            every, _ = hubs.best(q, {root: [root]}, {root: 1}, every_path={root})  # a topic the prior reranks: each path's best
            assert sorted(path_keys(every).tolist()) == sorted(set(hubs.paths[rows].tolist()))
        remade: list[list[int]] = []
        real_made = cached.records.made
        monkeypatch.setattr(cached.records, "made", lambda roots: remade.append(list(roots)) or real_made(roots))
        for question in ("who directed Kismet", "which films starred Marlene Dietrich", "Josef von Sternberg films"):
            a, b = by_graph.retrieve(question, k_nodes=3, k_walks=4), cached.retrieve(question, k_nodes=3, k_walks=4)
            assert [n.id for n in a.nodes] == [n.id for n in b.nodes]
            assert any(n.id in set(hubs.roots.tolist()) and n.walks for n in b.nodes)
            for x, y in zip(a.nodes, b.nodes):
                assert [(w.walk_id, w.text, w.nodes, w.signature) for w in x.walks] == [(w.walk_id, w.text, w.nodes, w.signature) for w in y.walks]
                assert np.allclose([w.score for w in x.walks], [w.score for w in y.walks], atol=1e-6)
        assert cached.walks_collection not in searched and not {r for roots in remade for r in roots} & set(hubs.roots.tolist())

        again = Retriever(corpus.config(tmp_path, kg, hub_settings))
        again.warm_up()
        assert len(made) == 1 and again.hub_walks.result().folder == hubs.folder  # loaded, not made again
        again.close()

        changes = tmp_path / "changes.txt"
        changes.write_text("Kismet|written_by|Edward Knoblock|add\n")
        run_refresh(corpus.config(tmp_path, kg, hub_settings), str(changes))
        searched.clear()
        ready.clear()  # the new entry is made only once this question has been answered
        cached.retrieve("who wrote Kismet", k_nodes=2, k_walks=4)  # moves the records on; starts the new entry's making
        assert cached.walks_collection in searched  # hubs' walks from the index meanwhile
        ready.set()
        refreshed = cached.hub_walks.result()
        assert len(made) == 2 and refreshed.folder != hubs.folder and refreshed.folder.parent == hubs.folder.parent
        assert not hubs.folder.exists() and [p for p in refreshed.folder.parent.iterdir() if p.is_dir()] == [refreshed.folder]
        searched.clear()
        shown = cached.retrieve("who wrote Kismet", k_nodes=2, k_walks=4)
        assert cached.walks_collection not in searched and any("Edward Knoblock" in w.text for n in shown.nodes for w in n.walks)
    finally:
        by_graph.close()
        cached.close()


def test_hub_walks_that_cannot_be_cached_are_one_line_and_hubs_are_searched_in_the_index(tmp_path, monkeypatch, capfd):
    """A cache folder that cannot be made (here a file stands where it would go): the warm-up says so in one line, and
    hubs' walks come from the index, as query.hub_walks=index finds them."""
    blocked = tmp_path / "cache"
    blocked.write_text("a file, not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    settings = ["query.node_search=dense", "query.rerank=none", "query.walk_search=graph", "query.walk_search_max_degree=1"]
    corpus.build_in_process(corpus.config(tmp_path, kg, settings))
    cached, by_index = (Retriever(corpus.config(tmp_path, kg, [*settings, f"query.hub_walks={h}"])) for h in ("cache", "index"))
    try:
        cached.warm_up()
        assert capfd.readouterr().err.count("hub walks not cached") == 1
        searched: list[str] = []
        real_search = cached.store.search
        monkeypatch.setattr(cached.store, "search", lambda c, *a, **kw: searched.append(c) or real_search(c, *a, **kw))
        a, b = cached.retrieve("who directed Kismet", k_nodes=3, k_walks=4), by_index.retrieve("who directed Kismet", k_nodes=3, k_walks=4)
        assert cached.walks_collection in searched
        assert [[w.walk_id for w in n.walks] for n in a.nodes] == [[w.walk_id for w in n.walks] for n in b.nodes]
    finally:
        cached.close()
        by_index.close()
