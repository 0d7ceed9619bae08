"""Refresh under failure and concurrency: kill -9 anywhere then rerun, one writer at a time,
readers see the old or the new index. Runs the real CLI in subprocesses."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from corpus import MODEL, config, corpus, corpus_ids, index_points
from kgwalk.faults import CRASH_ENV
from kgwalk.index.store import collection_names, open_store
from kgwalk.refresh.status import status_data
from kgwalk.storage import read_table, read_version
from test_refresh import as_file, baseline, copy_of  # noqa: F401 - baseline is a fixture

TESTS = Path(__file__).resolve().parent
KILL_POINTS = [
    "kg.labels_written", "kg.done",
    "walks.computed", "walks.written", "walks.done",
    "texts.written", "texts.done",
    "vectors.embedded", "vectors.written", "vectors.done",
    "index.prepared", "index.upserting", "index.before_commit", "index.committed", "index.done",
]


def refresh_cli(cfg, changes: Path, crash_at: str | None = None, wait: bool = True):
    env = {**os.environ, "PYTHONPATH": str(TESTS)}
    env.pop(CRASH_ENV, None)
    if crash_at:
        env[CRASH_ENV] = crash_at
    args = [sys.executable, "-m", "kgwalk.cli", "refresh", "--warehouse", cfg.warehouse, "--name", cfg.name,
            "--set", f"embed.model={MODEL}", "--set", "quality.max_rejected_ratio=0.5", "--changes", str(changes)]
    if not wait:
        return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("point", KILL_POINTS)
def test_refresh_killed_anywhere_is_completed_by_rerunning_it(baseline, tmp_path, point):  # noqa: F811
    cfg, ops, expected = copy_of(baseline, tmp_path)
    changes = as_file(ops, tmp_path, "pipe")
    crashed = refresh_cli(cfg, changes, crash_at=point)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    rerun = refresh_cli(cfg, changes)
    assert rerun.returncode == 0, rerun.stderr
    assert corpus(cfg) == expected
    rejected = read_table(cfg.table("rejected"))
    assert rejected.num_rows == 2  # recorded once, however often the step ran


def test_a_crash_before_the_index_commit_leaves_readers_on_the_old_index(baseline, tmp_path):  # noqa: F811
    cfg, ops, expected = copy_of(baseline, tmp_path)
    ids = corpus_ids(cfg)
    before = index_points(cfg, *ids)
    changes = as_file(ops, tmp_path, "pipe")
    assert refresh_cli(cfg, changes, crash_at="index.before_commit").returncode == -signal.SIGKILL
    assert index_points(cfg, *ids) == before
    assert refresh_cli(cfg, changes).returncode == 0
    assert corpus(cfg) == expected


def test_a_second_writer_is_refused_and_a_killed_holder_frees_the_lock(baseline, tmp_path):  # noqa: F811
    cfg, ops, expected = copy_of(baseline, tmp_path)
    changes = as_file(ops, tmp_path, "pipe")
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from corpus import config; from kgwalk.state import writer_lock\n"
         "with writer_lock(config(__import__('pathlib').Path(sys.argv[1])), 'test holder'):\n"
         "    print('held', flush=True); time.sleep(120)", cfg.warehouse],
        env={**os.environ, "PYTHONPATH": str(TESTS)}, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    busy = refresh_cli(cfg, changes)
    assert busy.returncode == 75 and "test holder" in busy.stderr and "Traceback" not in busy.stderr
    status = subprocess.run([sys.executable, "-m", "kgwalk.cli", "status", "--warehouse", cfg.warehouse, "--name", cfg.name],
                            capture_output=True, text=True)
    assert "writer lock: held by test holder" in status.stdout
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    done = refresh_cli(cfg, changes)
    assert done.returncode == 0, done.stderr
    assert corpus(cfg) == expected
    status = subprocess.run([sys.executable, "-m", "kgwalk.cli", "status", "--warehouse", cfg.warehouse, "--name", cfg.name],
                            capture_output=True, text=True)
    assert status.stdout.count("up to date") == 4 and "writer lock: free" in status.stdout
    # The walks went layered (base from the build, a delta from the refresh); nodes were copied.
    walks_c = collection_names(cfg)[1]
    assert re.search(rf"\n +generation g000002: .*{walks_c} base g000001 \([\d,]+ points\) \+ delta [1-9]", status.stdout), status.stdout


def _walk_sets(cfg) -> dict[int, frozenset]:
    walks = read_table(cfg.table("walks"), ["walk_id", "root"]).to_pylist()
    out: dict[int, set] = {}
    for w in walks:
        out.setdefault(w["root"], set()).add(w["walk_id"])
    return {r: frozenset(s) for r, s in out.items()}


def test_queries_during_a_refresh_see_the_old_or_the_new_index(baseline, tmp_path):  # noqa: F811
    root, _, _, _ = baseline
    cfg, ops, expected = copy_of(baseline, tmp_path)
    cfg.serve.max_k = 50  # every walk of a changed root, beyond what a client may ask for
    old, new = _walk_sets(cfg), _walk_sets(config(root / "expected"))
    nodes_c, walks_c = collection_names(cfg)
    rng = np.random.default_rng(0)
    early = open_store(cfg)  # opened before the refresh: must keep answering from its generation
    early.search(nodes_c, np.ones(64, np.float32), 3)

    def view() -> str:
        """Which corpus one reader sees: 'old', 'new' or 'same' (roots whose walks did not change)."""
        store = open_store(cfg)
        sides = set()
        for node in store.search(nodes_c, rng.standard_normal(64).astype(np.float32), 1000):  # every node
            root = node.payload["id"]
            seen = frozenset(h.id for h in store.search(walks_c, np.ones(64, np.float32), 1000, root=root))
            assert seen and all(h.payload["root"] == root for h in store.search(walks_c, np.ones(64, np.float32), 5, root=root))
            assert seen in (old.get(root), new.get(root)), "a node with walks of neither version"
            if old.get(root) != new.get(root):
                sides.add("old" if seen == old.get(root) else "new")
        store.close()
        assert len(sides) <= 1, "one query saw the old and the new index mixed"
        return sides.pop() if sides else "same"

    proc = refresh_cli(cfg, as_file(ops, tmp_path, "pipe"), wait=False)
    views = []
    while proc.poll() is None:
        views.append(view())
    assert proc.returncode == 0, proc.stderr.read()
    views.append(view())
    assert "old" in views[:-1] or "same" in views[:-1]
    assert views[-1] in ("new", "same") and corpus(cfg) == expected
    first_new = views.index("new") if "new" in views else len(views)
    assert all(v in ("new", "same") for v in views[first_new:])  # never back to the old index
    early.search(nodes_c, np.ones(64, np.float32), 3)  # the previous generation is still there
    early.close()


def test_a_long_lived_retriever_answers_from_the_refreshed_index_once_it_lands(baseline, tmp_path):  # noqa: F811
    """`kgwalk serve` keeps one retriever: after a refresh, its next query reads the new index."""
    from kgwalk.query.retriever import Retriever

    root, _, _, _ = baseline
    cfg, ops, expected = copy_of(baseline, tmp_path)
    cfg.serve.max_k = 50  # every walk of a changed root, beyond what a client may ask for
    old, new = _walk_sets(cfg), _walk_sets(config(root / "expected"))
    labels = dict(zip(*(read_table(cfg.table("entities"), [c]).column(c).to_pylist() for c in ("id", "label"))))
    changed = [r for r in old if r in new and old[r] != new[r] and labels.get(r)][:5]
    assert changed
    questions = [f"what about {labels[r]}" for r in changed]

    def answers(retriever: Retriever) -> list[set[int]]:
        return [{w.walk_id for n in retriever.retrieve(q, k_nodes=3, k_walks=50).nodes for w in n.walks} for q in questions]

    long_lived = Retriever(cfg)
    before = answers(long_lived)
    assert refresh_cli(cfg, as_file(ops, tmp_path, "pipe")).returncode == 0
    fresh = Retriever(cfg)
    after = answers(fresh)
    assert after != before and answers(long_lived) == after
    long_lived.close()
    fresh.close()


def vacuum_cli(cfg, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "kgwalk.cli", "vacuum", "--warehouse", cfg.warehouse, "--name", cfg.name, *args],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def parquet_files(cfg) -> set[Path]:
    return set(Path(cfg.root).rglob("*.parquet"))


def a_triple(cfg, ops: list[tuple[str, str, str, str]]) -> tuple[str, str, str]:
    """A triple of the KG as it is now: the first one the change set added and kept."""
    present = {}
    for h, r, t, op in ops:
        present[(h, r, t)] = op == "add"
    return next(triple for triple, added in present.items() if added)


def test_vacuum_deletes_the_files_of_versions_nothing_reads(baseline, tmp_path):  # noqa: F811
    cfg, ops, expected = copy_of(baseline, tmp_path)
    assert refresh_cli(cfg, as_file(ops, tmp_path, "pipe")).returncode == 0
    triple = a_triple(cfg, ops)
    for k, op in enumerate(("remove", "add")):  # two more refreshes, the second undoing the first
        path = tmp_path / f"again{k}.txt"
        path.write_text("|".join([*triple, op]) + "\n")
        assert refresh_cli(cfg, path).returncode == 0
    assert corpus(cfg) == expected
    files = parquet_files(cfg)
    assert read_version(cfg.table("walks"), 0).num_rows  # time travel to the build's walks still works

    assert vacuum_cli(cfg)["files"]["walks"] == 0  # by default files stay 24 hours after a table stops using them
    dry = vacuum_cli(cfg, "--keep-hours", "0", "--dry-run")
    assert dry["dry_run"] and parquet_files(cfg) == files
    done = vacuum_cli(cfg, "--keep-hours", "0")
    assert done["files"] == dry["files"] and done["files"]["walks"] and done["files"]["texts"]
    assert len(files - parquet_files(cfg)) == sum(n for table, n in done["files"].items())  # the state table's files are Parquet too
    assert not parquet_files(cfg) - files
    assert sum(vacuum_cli(cfg, "--keep-hours", "0")["files"].values()) == 0  # nothing left to delete, though the log still names those files
    with pytest.raises(Exception, match="(?i)not found|no such file"):  # the build's walks are gone ...
        read_version(cfg.table("walks"), 0)
    assert corpus(cfg) == expected  # ... what is read now is whole
    previous = read_state_versions(cfg)
    assert not [d for d in status_data(cfg)["derived"] if d["behind"]]
    again = tmp_path / "again2.txt"
    again.write_text("|".join([*triple, "remove"]) + "\n")
    assert refresh_cli(cfg, again).returncode == 0  # and refreshes go on from it
    assert read_state_versions(cfg)["walks"] == previous["walks"] + 1  # the vacuum committed nothing: no table looks behind


def read_state_versions(cfg) -> dict[str, int]:
    from kgwalk.state import read_state

    return {table: row.version for table, row in read_state(cfg).items()}


@pytest.mark.parametrize("point", ["walks.written", "texts.done", "index.prepared"])
def test_a_vacuum_between_a_killed_refresh_and_its_rerun_keeps_what_the_rerun_reads(baseline, tmp_path, point):  # noqa: F811
    """The killed refresh left tables whose state rows still name the versions before it: the
    rerun diffs from those, so their files must stay, whatever --keep-hours says."""
    cfg, ops, expected = copy_of(baseline, tmp_path)
    changes = as_file(ops, tmp_path, "pipe")
    assert refresh_cli(cfg, changes, crash_at=point).returncode == -signal.SIGKILL
    vacuum_cli(cfg, "--keep-hours", "0")
    rerun = refresh_cli(cfg, changes)
    assert rerun.returncode == 0, rerun.stderr
    assert corpus(cfg) == expected


def test_vacuum_refuses_bad_input_in_one_line(tmp_path):
    for args, message in ((["--keep-hours", "-1"], "--keep-hours must be >= 0"), ([], "no KG 'nothing'")):
        out = subprocess.run([sys.executable, "-m", "kgwalk.cli", "vacuum", "--warehouse", str(tmp_path), "--name", "nothing", *args],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
