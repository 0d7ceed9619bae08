"""Entity alignment (ingest.align): candidate duplicates by label, linked by neighbour overlap under
the user's threshold, the review table and its decisions, and node search folding aliases."""

import csv

import pyarrow as pa
import pytest

import corpus
from kgwalk.cli import main
from kgwalk.errors import KgwalkError
from kgwalk.kg.align import align, alignment_key, links, read_overrides, write_review
from kgwalk.query import Retriever

KG = [("Underground", "directed_by", "Emir Kusturica"), ("Arizona Dream", "directed_by", "Emir Kusturica"),
      ("Black Cat", "directed_by", "Emir Kusturica"),
      ("Underground", "has_tags", "emir kusturica"), ("Arizona Dream", "has_tags", "emir kusturica"),
      ("Time of the Gypsies", "has_tags", "emir kusturica"),  # only the tag knows this one
      ("Chocolate", "directed_by", "Lasse Hallstrom"), ("Sweet Film", "has_tags", "chocolate"),
      ("Kismet (1944 film)", "directed_by", "William Dieterle"), ("Kismet", "directed_by", "Vincente Minnelli"),
      ("Lasse Hallstrom", "born_in", "Stockholm")]


def tables(triples):
    entities = sorted({x for h, _, t in triples for x in (h, t)})
    eid = {e: i for i, e in enumerate(entities)}
    return (pa.table({"id": list(eid.values()), "label": entities}),
            pa.table({"src": [eid[h] for h, _, _ in triples], "dst": [eid[t] for _, _, t in triples]}), eid)


def pairs(alignment):
    return {(r["alias_label"], r["canonical_label"]): (r["score"], r["status"]) for r in alignment.to_pylist()}


def test_alignment_keys_ignore_case_underscores_punctuation_and_qualifiers():
    assert alignment_key("Emir_Kusturica") == alignment_key("emir kusturica") == alignment_key("Emir Kusturica!")
    assert alignment_key("Kismet (1944 film)") == alignment_key("Kismet")
    assert alignment_key("Kismet") != alignment_key("Kismet Returns")


def test_candidates_are_linked_by_shared_neighbours_under_the_threshold():
    entities, edges, eid = tables(KG)
    found = pairs(align(entities, edges, threshold=0.5))
    # the tag shares 2 of its 3 films with the director (2 / min(3, 3)); the capitalized name is canonical
    assert found[("emir kusturica", "Emir Kusturica")] == (pytest.approx(2 / 3, abs=1e-6), "linked")
    assert found[("chocolate", "Chocolate")] == (0.0, "candidate")  # a tag and a film of one name
    assert found[("Kismet (1944 film)", "Kismet")][1] == "candidate"  # two films: nothing shared (the lower id is canonical)
    assert len(found) == 3
    assert pairs(align(entities, edges, threshold=0.9))[("emir kusturica", "Emir Kusturica")][1] == "candidate"
    assert links(align(entities, edges, 0.5)) == {eid["emir kusturica"]: eid["Emir Kusturica"]}


def test_review_decisions_override_the_score(tmp_path):
    entities, edges, eid = tables(KG)
    review = tmp_path / "_alignment.csv"
    write_review(align(entities, edges, 0.5), review)
    rows = list(csv.DictReader(review.open()))
    assert [r["status"] for r in rows] == ["linked", "candidate", "candidate"]  # linked first, then by score
    for row in rows:  # the user rejects the tag link and accepts a pair the rule never proposed
        row["decision"] = "reject" if row["alias"] == "emir kusturica" else ""
    rows.append({"status": "", "score": "", "alias": "Stockholm", "canonical": "Lasse Hallstrom", "decision": "accept"})
    with review.open("w", newline="") as f:
        writer = csv.DictWriter(f, ["status", "score", "alias", "canonical", "decision"])
        writer.writeheader()
        writer.writerows(rows)
    decided = align(entities, edges, 0.5, read_overrides(review))
    assert pairs(decided)[("emir kusturica", "Emir Kusturica")][1] == "rejected"
    assert pairs(decided)[("Stockholm", "Lasse Hallstrom")][1] == "accepted"
    assert links(decided) == {eid["Stockholm"]: eid["Lasse Hallstrom"]}
    bad = tmp_path / "bad.csv"
    bad.write_text("alias,canonical,decision\nchocolate,Chocolate,maybe\n")
    with pytest.raises(KgwalkError, match="bad.csv:2: decision must be accept or reject"):
        read_overrides(bad)
    with pytest.raises(KgwalkError, match="no file"):
        read_overrides(tmp_path / "missing.csv")


def test_accepted_chains_are_followed_and_cycles_stop():
    alignment = pa.table({"alias": [1, 2, 4, 5], "canonical": [2, 3, 5, 4], "status": ["linked", "accepted", "accepted", "accepted"]})
    assert links(alignment) == {1: 3, 2: 3}


def test_a_bad_decisions_file_is_one_line_before_anything_is_written(tmp_path, capsys):
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in KG))
    with pytest.raises(SystemExit) as exit_:
        main(["ingest", "--kg", str(kg), "--warehouse", str(tmp_path / "wh"), "--name", "a",
              "--set", "ingest.align=true", "--set", f"ingest.align_overrides={tmp_path / 'none.csv'}"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().startswith("kgwalk: error: ingest.align_overrides: no file")
    assert not (tmp_path / "wh" / "a" / "edges").exists()


@pytest.fixture(scope="module")
def aligned_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("align")
    kg = folder / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in KG))
    cfg = corpus.config(folder, kg, ["ingest.align=true"])
    corpus.build_in_process(cfg)
    return folder, kg


def test_node_search_folds_aliases_into_their_entity(aligned_corpus):
    folder, kg = aligned_corpus
    assert "same_as" not in (folder / "t" / "_alignment.csv").read_text()  # written by ingest: a review, not edges
    assert "emir kusturica,Emir Kusturica" in (folder / "t" / "_alignment.csv").read_text()
    question = "which films are about emir kusturica"
    plain = Retriever(corpus.config(folder, kg, ["query.k_walks=20"]))
    aligned = Retriever(corpus.config(folder, kg, ["ingest.align=true", "query.k_walks=20"]))
    before = [n.label for n in plain.retrieve(question, k_nodes=4).nodes]
    after = aligned.retrieve(question, k_nodes=4).nodes
    assert {"Emir Kusturica", "emir kusturica"} <= set(before)           # the two compete for the k slots
    labels = [n.label for n in after]
    assert "emir kusturica" not in labels and labels.count("Emir Kusturica") == 1
    entity = next(n for n in after if n.label == "Emir Kusturica")
    assert entity.matched
    ends = {w.node_labels[-1] for w in entity.walks}
    assert {"Time of the Gypsies", "Black Cat"} <= ends                  # the alias's walks and its own
    # dense search alone folds too
    dense = Retriever(corpus.config(folder, kg, ["ingest.align=true", "query.node_search=dense"]))
    assert "emir kusturica" not in [n.label for n in dense.retrieve(question, k_nodes=6).nodes]
    for r in (plain, aligned, dense):
        r.close()
