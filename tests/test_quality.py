"""Data-quality gates: the check columns, each suite failing on the fault it guards against, and a
failed gate leaving the previous table version current (ingest, walks on Spark, texts on Ray)."""

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from conftest import TINY_KG, graph_from, tables_from
from kgwalk.cli import main
from kgwalk.config import load_config
from kgwalk.errors import QualityGateFailed
from kgwalk.kg.ids import hash64
from kgwalk.quality import gate_texts, gate_walks, summarize, text_checks, walks_gate
from kgwalk.quality.checks import WalkReference, merge_summaries, walk_checks
from kgwalk.quality.gate import validate
from kgwalk.quality.suites import texts_suite, walks_suite
from kgwalk.spark import write_delta
from kgwalk.stages import run_ingest, run_verbalize, run_walks
from kgwalk.storage import current_files, read_table, table_version
from kgwalk.walks import WalkSpec, all_walks
from kgwalk.walks.table import WALKS_SCHEMA

# "hub" has 4 neighbours: with hub_degree 3 walks may end there but never pass through it
TRIPLES = [("a", "r", "hub"), ("b", "r", "hub"), ("c", "r", "hub"), ("hub", "s", "d"), ("d", "s", "e"), ("e", "e", "e")]


def cfg_for(tmp_path, *overrides: str, kg=TINY_KG):
    return load_config(None, ["spark.master=local[2]", "ray.num_cpus=2", "embed.model=hashing-64", *overrides],
                       name="q", warehouse=str(tmp_path / "wh"), **{"kg.path": str(kg)})


def reference(direction: str = "both", hub_degree: int | None = 3) -> WalkReference:
    t = tables_from(TRIPLES)
    return WalkReference.from_tables(t.edges, t.entities, t.relations, direction, hub_degree)


@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_hub_degrees_agree_with_the_walk_engine(direction):
    t = tables_from(TRIPLES)
    graph = graph_from(TRIPLES, direction)
    ref = WalkReference.from_tables(t.edges, t.entities, t.relations, direction, 1)
    engine_hubs = graph.node_ids[graph.degree > 1]
    assert sorted(ref.entities.ids[ref.hub]) == sorted(engine_hubs)


def walk(nodes, rels, steps=None, root=None):
    ids = [hash64(n) for n in nodes]
    return {
        "walk_id": hash64("/".join(nodes)), "root": hash64(root) if root else ids[0], "kind": "bfs",
        "steps": len(rels) if steps is None else steps, "count": 1,
        "nodes": ids, "rels": [hash64(r) for r in rels], "inverse": [False] * len(rels),
    }


def test_walk_checks_flag_each_fault():
    rows = [
        walk(["a", "hub"], ["r"]),  # ends at a hub: fine
        walk(["a", "hub", "d"], ["r", "s"]),  # through the hub
        walk(["hub", "d", "e"], ["s", "s"]),  # starts at the hub: the root always expands
        walk(["d", "e"], ["s"], steps=2),  # steps disagree with the arrays
        walk(["d", "zzz"], ["s"]),  # unknown node
        walk(["d", "e"], ["nope"]),  # unknown relation
        walk(["d", "e"], ["s"], root="a"),  # root is not the first node
    ]
    checks = walk_checks(pa.Table.from_pylist(rows, WALKS_SCHEMA), reference()).to_pydict()
    assert checks["through_hub"] == [False, True, False, False, False, False, False]
    assert checks["shape_ok"] == [True, True, True, False, True, True, True]
    assert checks["nodes_known"] == [True, True, True, True, False, True, True]
    assert checks["rels_known"] == [True, True, True, True, True, False, True]
    assert checks["root_ok"] == [True, True, True, True, True, True, False]


def test_engine_walks_pass_their_own_checks():
    t = tables_from(TRIPLES)
    for direction in ("out", "both"):
        spec = WalkSpec(kinds=("bfs", "random"), direction=direction, depth=3, hub_degree=3)
        walks = all_walks(graph_from(TRIPLES, direction), spec)
        checks = walk_checks(walks, WalkReference.from_tables(t.edges, t.entities, t.relations, direction, 3)).to_pydict()
        assert walks.num_rows > 5
        for column in ("shape_ok", "root_ok", "nodes_known", "rels_known"):
            assert all(checks[column]), column
        assert not any(checks["through_hub"])


def reports(cfg) -> set[str]:
    return {p.name for p in (cfg.root / "_quality").iterdir()}


def test_ingest_gate_passes_and_writes_reports(tmp_path):
    cfg = cfg_for(tmp_path)
    run_ingest(cfg)
    assert {"ingest.json", "ingest.html", "entities.json", "edges.json", "relations.html"} <= reports(cfg)
    report = json.loads((cfg.root / "_quality" / "edges.json").read_text())
    assert report["success"] is True and report["statistics"]["evaluated_expectations"] == 5
    assert "<html" in (cfg.root / "_quality" / "edges.html").read_text().lower()


def run_cli(capsys, *args) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("kgwalk:")]
    assert len(lines) == 1, lines
    return exit_info.value.code, lines[0]


def test_too_many_rejected_lines_fail_ingest_and_keep_the_previous_version(tmp_path, capsys):
    good = tmp_path / "good.txt"
    good.write_text("a|r|b\nb|r|c\nc|r|d\n")
    bad = tmp_path / "bad.txt"
    bad.write_text("a|r|b\nb|r|c\nbroken line\nx|y\n")  # 2 of 4 records rejected
    cfg = cfg_for(tmp_path, kg=good)
    run_ingest(cfg)
    versions = {t: table_version(cfg.table(t)) for t in ("edges", "entities", "relations")}
    code, line = run_cli(capsys, "ingest", "--kg", str(bad), "--warehouse", str(tmp_path / "wh"), "--name", "q")
    assert code == 3
    assert line.startswith("kgwalk: quality gate failed, nothing committed: ingest: 2 of 4 lines rejected (50.0% > quality.max_rejected_ratio 5%)")
    assert "ingest.html" in line and f"all 2 rejected lines are in the Delta table {cfg.table('rejected')}" in line
    assert {t: table_version(cfg.table(t)) for t in versions} == versions
    assert read_table(cfg.table("edges")).num_rows == 3
    assert read_table(cfg.table("rejected")).column("line").to_pylist() == [3, 4]  # the refused file's, to read in full
    # the threshold is the user's: raised, the same file lands with its rejected lines
    run_ingest(cfg_for(tmp_path, "quality.max_rejected_ratio=0.5", kg=bad))
    assert read_table(cfg.table("rejected")).num_rows == 2 and read_table(cfg.table("edges")).num_rows == 2


def test_a_failed_first_ingest_names_the_reasons_and_lines_and_keeps_only_them(tmp_path, capsys):
    """2 bad lines in 25 break the 5% limit: the error counts each reason and quotes the first
    rejected lines with their numbers (it said `rejected_ratio expect_column_values_to_be_between:
    1 of 1 rows (e.g. 0.08)`), and the KG folder keeps only what explains it: the rejected lines,
    every one, and the gate's reports; no lock file, no KG table."""
    kg = tmp_path / "kg.txt"
    lines = [f"film {i}|directed_by|person {i}" for i in range(25)]
    lines[3], lines[8] = "just one field", "film 8||person 8"
    kg.write_text("\n".join(lines) + "\n")
    code, line = run_cli(capsys, "ingest", "--kg", str(kg), "--warehouse", str(tmp_path / "wh"), "--name", "q")
    root = tmp_path / "wh" / "q"
    assert code == 3
    assert ("ingest: 2 of 25 lines rejected (8.0% > quality.max_rejected_ratio 5%): 'expected 3 fields, found 1' x1, 'empty relation' x1; "
            "first rejected lines: line 4: 'just one field', line 9: 'film 8||person 8'") in line
    assert "expect_column" not in line and "e.g. 0.08" not in line  # Great Expectations' words
    assert line.endswith(f"; all 2 rejected lines are in the Delta table {root / 'rejected'}")
    assert sorted(p.name for p in root.iterdir()) == ["_quality", "rejected"]
    assert read_table(root / "rejected").select(["line", "reason"]).to_pylist() == [
        {"line": 4, "reason": "expected 3 fields, found 1"}, {"line": 9, "reason": "empty relation"}]


def test_the_gate_quotes_the_first_five_rejected_lines_and_the_commonest_reasons():
    from kgwalk.kg.ingest import REJECTED_SCHEMA
    from kgwalk.quality import rejected_words

    rows = [("f", n, reason, f"text {n}") for n, reason in
            [(9, "b"), (2, "a"), (7, "a"), (3, "c"), (5, "d"), (4, "e"), (8, "f"), (6, "a"), (1, "b")]]
    rejected = pa.Table.from_pylist([dict(zip(REJECTED_SCHEMA.names, r)) for r in rows], REJECTED_SCHEMA)
    words = rejected_words(rejected, 1000, 0.005)
    assert words == ("9 of 1,000 lines rejected (0.9% > quality.max_rejected_ratio 0.5%): 'a' x3, 'b' x2, 'c' x1, 'd' x1, 'e' x1 "
                     "and 1 other reasons; first rejected lines: line 1: 'text 1', line 2: 'text 2', line 3: 'text 3', "
                     "line 4: 'text 4', line 5: 'text 5'")


def test_unknown_relation_fails_when_a_vocabulary_is_set(tmp_path):
    kg = tmp_path / "kg.txt"
    kg.write_text("a|directed_by|b\nb|writen_by|c\n")
    cfg = cfg_for(tmp_path, "quality.relations=[directed_by, written_by]", kg=kg)
    with pytest.raises(QualityGateFailed, match=r"relations: relations are in quality.relations: 1 of 2 rows fail \(e.g. key writen_by\)"):
        run_ingest(cfg)
    assert not (cfg.root / "edges").exists()


def test_walks_gate_on_spark_stops_the_commit(tmp_path, spark):
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    cfg = cfg_for(tmp_path, "walks.hub_degree=3", kg=kg)
    run_ingest(cfg)
    run_walks(cfg, spark)
    assert json.loads((cfg.root / "_quality" / "walks.json").read_text())["success"] is True
    version = table_version(cfg.table("walks"))
    good = read_table(cfg.table("walks"))
    bad = pa.concat_tables([good, pa.Table.from_pylist([walk(["a", "hub", "d"], ["r", "s"]), walk(["d", "e"], ["s"], steps=5)], WALKS_SCHEMA)])
    df = spark.createDataFrame(bad.to_pandas())
    with pytest.raises(QualityGateFailed) as failed:
        write_delta(df, cfg.table("walks"), WALKS_SCHEMA, gate=walks_gate(cfg, spark))
    message = str(failed.value)
    assert f"no walk passes through a hub (walks.hub_degree): 1 of {bad.num_rows} rows fail (e.g. walk_id {hash64('a/hub/d')})" in message
    assert "walk lengths are within the walk depth: 1 of" in message and "nodes = steps + 1" in message
    assert table_version(cfg.table("walks")) == version
    assert read_table(cfg.table("walks")).num_rows == good.num_rows
    live = {Path(f).parent.name for f in current_files(cfg.table("walks"))}
    assert {p.name for p in (cfg.root / "walks").iterdir() if p.name.startswith("spark-")} == live  # the rejected files are gone


def test_texts_gate_stops_the_verbalize_commit(tmp_path):
    cfg = cfg_for(tmp_path)
    run_ingest(cfg)
    run_walks(cfg)
    run_verbalize(cfg)
    version = table_version(cfg.table("texts"))
    with pytest.raises(QualityGateFailed, match=r"texts: sentences are non-empty and within quality.max_text_length: \d[\d,]* of [\d,]+ rows fail \(e.g. walk_id -?\d+"):
        run_verbalize(cfg_for(tmp_path, "quality.max_text_length=20"))
    assert table_version(cfg.table("texts")) == version


def test_fallback_ratio_is_a_share_not_a_count(tmp_path):
    cfg = cfg_for(tmp_path)
    n = 100
    texts = pa.table({"walk_id": np.arange(n), "root": np.zeros(n, np.int64), "text": ["x y"] * n, "text_id": np.arange(n), "source": ["llm"] * 85 + ["fallback"] * 15})
    gate_texts(cfg, [summarize(text_checks(texts), "walk_id")])  # 15% <= 20%
    texts = texts.set_column(4, "source", pa.array(["llm"] * 75 + ["fallback"] * 25))
    with pytest.raises(QualityGateFailed, match="template fallbacks are at most quality.max_fallback_ratio of sentences: 25 of 100 rows fail"):
        gate_texts(cfg, [summarize(text_checks(texts), "walk_id")])


def verdicts(result):
    return result.success, sorted(f.split(" (e.g.")[0] for f in result.failures), result.rows


@pytest.mark.parametrize("seed", range(6))
def test_a_summary_gets_the_verdicts_of_every_row(tmp_path, seed):
    """Validating the per-value summary (weighted by its counts) = validating every row: same
    pass/fail, same failed expectations, same unexpected counts; examples are real offending ids."""
    rng = np.random.default_rng(seed)
    cfg = cfg_for(tmp_path, f"quality.max_fallback_ratio={rng.choice([0.05, 0.3])}", "quality.max_text_length=40")
    n = int(rng.integers(1, 400))
    texts = pa.table({
        "walk_id": pa.array(rng.permutation(n).astype(np.int64), mask=rng.random(n) < 0.02 * (seed % 2)),
        "text": [" " * int(rng.integers(0, 2)) + "w" * int(rng.choice([0, 5, 39, 41])) for _ in range(n)],
        "source": rng.choice(["template", "llm", "fallback", "cache"], n, p=[0.4, 0.4, 0.15, 0.05]).tolist(),
    })
    rows = text_checks(texts)
    parts = [summarize(rows.slice(i, 50), "walk_id") for i in range(0, n, 50)]
    full = validate("texts_rows", rows, texts_suite(cfg), tmp_path / "r", "walk_id")
    folded = validate("texts", merge_summaries(parts), texts_suite(cfg), tmp_path / "r", "walk_id", summary=True)
    assert verdicts(folded) == verdicts(full)
    report = json.loads((tmp_path / "r" / "texts.json").read_text())
    bad_ids = set(rows.filter(pc_greater(rows, 40)).column("walk_id").to_pylist())
    for r in report["results"]:
        if r["expectation_config"]["kwargs"].get("column") == "text_length" and not r["success"]:
            examples = {e["walk_id"] for e in r["result"]["partial_unexpected_index_list"]}
            assert examples and examples <= bad_ids | set(rows.filter(pc_empty(rows)).column("walk_id").to_pylist())

    t = tables_from(TRIPLES)
    walks = all_walks(graph_from(TRIPLES, "both"), WalkSpec(kinds=("bfs",), direction="both", depth=3, hub_degree=None))
    ref = WalkReference.from_tables(t.edges, t.entities, t.relations, "both", int(rng.integers(1, 4)))  # a stricter hub rule than the walks had
    checks = pa.table(walk_checks(walks, ref))
    full = validate("walks_rows", checks, walks_suite(cfg_for(tmp_path, "walks.depth=2")), tmp_path / "r", "walk_id")
    folded = validate("walks", summarize(checks, "walk_id"), walks_suite(cfg_for(tmp_path, "walks.depth=2")), tmp_path / "r", "walk_id", summary=True)
    assert not full.success and verdicts(folded) == verdicts(full)


def pc_greater(rows, length):
    import pyarrow.compute as pc

    return pc.greater(rows.column("text_length"), length)


def pc_empty(rows):
    import pyarrow.compute as pc

    return pc.equal(rows.column("text_length"), 0)


def test_refresh_change_set_with_too_many_bad_lines_changes_nothing(tmp_path):
    from corpus import build_in_process, config, corpus

    from kgwalk.refresh.job import run_refresh
    from kgwalk.state import read_state

    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    cfg = config(tmp_path / "wh", kg)
    build_in_process(cfg)
    before, state = corpus(cfg), {t: s.version for t, s in read_state(cfg).items()}
    changes = tmp_path / "changes.txt"
    changes.write_text("d|s|a|add\nbroken\nx|y\nhub|s|d|frobnicate\n")  # 3 of 4 records rejected
    for _ in range(2):  # a retry of the same change set keeps its rejected lines once
        with pytest.raises(QualityGateFailed) as failed:
            run_refresh(cfg, str(changes))
        assert corpus(cfg) == before and {t: s.version for t, s in read_state(cfg).items()} == state
        assert ("ingest: 3 of 4 lines rejected (75.0% > quality.max_rejected_ratio 50%): 'expected 4 fields, found 1' x1, "
                "'expected 4 fields, found 2' x1, \"op must be add or remove, found 'frobnicate'\" x1; first rejected lines: "
                "line 2: 'broken', line 3: 'x|y', line 4: 'hub|s|d|frobnicate'") in str(failed.value)
        assert str(failed.value).endswith(f"; all 3 rejected lines are in the Delta table {cfg.table('rejected')}")
        assert read_table(cfg.table("rejected")).filter(pc_source(changes)).column("line").to_pylist() == [2, 3, 4]
    changes.write_text("d|s|a|add\n")
    assert run_refresh(cfg, str(changes)).walks_recomputed > 0
    assert json.loads((cfg.root / "_quality" / "walks.json").read_text())["success"] is True


def pc_source(path):
    import pyarrow.compute as pc

    return pc.equal(pc.field("source"), str(path))


def test_multiplicity_counts_repeats_exactly():
    from kgwalk.quality.checks import multiplicity

    rng = np.random.default_rng(0)
    cols = [rng.integers(0, 3, 200) for _ in range(3)]  # many repeats
    expected = [sum(all(c[j] == c[i] for c in cols) for j in range(200)) for i in range(200)]
    assert multiplicity(*cols).tolist() == expected
    unique = [np.arange(50), np.zeros(50, np.int64), np.arange(50) * 7]
    assert multiplicity(*unique).tolist() == [1] * 50
    assert multiplicity(np.array([5, 3, 5])).tolist() == [2, 1, 2]


def test_walks_gate_on_arrow_as_refresh_uses_it(tmp_path):
    kg = tmp_path / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in TRIPLES))
    cfg = cfg_for(tmp_path, "walks.hub_degree=3", kg=kg)
    run_ingest(cfg)
    good = all_walks(graph_from(TRIPLES, "both"), WalkSpec.from_conf(cfg.walks))
    assert gate_walks(cfg, good)[0].success
    bad = pa.concat_tables([good.cast(WALKS_SCHEMA), pa.Table.from_pylist([walk(["a", "hub", "d"], ["r", "s"])], WALKS_SCHEMA)])
    with pytest.raises(QualityGateFailed, match=rf"walks: no walk passes through a hub \(walks.hub_degree\): 1 of {bad.num_rows} rows fail \(e.g. walk_id {hash64('a/hub/d')}\)"):
        gate_walks(cfg, bad)
    # A refresh gates the walks it recomputed; the row count is the whole table's.
    none = good.slice(0, 0)
    assert gate_walks(cfg, none, table_rows=good.num_rows)[0].success
    with pytest.raises(QualityGateFailed, match=r"walks: the KG has walks: 0 rows"):
        gate_walks(cfg, none, table_rows=0)
    with pytest.raises(QualityGateFailed, match=r"walks: no walk passes through a hub \(walks.hub_degree\): 1 of 1 rows fail"):
        gate_walks(cfg, bad.slice(bad.num_rows - 1), table_rows=good.num_rows + 1)


@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_id_index_finds_what_searchsorted_finds(n):
    from kgwalk.kg.ids import positions
    from kgwalk.quality.checks import IdIndex

    rng = np.random.default_rng(n)
    ids = np.unique(rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64))
    ids = np.concatenate([ids, np.unique(ids[: n // 3] ^ 1 << 40)]) if n else ids  # share low bits: collisions
    ids = np.unique(ids)
    queries = np.concatenate([ids, rng.integers(-2**63, 2**63 - 1, 300, dtype=np.int64), ids[:10] + 1])
    at, found = positions(queries, ids)
    assert IdIndex(ids).lookup(queries).tolist() == np.where(found, at, -1).tolist()
