"""What every writer shares: table names and their versions, the state record, the writer lock.

Every derived table records, per row of the Delta table `state`, the version it is at and the
versions of its inputs it was computed from (each table's inputs are declared with its stage in
kgwalk.stages). A refresh diffs each input between the recorded version and the current one, so
any step can be re-run after a crash. Build and refresh take the same writer lock.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import BusyError, KgwalkError
from kgwalk.storage import check_logs, link_refusal, open_no_follow, read_table, refuse_links, table_exists, table_version, warehouse_cache, write_table

KG_TABLES = ("edges", "entities", "relations")
# the command that makes each table another reads, for the error a missing one ends in (readers
# below the stages, e.g. the query side, say it too)
_PRODUCER = {"edges": "ingest", "entities": "ingest", "relations": "ingest", "walks": "walks", "texts": "verbalize", "vectors": "embed"}

STATE_SCHEMA = pa.schema(
    [("table", pa.string()), ("version", pa.int64()), ("reflects", pa.string()), ("updated", pa.string())]
)


def versions(cfg: Config, tables: tuple[str, ...]) -> dict[str, int]:
    """Current versions of tables; a missing one fails with the command that makes it."""
    return {t: table_version(cfg.table(t), what=_PRODUCER[t]) for t in tables}


@dataclass
class TableState:
    table: str
    version: int
    reflects: dict[str, Any]
    updated: str


def read_state(cfg: Config) -> dict[str, TableState]:
    if not table_exists(cfg.table("state")):
        return {}
    rows = read_table(cfg.table("state")).to_pylist()
    return {r["table"]: TableState(r["table"], r["version"], json.loads(r["reflects"]), r["updated"]) for r in rows}


def record(cfg: Config, table: str, version: int, reflects: dict[str, Any]) -> None:
    """Set one table's row (a new version of `state`; its history is the log of every change)."""
    state = read_state(cfg)
    now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    state[table] = TableState(table, version, reflects, now)
    rows = [asdict(s) | {"reflects": json.dumps(s.reflects, sort_keys=True)} for s in state.values()]
    write_table(cfg.table("state"), pa.Table.from_pylist(rows, STATE_SCHEMA))


def fingerprint(value: Any) -> str:
    """A short stable hash of settings (walk spec, verbalizer, model), to refuse refreshing a
    corpus that was built with other settings."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def lock_path(cfg: Config) -> Path:
    return cfg.root / "_writer.lock"


def table_folders(root: Path) -> list[Path]:
    """The Delta tables of a KG folder: its folders with a log (a link is none)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if not p.is_symlink() and (p / "_delta_log").is_dir())


def check_kg_folder(cfg: Config) -> None:
    """What a writer checks before it touches the KG folder (kgwalk.storage says why): no symbolic
    link in it or in the warehouse's cache, and no table whose Delta log is damaged (a refresh
    would build on a partial table, a vacuum delete the files a damaged commit lost). Each
    refused in one line."""
    refuse_links(cfg.root)
    refuse_links(warehouse_cache(cfg.warehouse))
    check_logs(table_folders(cfg.root))


# KG folders whose writer lock this process holds, per thread: a stage run inside a build is
# already under the build's lock.
_held: set[tuple[Path, int]] = set()


@contextmanager
def writer_lock(cfg: Config, what: str) -> Iterator[None]:
    """One writer (build, a stage, refresh) per KG at a time. An flock: the kernel releases it
    when its holder dies, even by SIGKILL, so a crashed run never blocks the next one. The file
    says who holds it, for the refusal message. Re-entrant within one thread (`run_build` holds it
    while each `run_*` stage takes it again); any other holder is refused with BusyError."""
    key = (cfg.root.absolute(), threading.get_ident())
    if key in _held:
        yield
        return
    path = lock_path(cfg)
    created = not cfg.root.exists()
    if cfg.root.is_symlink():
        raise KgwalkError(link_refusal(cfg.root))
    try:  # also the check that the warehouse is writable, before any work starts
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_no_follow(path, os.O_RDWR | os.O_CREAT)
    except OSError as e:
        raise KgwalkError(f"cannot write to the warehouse {cfg.root}: {e.strerror}; pass --warehouse (conf: warehouse) a writable folder") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
            raise BusyError(f"another kgwalk writer holds {path} ({holder}); try again when it has finished") from None
        check_kg_folder(cfg)  # under the lock: no other writer is halfway through a commit
        since = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{what}, pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode(), 0)
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)
    except BaseException:
        if created:  # a writer that failed on a KG it created leaves no lock file, and no folder if it wrote nothing;
            path.unlink()  # what it did write says why it failed (a failed first ingest: its gate reports and rejected lines)
            if not any(cfg.root.iterdir()):
                cfg.root.rmdir()
        raise
    finally:
        os.close(fd)  # releases the lock
