"""What a query derives from whole tables (the label lexicon, the corpus's relation paths) is
computed once per table version and code, kept in the user cache, computed again when a table
moves on, its code changes or its entry is broken, and a retriever reading it retrieves exactly
as one computing it."""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa
import pytest

import corpus
from kgwalk.kg import ids as kg_ids
from kgwalk.query import Retriever
from kgwalk.query.lexicon import EntityLexicon, read_lexicon
from kgwalk.query.corpus_paths import corpus_paths, read_corpus_paths
from kgwalk.query.table_cache import MAX_ENTRIES, cached_arrays
from kgwalk.storage import read_table, write_table

KG = [("Kismet (1944 film)", "directed_by", "William Dieterle"), ("Kismet", "starred_actors", "Marlene Dietrich"),
      ("Juarez", "directed_by", "William Dieterle"), ("Juarez", "written_by", "John Huston"), ("artist", "is_a", "tag")]


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "kgwalk" / "tables"


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    return corpus.config(corpus.built_kg(tmp_path_factory.mktemp("kg"), KG)[0])


def counted(compute):
    """`compute`, counting its calls in `.calls`."""

    def call(versions):
        call.calls += 1
        return compute(versions)

    call.calls = 0
    return call


def test_computed_once_per_table_version(cache, tmp_path):
    path = str(tmp_path / "t")
    write_table(path, pa.table({"x": np.arange(3)}))
    compute = counted(lambda versions: {"sum": np.array([read_table(path).column("x").to_numpy().sum()]), "version": np.array([versions[path]])})
    first = cached_arrays("sums", [path], [sys.modules[__name__]], compute)
    again = cached_arrays("sums", [path], [sys.modules[__name__]], compute)
    assert compute.calls == 1 and first["sum"][0] == again["sum"][0] == 3 and again["version"][0] == 0
    write_table(path, pa.table({"x": np.arange(5)}))  # version 1
    moved = cached_arrays("sums", [path], [sys.modules[__name__]], compute)
    assert compute.calls == 2 and moved["sum"][0] == 10 and moved["version"][0] == 1
    assert len(list(cache.glob("sums-*.npz"))) == 1  # version 0's entry is gone
    cached_arrays("sums", [path], [sys.modules[__name__], kg_ids], compute)  # other code: computed again
    assert compute.calls == 3


def test_a_broken_entry_is_computed_again(cache, tmp_path):
    path = str(tmp_path / "t")
    write_table(path, pa.table({"x": np.arange(4)}))
    compute = counted(lambda versions: {"x": read_table(path).column("x").to_numpy()})
    cached_arrays("xs", [path], [sys.modules[__name__]], compute)
    (entry,) = cache.glob("xs-*.npz")
    entry.write_bytes(entry.read_bytes()[:40])  # a crash mid-write that a rename would have hidden; or a full disk
    assert cached_arrays("xs", [path], [sys.modules[__name__]], compute)["x"].tolist() == [0, 1, 2, 3] and compute.calls == 2
    assert cached_arrays("xs", [path], [sys.modules[__name__]], compute)["x"].tolist() == [0, 1, 2, 3] and compute.calls == 2


def test_the_least_recently_used_entries_beyond_the_bound_go(cache, tmp_path):
    tables = []
    for i in range(MAX_ENTRIES + 2):
        tables.append(str(tmp_path / f"t{i}"))
        write_table(tables[-1], pa.table({"x": [i]}))
        cached_arrays("one", [tables[-1]], [sys.modules[__name__]], lambda versions: {"x": np.zeros(1)})
    assert len(list(cache.glob("*.npz"))) == MAX_ENTRIES


def test_the_cached_lexicon_is_the_lexicon(cache, kg):
    entities, relations = kg.table("entities"), kg.table("relations")
    built = EntityLexicon(read_table(entities, ["id", "label"]), read_table(relations, ["label"]))
    for _ in range(2):  # computed, then read back
        lexicon = read_lexicon(entities, relations)
        assert all(np.array_equal(a, b) for a, b in zip(lexicon.arrays().values(), built.arrays().values()))
        for question in ("who directed kismet", "what is an artist", "who wrote [Juarez]", "William Dieterle's films"):
            assert lexicon.mentions(question) == built.mentions(question)
    assert len(list(cache.glob("lexicon-*.npz"))) == 1


def test_the_cached_relation_paths_are_the_corpus_paths(cache, kg):
    expected = corpus_paths(read_table(kg.table("walks"), ["rels", "inverse"]), read_table(kg.table("relations"), ["id", "label"]))
    assert len(expected) > 3
    assert read_corpus_paths(kg.table("walks"), kg.table("relations")) == expected
    assert read_corpus_paths(kg.table("walks"), kg.table("relations")) == expected  # from the cache
    assert len(list(cache.glob("relation-paths-*.npz"))) == 1


def test_a_retriever_reading_the_cache_retrieves_the_same(cache, kg):
    def retrieved() -> list:
        retriever = Retriever(corpus.config(kg.root.parent, overrides=["query.rerank=synthetic"]))
        try:
            return [retriever.retrieve(q).to_json() | {"timings_ms": None} for q in ("who directed Kismet", "what did [John Huston] write")]
        finally:
            retriever.close()

    cold = retrieved()
    assert sorted(p.name.rsplit("-", 2)[0] for p in cache.glob("*.npz")) == ["category-objects", "covering-steps", "lexicon", "mirrored-relations", "relation-paths"]
    assert retrieved() == cold
