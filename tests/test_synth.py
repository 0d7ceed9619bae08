"""`kgwalk synth`: a deterministic CRAG-like KG of an exact size that ingests without a single rejection."""

import re
from collections import Counter

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from kgwalk.cli import main
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import normalize_label
from kgwalk.kg.ingest import ingest
from kgwalk.kg.readers import read_kg
from kgwalk.kg.synth import _NAME_SPACES, DOMAINS, SCHEMA, _Names, generate, parse_size, synth_kg, write_synth
from kgwalk.storage import read_table

EDGES = 20_000


@pytest.fixture(scope="module")
def graph():
    return generate(EDGES, seed=0)


@pytest.fixture(scope="module")
def triples(graph):
    return graph.to_table().to_pylist()


def degrees(graph) -> np.ndarray:
    return np.bincount(graph.heads, minlength=len(graph.labels)) + np.bincount(graph.tails, minlength=len(graph.labels))


def rows(path) -> set[tuple[str, str, str]]:
    return {tuple(r.values()) for r in pq.read_table(path).to_pylist()}


def test_same_seed_gives_the_same_file_and_another_seed_another_graph(tmp_path):
    a, b, c = tmp_path / "a.parquet", tmp_path / "b.parquet", tmp_path / "c.parquet"
    write_synth(a, 5_000, seed=7)
    write_synth(b, 5_000, seed=7)
    write_synth(c, 5_000, seed=8)
    assert a.read_bytes() == b.read_bytes()
    assert len(rows(a) & rows(c)) < 0.5 * len(rows(a))  # not a reshuffle: mostly different triples


@pytest.mark.parametrize("edges", [1, 7, 999, 5_000, 33_333])
def test_exactly_the_requested_number_of_distinct_triples(edges):
    table = synth_kg(edges, seed=1)
    assert table.schema == SCHEMA
    assert table.num_rows == edges
    assert len(set(zip(*(table.column(c).to_pylist() for c in SCHEMA.names)))) == edges


def test_all_domains_typed_relations_and_shared_literals(graph, triples):
    stats = graph.stats()
    assert set(stats.entities_by_domain) == set(DOMAINS) and min(stats.entities_by_domain.values()) > 0
    assert {"directed_by", "starred_actors", "release_year", "has_genre", "budget", "rating", "produced_by",
            "performed_by", "on_album", "release_date", "signed_to", "member_of", "plays_for", "in_league",
            "born_in", "position", "born_year", "ticker", "in_sector", "market_cap", "has_ceo",
            "headquartered_in", "share_price", "located_in", "capital_of", "founded_year", "citizen_of"} <= set(graph.relation_names)
    tails = {}
    for t in triples:
        tails.setdefault(t["relation"], []).append(t["tail"])
    assert all(re.fullmatch(r"\d{4}", y) for y in tails["release_year"] + tails["born_year"])
    assert all(re.fullmatch(r"\$\d+\.\d\d", p) for p in tails["share_price"])
    assert all(re.fullmatch(r"\d\.\d/10", r) for r in tails["rating"])
    assert all(re.fullmatch(r"\$\d+(\.\d+)?[MBT]", c) for c in tails["market_cap"])
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d", d) for d in tails["release_date"])
    # A literal is one shared node: the same year is the release year of many films and the birth year of people.
    years = Counter(tails["release_year"])
    assert years.most_common(1)[0][1] >= 20 and set(years) & set(tails["born_year"])
    # Cross-domain links: films produced by companies that also have tickers; people born in company cities.
    assert set(tails["produced_by"]) & {t["head"] for t in triples if t["relation"] == "ticker"}
    born_in_cities = {t["tail"] for t in triples if t["relation"] == "born_in" and t["head"].endswith("(actor)")}
    assert born_in_cities & set(tails["headquartered_in"])


def test_degrees_are_heavy_tailed_with_hubs_and_a_long_tail(graph):
    degree = degrees(graph)
    assert degree.min() >= 1
    assert degree.max() >= 50 * np.median(degree)
    assert (degree <= 2).mean() >= 0.4  # most entities are leaves or nearly so
    hubs = [label for label, _ in graph.stats().hubs]
    assert "Drama" in hubs  # the most popular genre is one of the five biggest hubs


def test_labels_are_unique_normalized_and_readable(graph, triples):
    labels = graph.labels.to_pylist()
    assert len(set(labels)) == len(labels)
    assert all(normalize_label(label) == label for label in labels)
    assert not any(re.search(r"[\x00-\x1f\x7f|]", label) for label in labels)
    release = {t["head"]: t["tail"] for t in triples if t["relation"] == "release_year"}
    films = [label for label in labels if label.endswith(" film)")]
    assert films and all(re.fullmatch(r"\S.* \(\d{4} film\)", f) for f in films)
    assert all(f.endswith(f"({year} film)") for f, year in release.items())  # the label's year is the release year
    assert any(label.endswith(" (actor)") for label in labels) and any(label.endswith(" Inc.") for label in labels)


@pytest.mark.parametrize("space", sorted(set(_NAME_SPACES) - {"ticker"}))  # ticker: fixed-width letters
def test_every_name_space_spells_each_combination_differently(space):
    names = _Names.make(np.random.default_rng(0), space)
    size = names.combinations.size
    assert pc.count_distinct(names.names(np.arange(size))).as_py() == size
    # Past the last combination, names repeat with a numeral and stay unique.
    beyond = names.names(np.array([0, size, 2 * size]))
    assert beyond[1].as_py() == beyond[0].as_py() + " II" and beyond[2].as_py() == beyond[0].as_py() + " III"


@pytest.mark.parametrize("suffix", [".parquet", ".tsv", ".txt"])
def test_round_trip_through_ingest(tmp_path, suffix):
    path = tmp_path / f"kg{suffix}"
    stats = write_synth(path, EDGES, seed=3)
    result = ingest(path, tmp_path / "wh")
    assert result.rejected.num_rows == 0 and result.duplicates == 0 and result.blank_lines == 0
    assert read_table(tmp_path / "wh" / "edges").num_rows == EDGES
    assert read_table(tmp_path / "wh" / "entities").num_rows == stats.entities  # no two labels merged
    assert result.relations.num_rows == stats.relations


def test_text_formats_hold_the_same_triples_as_parquet(tmp_path):
    expected = sorted(tuple(r.values()) for r in synth_kg(3_000, seed=5).to_pylist())
    for suffix in (".tsv", ".txt"):
        write_synth(tmp_path / f"kg{suffix}", 3_000, seed=5)
        assert sorted((h, r, t) for _, h, r, t in read_kg(tmp_path / f"kg{suffix}").triples) == expected


@pytest.mark.parametrize(
    "text, edges",
    [("250000", 250_000), ("250k", 250_000), ("1M", 1_000_000), ("10m", 10_000_000), ("1.5M", 1_500_000), ("1_000", 1_000)],
)
def test_parse_size(text, edges):
    assert parse_size(text) == edges


def test_cli_writes_the_file_and_prints_one_summary_line(tmp_path, capsys):
    out = tmp_path / "sub" / "synth.parquet"
    with pytest.raises(SystemExit) as exit_info:
        main(["synth", "--edges", "5k", "--out", str(out), "--seed", "2"])
    assert exit_info.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "5,000 edges" in lines[0] and "relations" in lines[0] and "degree max" in lines[0]
    assert pq.read_table(out).num_rows == 5_000
    assert [p.name for p in out.parent.iterdir()] == ["synth.parquet"]  # no partial file left behind


@pytest.mark.parametrize(
    "args, message",
    [
        (["--edges", "0"], "bad edge count '0'"),
        (["--edges", "-3"], "bad edge count '-3'"),
        (["--edges", "1.5"], "bad edge count '1.5'"),
        (["--edges", "ten"], "bad edge count 'ten'"),
        (["--edges", "1k", "--seed", "-1"], "seed must be a non-negative integer"),
        (["--edges", "1k", "--out", "{tmp}/kg.csv"], "cannot tell the output format"),
        (["--edges", "1k", "--out", "{tmp}/file.txt/kg.parquet"], "cannot write"),
        (["--edges", "1k", "--out", "{tmp}/dir.parquet"], "it is a directory"),
    ],
)
def test_cli_bad_arguments_are_one_line_errors(tmp_path, capsys, args, message):
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "dir.parquet").mkdir()
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "kg.parquet")]
    with pytest.raises(SystemExit) as exit_info:
        main(["synth", *args])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("kgwalk: error: ") and message in err and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.parquet", "file.txt"]  # nothing written


def test_library_errors_are_kgwalk_errors(tmp_path):
    with pytest.raises(KgwalkError, match="edge count must be positive"):
        generate(0)
    with pytest.raises(KgwalkError, match="cannot tell the output format"):
        write_synth(tmp_path / "kg.nt", 10)
