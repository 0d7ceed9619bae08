"""Walk points carry ids only; a reader shows walks from the Delta tables at the versions its index
reflects (kgwalk.index.records): what a hit shows is what the tables said when the index was built."""

from pathlib import Path

import numpy as np
import pytest

import corpus
from kgwalk.errors import KgwalkError
from kgwalk.index.records import WalkRecords
from kgwalk.index.store import collection_names, open_store
from kgwalk.query.retriever import Retriever
from kgwalk.refresh.job import run_refresh
from kgwalk.storage import read_table
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


def test_records_read_on_demand_equal_those_held_in_memory(tmp_path):
    """A one-shot reader (`kgwalk query`) reads only its hits' rows: the very same records, in the
    order asked, repeated ids included; a missing id is an error either way."""
    cfg = built_config(tmp_path)
    ids = sorted(expected_walks(cfg))
    store = open_store(cfg)
    reflects = store.reflects()
    store.close()
    held, on_demand = WalkRecords(cfg), WalkRecords(cfg, on_demand=True)
    for records in (held, on_demand):
        records.sync(reflects)
    asked = [ids[3], ids[0], ids[-1], ids[3]]
    assert on_demand.lookup(asked) == held.lookup(asked) and [r["walk_id"] for r in on_demand.lookup(asked)] == asked
    assert on_demand.lookup(ids) == held.lookup(ids) and on_demand.lookup([]) == []
    for records in (held, on_demand):
        with pytest.raises(KgwalkError, match="run `kgwalk index`"):
            records.lookup([ids[0], 12345])


@pytest.mark.parametrize("on_demand", [False, True])
def test_records_follow_the_versions_the_index_reflects(tmp_path, on_demand):
    """After a refresh, records synced to the old index version still show its walks (a reader
    on the old generation), and the new version's walks only at the new version."""
    cfg = built_config(tmp_path)
    old_walks = expected_walks(cfg)
    store = open_store(cfg)
    old_reflects = store.reflects()
    store.close()
    changes = tmp_path / "changes.txt"
    changes.write_text("Kismet|directed_by|William Dieterle|remove\nKismet|written_by|Edward Knoblock|add\n")
    run_refresh(cfg, str(changes))
    new_walks = expected_walks(cfg)
    store = open_store(cfg)
    new_reflects = store.reflects()
    store.close()
    gone, added = sorted(set(old_walks) - set(new_walks)), sorted(set(new_walks) - set(old_walks))
    assert gone and added and new_reflects != old_reflects

    records = WalkRecords(cfg, on_demand=on_demand)
    records.sync(old_reflects)
    assert [r["text"] for r in records.lookup(gone)] == [old_walks[i]["text"] for i in gone]
    with pytest.raises(KgwalkError, match="run `kgwalk index`"):
        records.lookup(added)
    records.sync(new_reflects)
    assert [(r["text"], r["node_labels"]) for r in records.lookup(added)] == [(new_walks[i]["text"], new_walks[i]["node_labels"]) for i in added]
    with pytest.raises(KgwalkError, match="run `kgwalk index`"):
        records.lookup(gone)
