"""Incremental refresh leaves every table and the index exactly as a full build of the new graph.

More seeds: KGWALK_REFRESH_SEEDS=200 .venv/bin/python -m pytest tests/test_refresh.py -k property
"""

from __future__ import annotations

import os
import shutil
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus import build_in_process, config, corpus, embedder_output_matches
from conftest import tables_from
from kgwalk.errors import KgwalkError
from kgwalk.walks.affected import affected_roots
from kgwalk.refresh.job import run_refresh
from kgwalk.state import read_state
from kgwalk.storage import read_table
from kgwalk.walks import Graph, WalkSpec, all_walks

SEEDS = int(os.environ.get("KGWALK_REFRESH_SEEDS", "12"))


def random_kg(rng: np.random.Generator, entities: int = 40, edges: int = 90) -> list[tuple[str, str, str]]:
    """Random triples with a hub (e0), self-loops, parallel and reverse edges."""
    out = set()
    while len(out) < edges:
        h = f"e{rng.integers(entities)}" if rng.random() > 0.25 else "e0"
        t = f"e{rng.integers(entities)}" if rng.random() > 0.1 else h
        out.add((h, f"r{rng.integers(4)}", t))
    return sorted(out)


def random_changes(rng: np.random.Generator, triples: list) -> tuple[list[tuple[str, str, str, str]], list]:
    """A change set (head, rel, tail, op) and the triples it leads to: removals, an entity
    deletion, additions among old and new entities, hub edges, self-loops, a repeated add, a
    removal of a missing edge, and a triple added then removed (the last op wins)."""
    old = set(triples)
    ops = [(*triples[i], "remove") for i in rng.choice(len(triples), 4, replace=False)]
    victim = f"e{rng.integers(1, 40)}"
    ops += [(h, r, t, "remove") for h, r, t in triples if victim in (h, t)]
    for k in range(6):
        h = f"e{rng.integers(45)}" if k else "e0"
        t = h if k == 5 else f"e{rng.integers(45)}"
        ops.append((h, f"r{rng.integers(4)}", t, "add"))
    ops += [(*triples[0], "add"), ("e1", "r9", "e2", "remove"), ("e3", "r1", "e4", "add"), ("e3", "r1", "e4", "remove")]
    new = set(old)
    for h, r, t, op in ops:
        (new.add if op == "add" else new.discard)((h, r, t))
    return ops, sorted(new)


def random_spec(rng: np.random.Generator) -> list[str]:
    choice = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    return [
        f"walks.kinds={choice(['[bfs]', '[random]', '[bfs, random]'])}",
        f"walks.direction={choice(['out', 'in', 'both'])}",
        f"walks.depth={choice([2, 3])}",
        f"walks.hub_degree={choice([5, 8, 'null'])}",
        f"walks.bfs_mode={choice(['reached', 'maximal', 'paths'])}",
        f"walks.max_per_signature={choice([1, 'null'])}",
        f"walks.max_per_root={choice([4, 'null'])}",
        "walks.random.walks_per_root=8",
        f"walks.random.length={choice([2, 3])}",
        f"embed.store_vectors={choice(['always', 'never'])}",  # vectors read back from the table, or the texts embedded again
        f"index.vector_datatype={choice(['float16', 'turbo8', 'turbo4'])}",  # exact, or codes only Qdrant decodes
        f"index.node_sums_min_walks={choice([1, 4, 32])}",  # every root's sum kept, some roots', or almost none
    ]


def write_pipe(path: Path, rows) -> Path:
    path.write_text("".join("|".join(r) + "\n" for r in rows))
    return path


def spec_of(overrides: list[str]) -> WalkSpec:
    return WalkSpec.from_conf(config(Path("/nonexistent"), overrides=overrides).walks)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("bfs_mode", ["drawn", "paths"])
def test_affected_roots_cover_every_root_whose_walks_change(seed, bfs_mode):
    rng = np.random.default_rng(seed)
    old = random_kg(rng)
    _, new = random_changes(rng, old)
    spec = spec_of(random_spec(rng))
    if bfs_mode == "paths":  # walks along every relation path consult no node farther than reached BFS's
        spec = replace(spec, kinds=tuple(dict.fromkeys(("bfs", *spec.kinds))), bfs_mode="paths")
    by_root = {}
    for name, triples in (("old", old), ("new", new)):
        t = tables_from(triples)
        walks = all_walks(Graph.from_arrow(t.edges, t.entities, t.relations, spec.direction), spec).to_pylist()
        rows: dict[int, set] = {}
        for w in walks:
            rows.setdefault(w["root"], set()).add((w["walk_id"], w["count"]))
        by_root[name] = (rows, t.edges)
    changed = {r for r in set(by_root["old"][0]) | set(by_root["new"][0]) if by_root["old"][0].get(r) != by_root["new"][0].get(r)}
    affected = set(affected_roots(by_root["old"][1], by_root["new"][1], spec).tolist())
    assert changed <= affected
    assert changed  # the change sets always change something


def test_edge_differences_are_exact_when_edges_share_a_hash(monkeypatch):
    """edge_difference sorts by a hash of each edge; where two different edges share one, it sorts exactly."""
    import kgwalk.walks.affected as affected

    rng = np.random.default_rng(5)
    old = tables_from(random_kg(rng)).edges
    new = tables_from(random_changes(rng, random_kg(np.random.default_rng(5)))[1]).edges
    hashed = affected.edge_difference(old, new)
    monkeypatch.setattr(affected, "fold64", lambda h, values: np.asarray(values, np.int64).view(np.uint64) % np.uint64(3))
    colliding = affected.edge_difference(old, new)
    for got, expected in zip(colliding, hashed):
        assert sorted(got.to_pylist(), key=str) == sorted(expected.to_pylist(), key=str)
    assert hashed[0].num_rows and hashed[1].num_rows


def test_a_hub_that_stays_a_hub_affects_only_itself():
    star = [("hub", "r", f"leaf{i}") for i in range(10)] + [("a", "r", "hub"), ("b", "r", "a")]
    spec = WalkSpec(direction="both", depth=3, hub_degree=5)
    old, new = tables_from(star), tables_from(star + [("hub", "r", "leaf99")])
    id_of = dict(zip(new.entities.column("key").to_pylist(), new.entities.column("id").to_pylist()))
    assert affected_roots(old.edges, new.edges, spec).tolist() == sorted([id_of["hub"], id_of["leaf99"]])


@pytest.mark.parametrize("seed", range(SEEDS))
def test_property_refresh_equals_full_build(tmp_path, seed):
    rng = np.random.default_rng(1000 + seed)
    overrides = random_spec(rng)
    triples = random_kg(rng)
    refreshed = config(tmp_path / "refreshed", write_pipe(tmp_path / "old.txt", triples), overrides)
    build_in_process(refreshed)
    rounds = 2 if seed % 3 == 0 else 1  # some seeds refresh twice in a row
    for k in range(rounds):
        ops, triples = random_changes(rng, triples)
        report = run_refresh(refreshed, str(write_pipe(tmp_path / f"changes{k}.txt", ops)))
        assert report.verbalized == report.embedded == report.walks_added
    expected = config(tmp_path / "full", write_pipe(tmp_path / "new.txt", triples), overrides)
    build_in_process(expected)
    assert corpus(refreshed) == corpus(expected)
    assert embedder_output_matches(refreshed)
    rejected = read_table(refreshed.table("rejected")).to_pylist()
    assert {r["reason"] for r in rejected} == {"remove: no such edge"} and len(rejected) == rounds * 2


def test_an_index_built_in_root_ranges_equals_one_built_in_one_pass(tmp_path):
    """index.sums_memory_mib: where every root's node sums would not fit, the index stage takes
    the roots in ranges, a pass over the texts each; the index is the same, point for point and
    sum for sum, and so is a refresh of it."""
    from kgwalk.index.build import root_ranges
    from kgwalk.index.edge import EdgeStore
    from kgwalk.index.store import collection_names
    from kgwalk.walks.labels import load_labels

    rng = np.random.default_rng(5)
    triples = random_kg(rng, entities=5000, edges=9000)
    kg = write_pipe(tmp_path / "kg.txt", triples)
    one, ranged = config(tmp_path / "one", kg, ["index.node_sums_min_walks=4"]), config(tmp_path / "ranged", kg, ["index.node_sums_min_walks=4", "index.sums_memory_mib=1"])
    build_in_process(one)
    build_in_process(ranged)
    assert len(root_ranges(load_labels(ranged).entity_ids, 64, 1)) >= 2  # 520 B a root at 64 dimensions: 2,016 roots a MiB

    def sums(cfg):
        roots = np.unique(read_table(cfg.table("walks"), ["root"]).column("root").to_numpy())
        with closing(EdgeStore(cfg.root / "qdrant")) as store:
            return store.read_sums(collection_names(cfg)[0], roots)

    assert corpus(ranged) == corpus(one)
    assert all(np.array_equal(a, b) for a, b in zip(sums(ranged), sums(one)))
    ops, _ = random_changes(rng, triples)
    changes = write_pipe(tmp_path / "changes.txt", ops)
    run_refresh(one, str(changes))
    run_refresh(ranged, str(changes))
    assert corpus(ranged) == corpus(one)


def test_only_roots_with_many_walks_keep_their_node_sums(tmp_path):
    """index.node_sums_min_walks: a build keeps the exact sums of roots with at least that many walks (2 KB each at
    256 dimensions); a refresh resums the others from all their walks, and drops the sum of a root that falls below."""
    from kgwalk.index.edge import EdgeStore
    from kgwalk.index.store import collection_names

    rng = np.random.default_rng(11)
    triples = random_kg(rng, entities=60, edges=150)
    cfg = config(tmp_path / "wh", write_pipe(tmp_path / "kg.txt", triples), ["index.node_sums_min_walks=50"])
    build_in_process(cfg)

    def kept() -> tuple[dict[int, int], dict[int, int]]:
        roots, counts = np.unique(read_table(cfg.table("walks"), ["root"]).column("root").to_numpy(), return_counts=True)
        with closing(EdgeStore(cfg.root / "qdrant")) as store:
            _, walks = store.read_sums(collection_names(cfg)[0], roots)
        return dict(zip(roots.tolist(), counts.tolist())), dict(zip(roots.tolist(), walks.tolist()))

    counts, sums_walks = kept()
    assert {r for r, n in sums_walks.items() if n} == {r for r, n in counts.items() if n >= 50}
    assert 0 < sum(n >= 50 for n in counts.values()) < len(counts)  # both kinds of root
    assert all(sums_walks[r] == counts[r] for r in counts if sums_walks[r])
    ops, triples = random_changes(rng, triples)
    run_refresh(cfg, str(write_pipe(tmp_path / "changes.txt", ops)))
    counts, sums_walks = kept()
    assert {r for r, n in sums_walks.items() if n} == {r for r, n in counts.items() if n >= 50}
    assert all(sums_walks[r] == counts[r] for r in counts if sums_walks[r])
    expected = config(tmp_path / "full", write_pipe(tmp_path / "new.txt", triples), ["index.node_sums_min_walks=50"])
    build_in_process(expected)
    assert corpus(cfg) == corpus(expected)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    """A built KG and a change set, with the full build of the changed KG to compare against."""
    root = tmp_path_factory.mktemp("refresh")
    rng = np.random.default_rng(7)
    triples = random_kg(rng, entities=60, edges=150)
    ops, new = random_changes(rng, triples)
    base = config(root / "base", write_pipe(root / "old.txt", triples))
    build_in_process(base)
    expected = config(root / "expected", write_pipe(root / "new.txt", new))
    build_in_process(expected)
    return root, base, ops, corpus(expected)


def copy_of(baseline, tmp_path: Path):
    root, base, ops, expected = baseline
    shutil.copytree(base.root, tmp_path / "wh" / "t")
    return config(tmp_path / "wh"), ops, expected


def as_file(ops, tmp_path: Path, fmt: str) -> Path:
    heads, rels, tails, kinds = (list(c) for c in zip(*ops))
    if fmt == "pipe":
        return write_pipe(tmp_path / "c.txt", ops)
    if fmt == "tsv":
        path = tmp_path / "c.tsv"
        path.write_text("".join("\t".join(r) + "\n" for r in ops))
    elif fmt == "csv":
        path = tmp_path / "c.csv"
        path.write_text("op,subject,predicate,object\n" + "".join(f"{o},{h},{r},{t}\n" for h, r, t, o in ops))
    elif fmt == "parquet":
        path = tmp_path / "c.parquet"
        pq.write_table(pa.table({"head": heads, "relation": rels, "tail": tails, "op": ["+" if k == "add" else "-" for k in kinds]}), path)
    else:  # RDF Patch style N-Triples
        path = tmp_path / "c.nt"
        path.write_text("".join(f"{'A' if o == 'add' else 'D'} <{h}> <{r}> <{t}> .\n" for h, r, t, o in ops))
    return path


@pytest.mark.parametrize("fmt", ["tsv", "csv", "parquet"])
def test_change_sets_in_every_format_give_the_same_corpus(baseline, tmp_path, fmt):
    cfg, ops, expected = copy_of(baseline, tmp_path)
    run_refresh(cfg, str(as_file(ops, tmp_path, fmt)))
    assert corpus(cfg) == expected


def test_nt_change_set_applies_adds_and_deletes(tmp_path):
    cfg = config(tmp_path / "wh", write_pipe(tmp_path / "kg.txt", [("a", "r", "b"), ("b", "r", "c")]))
    build_in_process(cfg)
    run_refresh(cfg, str(as_file([("b", "r", "c", "remove"), ("c", "r", "d", "add")], tmp_path, "nt")))
    keys = read_table(cfg.table("entities"), ["key"]).column("key").to_pylist()
    assert sorted(keys) == ["a", "b", "c", "d"] and read_table(cfg.table("edges")).num_rows == 2


def test_snapshot_with_a_new_label_reverbalizes_only_walks_that_mention_it(tmp_path):
    def nt(label: str) -> str:
        return (
            "<http://x/kismet> <http://x/directed_by> <http://x/dieterle> .\n"
            "<http://x/dieterle> <http://x/born_in> <http://x/germany> .\n"
            "<http://x/other> <http://x/directed_by> <http://x/someone> .\n"
            f'<http://x/dieterle> <http://www.w3.org/2000/01/rdf-schema#label> "{label}" .\n'
        )

    (tmp_path / "v1.nt").write_text(nt("William Dieterle"))
    (tmp_path / "v2.nt").write_text(nt("Wilhelm Dieterle"))
    cfg = config(tmp_path / "a", tmp_path / "v1.nt")
    build_in_process(cfg)
    report = run_refresh(cfg, str(tmp_path / "v2.nt"), snapshot=True)
    texts = read_table(cfg.table("texts")).column("text").to_pylist()
    mentioning = sum("Dieterle" in t for t in texts)
    assert report.walks_added == 0 and report.verbalized == report.embedded == mentioning > 0
    assert any("Wilhelm Dieterle" in t for t in texts) and not any("William" in t for t in texts)
    expected = config(tmp_path / "b", tmp_path / "v2.nt")
    build_in_process(expected)
    assert corpus(cfg) == corpus(expected)


def test_snapshot_equals_change_set(baseline, tmp_path):
    root, base, ops, expected = baseline
    cfg, _, _ = copy_of(baseline, tmp_path)
    run_refresh(cfg, str(root / "new.txt"), snapshot=True)
    assert corpus(cfg) == expected


def test_the_same_change_set_twice_is_applied_once(baseline, tmp_path):
    cfg, ops, expected = copy_of(baseline, tmp_path)
    changes = as_file(ops, tmp_path, "pipe")
    run_refresh(cfg, str(changes))
    versions = {t: s.version for t, s in read_state(cfg).items()}
    again = run_refresh(cfg, str(changes))
    assert again.kg is None and set(again.skipped) == {"walks", "texts", "vectors", "index"}
    assert {t: s.version for t, s in read_state(cfg).items()} == versions
    assert corpus(cfg) == expected


def test_a_change_set_equal_to_one_a_later_change_undid_is_a_new_change(baseline, tmp_path):
    root, _, _, _ = baseline
    cfg, ops, expected = copy_of(baseline, tmp_path)
    run_refresh(cfg, str(as_file(ops, tmp_path, "pipe")))
    rejected_once = read_table(cfg.table("rejected")).num_rows
    run_refresh(cfg, str(root / "old.txt"), snapshot=True)  # undoes it
    again = write_pipe(tmp_path / "later.txt", ops)  # another file, the same content
    report = run_refresh(cfg, str(again))
    assert report.kg is not None
    assert corpus(cfg) == expected
    retried = run_refresh(cfg, str(again))  # a retry of the latest change stays a no-op
    assert retried.kg is None and corpus(cfg) == expected
    assert rejected_once > 0 and read_table(cfg.table("rejected")).num_rows == 2 * rejected_once  # once per application


def test_refresh_refuses_changed_walk_settings_and_missing_build(baseline, tmp_path):
    cfg, ops, _ = copy_of(baseline, tmp_path)
    changed = config(tmp_path / "wh", overrides=["walks.depth=2"])
    with pytest.raises(KgwalkError, match="walks settings changed"):
        run_refresh(changed, str(as_file(ops, tmp_path, "pipe")))
    other_model = config(tmp_path / "wh", overrides=["embed.model=hashing-32"])
    with pytest.raises(KgwalkError, match="vectors settings changed .* set the model it was built with: embed.model's default is auto"):
        run_refresh(other_model, str(as_file(ops, tmp_path, "pipe")))
    with pytest.raises(KgwalkError, match="run `kgwalk build` first"):
        run_refresh(config(tmp_path / "empty"), str(as_file(ops, tmp_path, "pipe")))


def test_server_backend_refresh_equals_full_build(baseline, tmp_path):
    root, base, ops, _ = baseline
    server = ["index.backend=server"]
    a = config(tmp_path / "a", root / "old.txt", server + [f"index.url={tmp_path / 'qa'}"])
    build_in_process(a)
    run_refresh(a, str(as_file(ops, tmp_path, "pipe")))
    b = config(tmp_path / "b", root / "new.txt", server + [f"index.url={tmp_path / 'qb'}"])
    build_in_process(b)
    assert corpus(a) == corpus(b)
    # embed.store_vectors=auto keeps even a hashing model's vectors for a server (a cluster's driver would embed alone)
    walks = read_table(a.table("walks"), ["walk_id"]).column("walk_id").to_pylist()
    assert set(walks) <= set(read_table(a.table("vectors"), ["walk_id"]).column("walk_id").to_pylist())


def test_spark_walks_the_affected_roots_identically(baseline, tmp_path, spark):
    cfg, ops, expected = copy_of(baseline, tmp_path)
    run_refresh(cfg, str(as_file(ops, tmp_path, "pipe")), spark=spark)
    assert corpus(cfg) == expected


def test_walking_processes_walk_the_affected_roots_identically(baseline, tmp_path):
    """Affected roots walked in batches of two roots by two spawned processes: the same tables as one
    process (and as the full build of the changed KG)."""
    cfg, ops, expected = copy_of(baseline, tmp_path)
    cfg = config(tmp_path / "wh", overrides=["walks.processes=2", "walks.roots_per_batch=2"])
    report = run_refresh(cfg, str(write_pipe(tmp_path / "c.txt", ops)))
    assert report.affected_roots > 4  # more than two batches of roots, so both processes walked
    assert corpus(cfg) == expected


@pytest.mark.parametrize("guarded", [True, False])
def test_a_script_walking_in_processes_needs_a_main_guard_and_is_told_so(tmp_path, guarded):
    """Spawned walking processes import the calling script again: under a main guard they walk what one process
    walks; without one the script gets a one-line reason, not a hang."""
    import subprocess
    import sys

    body = ("from conftest import graph_from\nfrom kgwalk.walks.engine import walks_in_processes\n"
            "from kgwalk.walks.spec import WalkSpec\n"
            "g = graph_from([(f'e{i}', 'r', f'e{i + 1}') for i in range(12)])\n"
            "spec = WalkSpec(direction='both', depth=2)\n"
            "print(walks_in_processes(g, g.node_ids, spec, 2, 10000, 2).num_rows, walks_in_processes(g, g.node_ids, spec, 2, 10000, 1).num_rows)\n")
    if guarded:
        body = "if __name__ == '__main__':\n" + "".join(f"    {line}\n" for line in body.splitlines())
    script = tmp_path / "refresh_script.py"
    script.write_text(body)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    if guarded:
        walked, alone = run.stdout.split()
        assert run.returncode == 0 and walked == alone and int(walked) > 0
    else:
        assert run.returncode != 0 and 'must run under `if __name__ == "__main__":`, or set walks.processes=1' in run.stderr


def test_a_refresh_gates_every_walk_it_recomputes(baseline, tmp_path, monkeypatch):
    """The walks gate of a refresh sees the walks it recomputed (the ones it keeps passed it
    unchanged): one bad walk among them stops the refresh before the walks table changes."""
    import kgwalk.stages.walks as walks_stage
    from kgwalk.errors import QualityGateFailed
    from kgwalk.storage import table_version

    cfg, ops, _ = copy_of(baseline, tmp_path)
    version = table_version(cfg.table("walks"))
    recompute = walks_stage.walk_roots

    def with_a_misshapen_walk(*args, **kwargs):
        fresh = recompute(*args, **kwargs)
        steps = fresh.column("steps").to_numpy().copy()
        steps[-1] += 1  # its nodes no longer number steps + 1
        return fresh.set_column(fresh.schema.get_field_index("steps"), "steps", pa.array(steps, fresh.schema.field("steps").type))

    monkeypatch.setattr(walks_stage, "walk_roots", with_a_misshapen_walk)
    with pytest.raises(QualityGateFailed, match=r"walks: .*nodes = steps \+ 1, relations = directions = steps: 1 of [\d,]+ rows fail"):
        run_refresh(cfg, str(write_pipe(tmp_path / "c.txt", ops)))
    assert table_version(cfg.table("walks")) == version


@pytest.mark.parametrize("seed", range(3))
def test_matched_answers_both_memberships_like_two_isins(seed):
    from kgwalk.stages.diff import isin, matched

    rng = np.random.default_rng(seed)
    pool = rng.integers(-(2**63), 2**63 - 1, 500, dtype=np.int64)
    right = rng.choice(pool, 200, replace=False)  # keys unique within right
    left = rng.choice(pool, 300)  # repeats allowed
    chunked = pa.chunked_array([right[:70], right[70:]])
    in_right, in_left = matched(pa.array(left), chunked)
    assert in_right.tolist() == isin(left, right).tolist()
    assert in_left.tolist() == isin(right, left).tolist()
    assert in_left.any() and not in_left.all() and in_right.any() and not in_right.all()


def test_the_differences_a_refresh_hands_on_are_those_its_tables_show(baseline, tmp_path, monkeypatch):
    """The walks step hands the texts and index steps the walks it replaced, the texts step the
    vectors and index steps the sentences it wrote (kgwalk.stages.diff); a step resumed after a
    crash reads the same from two versions of the table. Both must agree, for a change set and
    for a snapshot that relabels an entity."""
    from kgwalk.stages import texts as texts_stage
    from kgwalk.stages import walks as walks_stage
    from kgwalk.stages.diff import new_text_pairs, walks_diff

    handed: dict[str, list] = {"walks": [], "texts": []}
    remember_walks, remember_texts = walks_stage.remember_walks_diff, texts_stage.remember_new_text_pairs
    monkeypatch.setattr(walks_stage, "remember_walks_diff", lambda cfg, shared, diff: (handed["walks"].append(diff), remember_walks(cfg, shared, diff)))
    monkeypatch.setattr(texts_stage, "remember_new_text_pairs",
                        lambda cfg, shared, since, now, pairs: (handed["texts"].append((since, pairs)), remember_texts(cfg, shared, since, now, pairs)))

    def the_tables_agree() -> None:  # the differences up to the current versions, read from the tables
        diff, (since, pairs) = handed["walks"][-1], handed["texts"][-1]
        from_tables = walks_diff(cfg, diff.since, {})
        assert from_tables.since_rows == diff.since_rows
        assert sorted(from_tables.removed.to_pylist(), key=str) == sorted(diff.removed.to_pylist(), key=str)
        assert from_tables.added.to_pylist() == diff.added.to_pylist()  # in table order
        assert new_text_pairs(cfg, since, {}).to_pylist() == pairs.select(["walk_id", "text", "text_id"]).to_pylist()

    cfg, ops, _ = copy_of(baseline, tmp_path)
    run_refresh(cfg, str(write_pipe(tmp_path / "c.txt", ops)))
    assert handed["walks"][-1].added.num_rows and handed["walks"][-1].removed.num_rows
    the_tables_agree()

    relabel = tmp_path / "relabel.nt"
    key_of = dict(zip(*(read_table(cfg.table("entities"), [c]).column(c).to_pylist() for c in ("id", "key"))))
    rel_of = dict(zip(*(read_table(cfg.table("relations"), [c]).column(c).to_pylist() for c in ("id", "key"))))
    edges = read_table(cfg.table("edges"), ["src", "rel", "dst"]).to_pylist()
    relabel.write_text("".join(f"<{key_of[e['src']]}> <{rel_of[e['rel']]}> <{key_of[e['dst']]}> .\n" for e in edges)
                       + '<e1> <http://www.w3.org/2000/01/rdf-schema#label> "a new name" .\n')
    run_refresh(cfg, str(relabel), snapshot=True)
    assert len(handed["walks"]) == len(handed["texts"]) == 2
    texts = handed["texts"][-1][1].column("text").to_pylist()
    assert texts and all("a new name" in t for t in texts)
    the_tables_agree()
