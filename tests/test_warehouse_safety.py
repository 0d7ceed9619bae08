"""The warehouse is safe to share (issue 46): no path a writer takes leaves the KG folder, a
damaged Delta log is refused in one line before anything reads or writes past it, and readers
(query, status, eval, serve) leave every file of the warehouse as it was, so a read-only mount
can be served. Each runs the real CLI on a copy of one small warehouse built per module."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from types import SimpleNamespace
from pathlib import Path

import httpx
import numpy as np
import pytest

from conftest import SAMPLE_KG
from corpus import MODEL, build_in_process, config
from kgwalk.errors import KgwalkError
from kgwalk.index.generations import Generations
from kgwalk.index.qdrant_shards import READ_ONLY_FILES, UNWRITTEN_FILES, private_copy
from kgwalk.refresh.job import run_refresh
from kgwalk.storage import commit_files, log_damage, unlink_beneath

SETTINGS = ["--set", f"embed.model={MODEL}", "--set", "quality.max_rejected_ratio=0.5"]
QUESTION = "who directed Kismet"


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> Path:
    """The sample KG built in this process, then refreshed once, so that the KG tables, walks,
    texts and vectors all have a version after their first (the issue damaged walks' v1)."""
    root = tmp_path_factory.mktemp("warehouse")
    cfg = config(root / "wh", SAMPLE_KG)
    build_in_process(cfg)
    changes = root / "changes.txt"
    changes.write_text("Kismet|directed_by|Ada Newcomer|add\n16 Blocks|starred_actors|David Morse|remove\n")
    run_refresh(cfg, str(changes))
    return cfg.root


def copy_of(refreshed: Path, tmp_path: Path) -> Path:
    """A copy of the warehouse; returns its KG folder (`<warehouse>/t`)."""
    shutil.copytree(refreshed, tmp_path / "wh" / "t", symlinks=True)
    return tmp_path / "wh" / "t"


def kgwalk(kg: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kgwalk.cli", *args, "--warehouse", str(kg.parent), "--name", kg.name, *SETTINGS]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def one_error_line(out: subprocess.CompletedProcess[str]) -> str:
    """The command failed with exit 2 and said why in one line, no traceback."""
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1 and lines[0].startswith("kgwalk: error: "), out.stderr
    return lines[0]


def digest(folder: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under `folder`, links not followed: its kind, mtime and content hash."""
    out = {}
    for path in sorted([folder, *folder.rglob("*")]):
        st = path.lstat()
        if path.is_symlink():
            out[str(path.relative_to(folder))] = ("link", st.st_mtime_ns, os.readlink(path))
        elif path.is_dir():
            out[str(path.relative_to(folder))] = ("dir", st.st_mtime_ns, "")
        else:
            out[str(path.relative_to(folder))] = ("file", st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def outside_folder(tmp_path: Path) -> Path:
    """A folder outside the warehouse with files a writer must never touch."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("not kgwalk's\n")
    (outside / "part-00000-precious.snappy.parquet").write_bytes(b"PAR1 looks like a data file")
    return outside


def serve(kg: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "kgwalk.cli", "serve", "--warehouse", str(kg.parent), "--name", kg.name, "--port", "0", *SETTINGS]
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})


def served_url(process: subprocess.Popen[str]) -> str:
    """The URL `kgwalk serve` says it serves on (it says so once it listens and has warmed up)."""
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("kgwalk: serving "):
            return line.split(" on ")[1].split("/ ")[0]
    raise AssertionError(f"kgwalk serve exited {process.wait()} without serving")


def stop(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)


# -- no path leaves the warehouse --------------------------------------------------------------

def _link_in_table(kg: Path, outside: Path) -> Path:
    (kg / "walks" / "evil").symlink_to(outside)
    return kg / "walks" / "evil"


def _link_to_another_table(kg: Path, outside: Path) -> Path:
    (kg / "walks" / "alias").symlink_to(kg / "texts")  # inside the KG folder: refused all the same
    return kg / "walks" / "alias"


def _linked_log(kg: Path, outside: Path) -> Path:
    shutil.move(kg / "edges" / "_delta_log", outside / "_delta_log")
    (kg / "edges" / "_delta_log").symlink_to(outside / "_delta_log")
    return kg / "edges" / "_delta_log"


def _linked_lock(kg: Path, outside: Path) -> Path:
    (kg / "_writer.lock").unlink(missing_ok=True)
    (kg / "_writer.lock").symlink_to(outside / "precious.txt")
    return kg / "_writer.lock"


def _linked_generation(kg: Path, outside: Path) -> Path:
    (kg / "qdrant" / "g000099").symlink_to(outside)  # past the live one: the next index would clear it as a crashed writer's
    return kg / "qdrant" / "g000099"


def _linked_cache(kg: Path, outside: Path) -> Path:
    (kg.parent / "_cache").symlink_to(outside)
    return kg.parent / "_cache"


def _linked_kg_folder(kg: Path, outside: Path) -> Path:
    moved = shutil.move(kg, outside / "t")
    kg.symlink_to(moved)
    return kg


VERBALIZE_LLM = ["verbalize", "--set", "verbalize.verbalizer=openai", "--set", "verbalize.llm.model=m",
                 "--set", "verbalize.llm.base_url=http://127.0.0.1:9/v1"]
CHANGES = "Kismet|directed_by|Ada Newcomer|remove\n"


@pytest.mark.parametrize(("plant", "commands"), [
    (_link_in_table, [["vacuum", "--keep-hours", "0"], ["vacuum", "--keep-hours", "0", "--dry-run"]]),
    (_link_to_another_table, [["vacuum", "--keep-hours", "0"]]),
    (_linked_log, [["refresh", "--changes", "CHANGES"], ["vacuum", "--keep-hours", "0"]]),
    (_linked_lock, [["vacuum", "--dry-run"], ["status"]]),
    (_linked_generation, [["index"], ["refresh", "--changes", "CHANGES"]]),
    (_linked_cache, [VERBALIZE_LLM, ["vacuum", "--keep-hours", "0"]]),
    (_linked_kg_folder, [["vacuum", "--keep-hours", "0"]]),
], ids=["in a table folder", "to another table", "a table's log", "the writer lock", "an index generation", "the warehouse cache",
        "the KG folder"])
def test_a_symbolic_link_where_a_writer_goes_is_refused_and_what_it_points_to_survives(refreshed, tmp_path, plant, commands):
    kg = copy_of(refreshed, tmp_path)
    outside = outside_folder(tmp_path)
    link = plant(kg, outside)
    changes = tmp_path / "changes.txt"
    changes.write_text(CHANGES)
    outside_before, kg_before = digest(outside), digest(kg.resolve())
    for command in commands:
        line = one_error_line(kgwalk(kg, *[str(changes) if a == "CHANGES" else a for a in command]))
        assert f"{link} is a symbolic link" in line, line
    assert digest(outside) == outside_before  # nothing deleted, written or replaced through the link
    assert digest(kg.resolve()) == kg_before


def test_deletes_and_generation_clean_ups_refuse_a_link_planted_after_the_start(tmp_path):
    """The writers' own file operations, under the lock's check: a link that appears while a
    writer runs is refused there too, and what it points to survives."""
    outside = outside_folder(tmp_path)
    table = tmp_path / "table"
    (table / "part").mkdir(parents=True)
    (table / "evil").symlink_to(outside)
    with pytest.raises(KgwalkError, match="evil is a symbolic link"):
        unlink_beneath(table, "evil/precious.txt")
    with pytest.raises(KgwalkError, match="not a path inside"):
        unlink_beneath(table / "part", "../evil/precious.txt")
    index = tmp_path / "qdrant"
    (index / "g000001").mkdir(parents=True)
    (index / "g000002").symlink_to(outside)
    with pytest.raises(KgwalkError, match="g000002 is a symbolic link"):
        Generations(index).start_next()
    with pytest.raises(KgwalkError, match="g000002 is a symbolic link"):
        Generations(index).drop_unreferenced({"g000001"})
    assert sorted(p.name for p in outside.iterdir()) == ["part-00000-precious.snappy.parquet", "precious.txt"]


def test_vacuum_dry_run_lists_the_files_vacuum_then_deletes(refreshed, tmp_path):
    kg = copy_of(refreshed, tmp_path)
    dry = kgwalk(kg, "vacuum", "--keep-hours", "0", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    *listed, summary = dry.stdout.strip().splitlines()
    assert listed and json.loads(summary)["dry_run"] and sum(json.loads(summary)["files"].values()) == len(listed)
    before = {p for p in kg.rglob("*") if p.is_file()}
    assert kgwalk(kg, "vacuum", "--keep-hours", "0").returncode == 0
    assert {str(p) for p in before - {p for p in kg.rglob("*") if p.is_file()}} == set(listed)


# -- Delta logs are checked before use ---------------------------------------------------------

def _latest_commit(table: Path) -> Path:
    return max((table / "_delta_log").glob("*.json"))


def _without_add(content: bytes) -> bytes:
    return b"".join(line for line in content.splitlines(keepends=True) if not line.startswith(b'{"add"'))


def _cut(content: bytes) -> bytes:
    return content[: len(content) // 2]


def _miscounted(content: bytes) -> bytes:
    """The add action's row count no longer the one its commit wrote."""
    lines = []
    for line in content.splitlines(keepends=True):
        action = json.loads(line)
        if "add" in action:
            stats = json.loads(action["add"]["stats"])
            action["add"]["stats"] = json.dumps({**stats, "numRecords": stats["numRecords"] - 7})
            line = json.dumps(action).encode() + b"\n"
        lines.append(line)
    return b"".join(lines)


DAMAGES = {
    "a commit without its add line": ("walks", _without_add),
    "a commit cut mid-line": ("texts", _cut),
    "a commit that is not JSON": ("entities", lambda _: b"<html>503 Service Unavailable</html>\n"),
    "an empty commit": ("edges", lambda _: b""),
    "a commit whose file disagrees with its row count": ("walks", _miscounted),
}


def log_listing(kg: Path) -> dict[str, list[str]]:
    listing = {str(d.relative_to(kg)): sorted(f.name for f in d.iterdir()) for d in kg.glob("*/_delta_log")}
    return listing | {"qdrant": sorted(p.name for p in (kg / "qdrant").iterdir())}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_log_is_refused_in_one_line_by_query_status_refresh_and_serve(refreshed, tmp_path, damage):
    kg = copy_of(refreshed, tmp_path)
    table, damaged = DAMAGES[damage]
    commit = _latest_commit(kg / table)
    commit.write_bytes(damaged(commit.read_bytes()))
    version = int(commit.stem)
    assert version >= 1
    changes = tmp_path / "changes.txt"
    changes.write_text(CHANGES)
    before = log_listing(kg)

    query = kgwalk(kg, "query", QUESTION)
    served = serve(kg)
    served_out = served.communicate(timeout=300)[1]
    for out in (query, kgwalk(kg, "status"), kgwalk(kg, "refresh", "--changes", str(changes)),
                subprocess.CompletedProcess(served.args, served.returncode, "", served_out)):
        line = one_error_line(out)
        assert f"table {table} at version {version} (" in line and "damaged" in line, line
        assert f"move {kg / table} out of {kg}, then rebuild with `kgwalk build --name t --warehouse {kg.parent}`" in line, line
    assert query.stdout == ""  # no answer from a partial table
    assert log_listing(kg) == before  # the refresh wrote nothing: no half-commit on top of the damage


def test_the_log_check_reads_the_counts_of_commits_kgwalk_makes_itself(tmp_path):
    """The Spark path commits Parquet files it wrote through `commit_files`: delta-rs records no
    counts there, kgwalk does; a lost add line is found by them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "walks"
    table.mkdir()
    for version, rows in enumerate((3, 5)):
        pq.write_table(pa.table({"a": list(range(rows))}), table / f"part-{version}.parquet")
        commit_files(table, [f"part-{version}.parquet"], pa.schema([("a", pa.int64())]))
    assert log_damage(table) is None
    commit = table / "_delta_log" / f"{1:020d}.json"
    commit.write_bytes(_without_add(commit.read_bytes()))
    damage = log_damage(table)
    assert damage is not None and damage.version == 1 and "0 added files where its commitInfo counts 1" in damage.reason


def test_a_missing_commit_is_damage_and_a_commit_before_the_checkpoint_is_not_read(tmp_path):
    import pyarrow as pa
    from deltalake import DeltaTable, write_deltalake

    table = tmp_path / "t"
    for rows in (1, 2, 3, 4):
        write_deltalake(str(table), pa.table({"a": list(range(rows))}), mode="overwrite")
    DeltaTable(str(table)).create_checkpoint()  # at version 3: reads replay nothing before it
    (table / "_delta_log" / f"{0:020d}.json").write_bytes(b"")
    assert log_damage(table) is None and DeltaTable(str(table)).version() == 3
    write_deltalake(str(table), pa.table({"a": [0]}), mode="append")
    write_deltalake(str(table), pa.table({"a": [0]}), mode="append")
    (table / "_delta_log" / f"{4:020d}.json").unlink()
    damage = log_damage(table)
    assert damage is not None and damage.version == 4 and damage.reason == "its commit file is missing"


# -- readers never write -----------------------------------------------------------------------

def test_a_private_copy_links_what_qdrant_only_reads_and_copies_the_rest_with_its_holes(refreshed, tmp_path):
    shard = refreshed / "qdrant" / "g000001" / "t_walks"  # the build's walks: a sealed base, the refresh's base
    private_copy(shard, tmp_path / "copy")
    files = [f for f in shard.rglob("*") if f.is_file() and not f.name.startswith(".atomicwrite")]
    assert {f.name for f in files} & READ_ONLY_FILES and {f.name for f in files} - READ_ONLY_FILES
    assert {f.name for f in files} & UNWRITTEN_FILES  # the default turbo8 codes of a sealed base: linked, not copied
    for original in files:
        copy = tmp_path / "copy" / original.relative_to(shard)
        if original.name in READ_ONLY_FILES | UNWRITTEN_FILES:
            assert copy.is_symlink() and copy.resolve() == original.resolve()
        else:
            assert not copy.is_symlink() and copy.read_bytes() == original.read_bytes()
            assert copy.stat().st_blocks <= original.stat().st_blocks  # holes stay holes


def test_writes_to_a_private_copy_leave_the_linked_originals_as_they_were(refreshed, tmp_path):
    """The files a private copy links are Qdrant's to read only: deleting points of the copy and upserting
    others (ids it holds, with other vectors, and new ids), as a refresh writes beside a sealed base, changes
    no byte of the original shard."""
    from qdrant_edge import ScrollRequest, UpdateOperation

    from kgwalk.index.base import point_ids
    from kgwalk.index.qdrant_shards import load_shard, upsert_records

    shard = refreshed / "qdrant" / "g000001" / "t_walks"
    before = digest(shard)
    private_copy(shard, tmp_path / "copy")
    copy = load_shard(tmp_path / "copy")
    records, _ = copy.scroll(ScrollRequest(limit=64, with_payload=True, with_vector=True))
    copy.update(UpdateOperation.delete_points([r.id for r in records[:16]]))
    vectors = np.random.default_rng(0).standard_normal((48, len(records[0].vector))).astype(np.float32)
    upsert_records(copy, records[16:], vectors)
    new = [SimpleNamespace(id=i, vector=r.vector, payload=r.payload) for r, i in zip(records[:8], point_ids(np.arange(10**9, 10**9 + 8)))]
    upsert_records(copy, new)
    copy.flush()
    copy.close()
    assert digest(shard) == before


def read_everything(kg: Path, tmp_path: Path) -> None:
    """What the readers do: `kgwalk query`, `status` and `eval`, and a served /retrieve and /status."""
    questions = tmp_path / "metaqa" / "1-hop"
    questions.mkdir(parents=True)
    (questions / "qa_dev.txt").write_text("who directed [Kismet]\tWilliam Dieterle\n")
    scratch = tmp_path / "scratch"  # the readers' private copies of the index (kgwalk.index.qdrant_shards)
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    for args in (["query", QUESTION], ["status"], ["eval", "metaqa", "--data", str(tmp_path / "metaqa"), "--hops", "1"]):
        out = kgwalk(kg, *args, env=env)
        assert out.returncode == 0, out.stderr
    assert "Kismet" in kgwalk(kg, "query", QUESTION, env=env).stdout
    process = serve(kg, env)
    try:
        url = served_url(process)
        answer = httpx.post(url + "/retrieve", json={"question": QUESTION}, timeout=60)
        assert answer.status_code == 200 and answer.json()["nodes"]
        assert httpx.get(url + "/status", timeout=60).status_code == 200
    finally:
        stop(process)
    assert not list(scratch.iterdir())  # each reader removed its copies as it closed


def test_readers_leave_every_file_of_the_warehouse_as_it_was(refreshed, tmp_path):
    kg = copy_of(refreshed, tmp_path)
    before = digest(kg.parent)
    read_everything(kg, tmp_path)
    assert digest(kg.parent) == before


def test_a_read_only_mount_of_the_warehouse_is_queried_and_served(refreshed, tmp_path):
    source = copy_of(refreshed, tmp_path / "source")
    mount = tmp_path / "ro"
    mount.mkdir()
    bound = subprocess.run(["mount", "--bind", str(source.parent), str(mount)], capture_output=True, text=True)
    if bound.returncode != 0:
        pytest.skip(f"bind mounts are not permitted here (root and CAP_SYS_ADMIN needed): {bound.stderr.strip()}")
    try:
        remounted = subprocess.run(["mount", "-o", "remount,ro,bind", str(mount)], capture_output=True, text=True)
        assert remounted.returncode == 0, remounted.stderr
        with pytest.raises(OSError, match="Read-only file system"):
            (mount / "t" / "probe").write_text("")
        read_everything(mount / "t", tmp_path)
    finally:
        subprocess.run(["umount", str(mount)], check=True)
