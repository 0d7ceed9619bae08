"""Ingest of every format; malformed lines land in `rejected` with line numbers and reasons."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import assign_ids, hash64, normalize_label
from kgwalk.kg.ingest import ingest
from kgwalk.kg.readers import read_kg
from kgwalk.storage import read_table


def write(tmp_path, name, data: bytes | str):
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return p


def triples(result):
    return sorted((h, r, t) for _, h, r, t in result.triples)


def rejected(result):
    return [(line, reason) for line, reason, _ in result.rejected]


def test_pipe_format_with_malformed_lines(tmp_path):
    p = write(
        tmp_path,
        "kb.txt",
        b"Kismet|directed_by|William Dieterle\n"
        b"Kismet|starred_actors\n"  # 2 fields
        b"\n"
        b"|written_by|Edward Knoblock\n"  # empty head
        b"Kismet|release_year|1944\r\n"  # CRLF
        b"Bad\xff|r|x\n"  # invalid UTF-8
        b"Kismet|has_tags|a|b\n"  # 4 fields
        b"Kismet|directed_by|William   Dieterle\n",  # duplicate after whitespace normalization
    )
    r = read_kg(p)
    assert triples(r) == [
        ("Kismet", "directed_by", "William Dieterle"),
        ("Kismet", "directed_by", "William Dieterle"),
        ("Kismet", "release_year", "1944"),
    ]
    assert rejected(r) == [
        (2, "expected 3 fields, found 2"),
        (4, "empty head"),
        (6, "invalid UTF-8 at byte 3"),
        (7, "expected 3 fields, found 4"),
    ]
    assert r.blank_lines == 1


def test_tsv_format_and_bom(tmp_path):
    p = write(tmp_path, "kb.tsv", "\ufeffa\trel\tb\nb\trel\tc\nc rel d\n")
    r = read_kg(p)
    assert triples(r) == [("a", "rel", "b"), ("b", "rel", "c")]
    assert rejected(r) == [(3, "expected 3 fields, found 1")]


@pytest.mark.parametrize("name, data, reasons", [
    ("c.txt", "too|few\nf|f|f|f|f\na\tr\tb\tadd\na|r|b|add\na|r|b|frob\n",
     [(1, "expected 4 fields, found 2"), (2, "expected 4 fields, found 5"),
      (3, "expected 4 fields, found 1 (tab-separated? pass --format tsv)"), (5, "op must be add or remove, found 'frob'")]),
    ("c.tsv", "a|r|b|add\na\tr\tb\tadd\nx\ty\n", [(1, "expected 4 fields, found 1 (pipe-separated? pass --format pipe)"), (3, "expected 4 fields, found 2")]),
])
def test_change_set_lines_with_the_wrong_number_of_fields_say_so(tmp_path, name, data, reasons):
    """A change-set line is head, relation, tail, op: a short or long one was read as a triple
    with an empty op ("op must be add or remove, found ''")."""
    r = read_kg(write(tmp_path, name, data), with_op=True)
    assert rejected(r) == reasons
    assert triples(r) == [("a", "r", "b")] and r.ops == ["add"]


def test_csv_with_header_and_quoting(tmp_path):
    p = write(
        tmp_path,
        "kb.csv",
        'subject,predicate,object\n"Black Cat, White Cat",directed_by,Emir Kusturica\n'
        'x,y\n"a ""quoted"" title",has_genre,Drama\n',
    )
    r = read_kg(p)
    assert triples(r) == [
        ("Black Cat, White Cat", "directed_by", "Emir Kusturica"),
        ('a "quoted" title', "has_genre", "Drama"),
    ]
    assert rejected(r) == [(3, "expected 3 fields, found 2")]


def test_csv_without_known_columns_is_a_clear_error(tmp_path):
    p = write(tmp_path, "kb.csv", "foo,bar,baz\n1,2,3\n")
    with pytest.raises(KgwalkError, match="no 'head' column"):
        read_kg(p)


def test_ntriples_iris_literals_labels_and_bad_lines(tmp_path):
    p = write(
        tmp_path,
        "kb.nt",
        "<http://ex.org/Kismet> <http://ex.org/directed_by> <http://ex.org/William_Dieterle> .\n"
        '<http://ex.org/Kismet> <http://ex.org/release_year> "1944"^^<http://www.w3.org/2001/XMLSchema#gYear> .\n'
        '<http://ex.org/Kismet> <http://www.w3.org/2000/01/rdf-schema#label> "Kismet (1944)"@en .\n'
        "# a comment\n"
        "<http://ex.org/Kismet> <http://ex.org/directed_by> .\n"
        '"lit" <http://ex.org/p> <http://ex.org/o> .\n'
        '_:b1 <http://ex.org/note> "line\\nbreak \\u00e9" .\n',
    )
    r = read_kg(p)
    assert triples(r) == [
        ("_:b1", "http://ex.org/note", "line break é"),
        ("http://ex.org/Kismet", "http://ex.org/directed_by", "http://ex.org/William_Dieterle"),
        ("http://ex.org/Kismet", "http://ex.org/release_year", "1944"),
    ]
    assert rejected(r) == [
        (5, "not a valid N-Triples statement"),
        (6, "literal or blank node in subject/predicate position"),
    ]
    assert r.labels["http://ex.org/Kismet"] == "Kismet (1944)"  # rdfs:label beats the local name
    assert r.labels["http://ex.org/William_Dieterle"] == "William Dieterle"
    assert r.labels["http://ex.org/directed_by"] == "directed by"


def test_parquet_with_nulls(tmp_path):
    p = tmp_path / "kb.parquet"
    pq.write_table(pa.table({"head": ["a", None, "c"], "relation": ["r", "r", "r"], "tail": ["b", "x", ""]}), p)
    r = read_kg(p)
    assert triples(r) == [("a", "r", "b")]
    assert rejected(r) == [(2, "missing head"), (3, "empty tail")]


def test_unreadable_parquet_is_a_clear_error(tmp_path):
    p = write(tmp_path, "kb.parquet", b"not parquet at all")
    with pytest.raises(KgwalkError, match="not a readable Parquet file"):
        read_kg(p)


def test_long_labels_and_control_characters_are_rejected(tmp_path):
    p = write(tmp_path, "kb.txt", "a|r|" + "x" * 50 + "\na|r|b\x00c\n")
    r = read_kg(p, max_label_length=20)
    assert rejected(r) == [(1, "tail longer than 20 characters"), (2, "control character in tail")]


def test_ingest_writes_delta_tables(tmp_path):
    p = write(tmp_path, "kb.txt", "Kismet|directed_by|William Dieterle\nKismet|directed_by|William Dieterle\nbad line\n")
    result = ingest(p, tmp_path / "wh")
    assert result.duplicates == 1
    edges = read_table(tmp_path / "wh" / "edges").to_pylist()
    assert edges == [{"src": hash64("Kismet"), "rel": hash64("directed_by"), "dst": hash64("William Dieterle")}]
    entities = read_table(tmp_path / "wh" / "entities").sort_by("label").to_pylist()
    assert [e["label"] for e in entities] == ["Kismet", "William Dieterle"]
    bad = read_table(tmp_path / "wh" / "rejected").to_pylist()
    assert bad == [{"source": str(p), "line": 3, "reason": "expected 3 fields, found 1", "text": "bad line"}]
    assert "1 rejected" in result.summary() and "1 duplicate" in result.summary()


def test_file_with_no_valid_triples_is_a_clear_error(tmp_path):
    p = write(tmp_path, "kb.txt", "only|two\n")
    with pytest.raises(KgwalkError, match="no valid triples"):
        ingest(p, tmp_path / "wh")


def test_ids_are_stable_and_collisions_detected():
    assert hash64("Kismet") == hash64(normalize_label("  Kismet "))
    assert hash64("Kismet") == -2697222949134220117  # recorded once: ids must never change across versions
    assert hash64("Kismet") != hash64("kismet")
    with pytest.raises(KgwalkError, match="id collision"):
        assign_ids(["a", "b"], "entities", hasher=lambda key: 7)
