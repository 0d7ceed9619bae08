"""Delta tables through delta-rs (the `deltalake` package): the warehouse every stage reads and writes.

Spark jobs use delta-spark instead when its JVM classes are on the classpath (see kgwalk.spark);
both speak the same table format.
"""

from __future__ import annotations

import errno
import json
import os
import queue
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake

from kgwalk.errors import KgwalkError


def user_cache(kind: str) -> Path:
    """Where kgwalk keeps `kind` of what it derives once per user and reuses (model exports,
    distillations, question vectors): `$XDG_CACHE_HOME/kgwalk/<kind>`, else `~/.cache/kgwalk/<kind>`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgwalk" / kind

def warehouse_cache(warehouse: str | Path) -> Path:
    """The folder of what a warehouse's KGs share and can make again (the LLM sentence cache)."""
    return Path(warehouse) / "_cache"


# Every commit we make carries what it was computed from under this key (commit info), so a
# rerun after a crash can tell whether a step's output already landed.
METADATA_KEY = "kgwalk"
# The files and rows a commit of `commit_files` adds, in delta-rs' operationMetrics names: delta-rs
# counts them itself only for its own writes, and the log check (`log_damage`) compares them.
COUNTS_KEY = "kgwalkCounts"


def _commit_properties(metadata: dict[str, Any] | None, counts: dict[str, int] | None = None) -> CommitProperties | None:
    custom = {METADATA_KEY: json.dumps(metadata, sort_keys=True)} if metadata else {}
    if counts:
        custom[COUNTS_KEY] = json.dumps(counts, sort_keys=True)
    return CommitProperties(custom_metadata=custom) if custom else None


def commit_metadata(path: str | Path) -> dict[str, Any]:
    """The kgwalk metadata of the table's latest commit ({} if it has none)."""
    info = open_table(path).history(1)[0]  # every commit has its commitInfo: open_table checked the log
    raw = info.get(METADATA_KEY) or info.get("userMetadata")  # delta-spark writes userMetadata
    try:
        return json.loads(raw) if raw else {}
    except (TypeError, ValueError):
        return {}


def table_version(path: str | Path, what: str = "") -> int:
    return open_table(path, what).version()


def read_version(path: str | Path, version: int, columns: list[str] | None = None) -> pa.Table:
    """One earlier version of a table (Delta time travel)."""
    return scan(path, version=version, columns=columns).read_all()


def read_rows(path: str | Path, version: int, columns: list[str], key: str | None = None, values: Iterable[int] = ()) -> pa.Table:
    """One version of a table, or only its rows whose integer column `key` is among `values`,
    filtered by delta-rs' own engine: only those rows reach Python."""
    predicate = None
    if key is not None:
        listed = ", ".join(str(int(v)) for v in values)
        predicate = f"{key} IN ({listed})" if listed else "false"
    return scan(path, version=version, columns=columns, predicate=predicate).read_all()


def scan(path: str | Path, *, version: int | None = None, columns: list[str] | None = None,
         predicate: str | None = None, what: str = "") -> pa.RecordBatchReader:
    """A table's rows (the current version, or `version`) as a stream of batches read by
    delta-rs' own engine, `predicate` (SQL) applied there. Row order is not kept.

    Every kgwalk read goes through here, never through pyarrow.dataset (`to_pyarrow_table`,
    `to_pyarrow_dataset`): those reads run Arrow's I/O threads through delta-rs' Python filesystem
    handler, and Arrow can still be tearing those threads down at interpreter exit, which aborts a
    command that has succeeded ("terminate called without an active exception", SIGABRT: 2 of 12
    `kgwalk status` runs on this machine). pyarrow.dataset also imports pandas, a quarter of a second.
    """
    dt = open_table(path, what)
    if version is not None:
        dt.load_as_version(version)  # not DeltaTable(path, version=...): that aborts the interpreter at exit
    # the RecordBatchReader, not pa.table(): that would import pandas to ask whether it got a DataFrame
    reader = pa.RecordBatchReader.from_stream(dt.scan(columns=columns, predicate=predicate))
    schema = pa.schema([f.with_type(_VIEWLESS.get(f.type, f.type)) for f in reader.schema])
    if schema == reader.schema:
        return reader
    return pa.RecordBatchReader.from_batches(schema, (batch.cast(schema) for batch in reader))


# delta-rs' engine hands strings over as views; the rest of kgwalk reads them as plain Arrow strings
_VIEWLESS = {pa.string_view(): pa.string(), pa.binary_view(): pa.binary()}


def table_exists(path: str | Path) -> bool:
    return DeltaTable.is_deltatable(str(path))


def open_table(path: str | Path, what: str = "") -> DeltaTable:
    """The table at its latest version, its log checked first (`check_logs`): a damaged log ends
    in one line, never in delta-rs' traceback or in rows of a partial version."""
    if not table_exists(path):
        hint = f" (run `kgwalk {what}` first)" if what else ""
        raise KgwalkError(f"no Delta table at {path}{hint}")
    check_logs([Path(path)])
    return DeltaTable(str(path))


def read_table(path: str | Path, columns: list[str] | None = None, what: str = "") -> pa.Table:
    """The table's current version as Arrow."""
    return scan(path, columns=columns, what=what).read_all()


# zstd, not delta-rs' default snappy: template sentences repeat their relation phrases, and level 3 keeps the 1M-edge
# KG's texts in 33 bytes a walk against 43, its walks in 18 against 21, for ~0.2 s more a million rows written.
_WRITER_PROPERTIES = WriterProperties(compression="ZSTD", compression_level=3)


def write_table(
    path: str | Path,
    data: pa.Table | pa.RecordBatchReader | Iterable[pa.RecordBatch],
    schema: pa.Schema | None = None,
    mode: str = "overwrite",
    metadata: dict[str, Any] | None = None,
    before_commit: Callable[[], None] | None = None,
) -> int:
    """Write Arrow data as a new Delta version (overwrite by default); returns the version written.

    Batches stream straight into the table, so a stage never has to hold its whole output; they
    may come from a scan of this table's previous version. `before_commit` runs once the last
    batch is made and before the commit: a check of what the batches held (a quality gate summed
    batch by batch) that raises keeps the version unwritten, and its error is raised as it is.
    """
    failed: list[BaseException] = []
    if not isinstance(data, (pa.Table, pa.RecordBatchReader)) or before_commit is not None:
        schema = schema or getattr(data, "schema", None)
        if schema is None:
            raise ValueError("schema is required when writing an iterable of batches")
        source = data.to_batches() if isinstance(data, pa.Table) else data
        data = pa.RecordBatchReader.from_batches(schema, _made_aside(source, before_commit, failed))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        write_deltalake(
            str(path), data, mode=mode, schema_mode="overwrite" if mode == "overwrite" else None,
            commit_properties=_commit_properties(metadata), writer_properties=_WRITER_PROPERTIES,
        )
    except Exception:
        if failed:  # delta-rs wraps a producer's error in its own
            raise failed[0] from None
        raise
    return DeltaTable(str(path)).version()


_BATCHES_AHEAD = 2  # what a producer may run ahead of the writer: the memory a streamed write holds


def _made_aside(source: Iterable[pa.RecordBatch], before_commit: Callable[[], None] | None, failed: list[BaseException]) -> Iterator[pa.RecordBatch]:
    """`source`'s batches, then `before_commit()`, run on a thread of their own. The writer pulls
    batches on delta-rs' runtime threads, where a producer that reads a Delta table (delta-rs'
    scan blocks on a runtime of its own) panics: "Cannot start a runtime from within a runtime".
    A producer's error goes into `failed` and ends the stream."""
    ready: queue.Queue[Any] = queue.Queue(_BATCHES_AHEAD)
    end, stop = object(), threading.Event()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.2)
                return True
            except queue.Full:
                pass
        return False  # the writer stopped pulling (it failed): so does the producer

    def produce() -> None:
        try:
            for batch in source:
                if not put(batch):
                    return
            if before_commit is not None:
                before_commit()
        except BaseException as e:  # noqa: BLE001 - handed to the writer's side, raised there
            failed.append(e)
        put(end)

    threading.Thread(target=produce, name="kgwalk-write-producer", daemon=True).start()
    try:
        while (item := ready.get()) is not end:
            yield item
        if failed:
            raise failed[0]
    finally:
        stop.set()


def commit_files(path: str | Path, files: list[str], schema: pa.Schema, metadata: dict[str, Any] | None = None) -> int:
    """Commit Parquet files already written inside the table folder (`files` relative to it) as
    a new version that replaces the table's contents (creating the table if needed), without
    copying a byte: the files become the table's. Returns the version written."""
    import time

    import pyarrow.parquet as pq
    from deltalake import Schema
    from deltalake.transaction import AddAction, create_table_with_add_actions

    root = Path(path)
    now = int(time.time() * 1000)
    actions, total = [], 0
    for name in files:
        file = root / name
        rows = pq.read_metadata(file).num_rows
        if rows:
            stats = json.dumps({"numRecords": rows})  # lets readers count rows without opening files
            actions.append(AddAction(name, file.stat().st_size, {}, now, True, stats))
            total += rows
    delta_schema = Schema.from_arrow(schema)
    properties = _commit_properties(metadata, {"num_added_files": len(actions), "num_added_rows": total})
    if table_exists(root):
        DeltaTable(str(root)).create_write_transaction(actions, "overwrite", delta_schema, commit_properties=properties)
    else:
        create_table_with_add_actions(str(root), delta_schema, actions, mode="overwrite", commit_properties=properties)
    return DeltaTable(str(root)).version()


def table_files(table: DeltaTable) -> list[str]:
    """The Parquet files of the table's loaded version. delta-rs gives local files as
    percent-encoded paths (`/my%20wh/...`, `%25` for a `%`); Ray, Arrow and Spark take a local file
    by its path and would look for a literal `%20`, so local files are returned decoded."""
    return [_local_path(uri) for uri in table.file_uris()]


def _local_path(uri: str) -> str:
    parsed = urllib.parse.urlsplit(uri)
    return urllib.parse.unquote(parsed.path) if parsed.scheme in ("", "file") else uri


def current_files(path: str | Path, what: str = "") -> list[str]:
    """The Parquet files of the current version: never list the folder, it holds removed files."""
    return table_files(open_table(path, what))


def row_count(path: str | Path, what: str = "") -> int:
    """Rows of the current version, from its files' Parquet footers (no data read): a progress
    bar's total."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in current_files(path, what))


# -- the Delta log, checked before use ---------------------------------------------------------
# delta-rs reads a commit file without its `add` line, or an empty one, as a smaller table without
# a word, and one cut mid-line as a Rust traceback. So each commit a read replays (those since the
# latest checkpoint) is checked first, from the log alone: its lines are JSON, and the files and
# rows it adds and the files it removes are those its commit info counts (delta-rs' operationMetrics;
# delta-spark's names; COUNTS_KEY for `commit_files`). Checked once per state of the log files.

_COMMIT_FILE = re.compile(r"(\d{20})\.json")
_CHECKPOINT_FILE = re.compile(r"(\d{20})\.checkpoint(?:\.[^/]+)?\.parquet")
# commit info counts, by kgwalk's name: the names delta-rs, then delta-spark, give them
_COUNTED = {"added files": ("num_added_files", "numFiles"), "added rows": ("num_added_rows", "numOutputRows"),
            "removed files": ("num_removed_files", "numRemovedFiles")}


@dataclass(frozen=True)
class LogDamage:
    """The first damaged commit of a table's log: its version, its commit file (relative to the
    table's KG folder) and what is wrong with it."""

    version: int
    file: str
    reason: str


_checked: dict[str, tuple[tuple[Any, ...], LogDamage | None]] = {}  # table path: (its replayed commit files' stats, the verdict)


def log_damage(path: str | Path) -> LogDamage | None:
    """The first damaged commit among those a read of the table's latest version replays, or None
    (also for a folder without a log)."""
    log = Path(path) / "_delta_log"
    commits: dict[int, os.stat_result] = {}
    checkpoint = -1
    try:
        with os.scandir(log) as entries:
            for entry in entries:
                if found := _COMMIT_FILE.fullmatch(entry.name):
                    commits[int(found[1])] = entry.stat(follow_symlinks=False)
                elif found := _CHECKPOINT_FILE.fullmatch(entry.name):
                    checkpoint = max(checkpoint, int(found[1]))
    except (FileNotFoundError, NotADirectoryError):
        return None
    replayed = range(checkpoint + 1, max(commits, default=checkpoint) + 1)
    signature = tuple((v, commits[v].st_size, commits[v].st_mtime_ns) if v in commits else (v,) for v in replayed)
    known = _checked.get(str(path))
    if known is not None and known[0] == signature:
        return known[1]
    damage = None
    for version in replayed:
        reason = "its commit file is missing" if version not in commits else _commit_damage((log / f"{version:020d}.json").read_bytes())
        if reason:
            damage = LogDamage(version, f"{Path(path).name}/_delta_log/{version:020d}.json", reason)
            break
    _checked[str(path)] = (signature, damage)
    return damage


def _commit_damage(content: bytes) -> str | None:
    """What is wrong with one commit file's content, or None."""
    lines = [line for line in content.splitlines() if line.strip()]
    if not lines:
        return "its commit file is empty"
    actions = []
    for line in lines:
        try:
            action = json.loads(line)
        except ValueError:
            action = None
        if not isinstance(action, dict):
            return "its commit file is cut short or not JSON"
        actions.append(action)
    info = next((a["commitInfo"] for a in actions if isinstance(a.get("commitInfo"), dict)), None)
    if info is None:  # delta-rs and delta-spark write it first: a commit without one lost lines
        return "its commit has no commitInfo"
    adds = [a["add"] for a in actions if isinstance(a.get("add"), dict)]
    rows = [r for r in map(_num_records, adds) if r is not None]
    found = {"added files": len(adds), "removed files": sum(1 for a in actions if "remove" in a),
             "added rows": sum(rows) if len(rows) == len(adds) else None}  # an add without stats: rows not compared
    for what, recorded in _counts(info).items():
        if found[what] is not None and found[what] != recorded:
            return f"its actions hold {found[what]:,} {what} where its commitInfo counts {recorded:,}"
    return None


def _counts(info: dict[str, Any]) -> dict[str, int]:
    """The counts a commit info records, by kgwalk's name (those it lacks left out)."""
    metrics = info.get("operationMetrics")
    if not isinstance(metrics, dict):
        try:
            metrics = json.loads(info.get(COUNTS_KEY) or "{}")
        except (TypeError, ValueError):
            metrics = None
    if not isinstance(metrics, dict):
        return {}
    counts = {}
    for what, names in _COUNTED.items():
        value = next((str(metrics[n]) for n in names if n in metrics), "")
        if value.isdigit():  # delta-spark writes them as strings; one not recorded is not compared
            counts[what] = int(value)
    return counts


def _num_records(add: dict[str, Any]) -> int | None:
    try:
        stats = json.loads(add.get("stats") or "null")
    except (TypeError, ValueError):
        return None
    records = stats.get("numRecords") if isinstance(stats, dict) else None
    return records if isinstance(records, int) else None


def check_logs(tables: list[Path]) -> None:
    """Refuse in one line (KgwalkError) to use tables whose Delta log is damaged, naming each with
    the version where its damage starts, and saying what repairs them."""
    damaged = [(path, damage) for path in tables if (damage := log_damage(path)) is not None]
    if not damaged:
        return
    listed = " and ".join(f"{_shown(path.name)} at version {d.version} ({_shown(d.file)}: {d.reason})" for path, d in damaged)
    subject = f"the Delta log of table {listed} is" if len(damaged) == 1 else f"the Delta logs of tables {listed} are"
    raise KgwalkError(f"{subject} damaged; kgwalk reads nothing from a damaged table: {_repair([p for p, _ in damaged])}")


def _repair(tables: list[Path]) -> str:
    """What makes these damaged tables (all of one folder) whole again."""
    folder = tables[0].parent
    if folder.name == "_cache":  # the warehouse's cache: nothing in it is needed
        return f"delete {' and '.join(_shown(t) for t in tables)} (a cache: verbalize fills it again)"
    name, warehouse = folder.name, folder.parent
    again = f"rebuild with `kgwalk build --name {_shown(name)} --warehouse {_shown(warehouse)}`"
    if any(t.name == "path_prior" for t in tables):  # the one table a build does not make: `kgwalk fit-paths` does
        again += " and fit the path prior again with `kgwalk fit-paths`"
    return f"move {' and '.join(_shown(t) for t in tables)} out of {_shown(folder)}, then {again}"


def _shown(path: str | Path) -> str:
    """A path as one line shows it: quoted and escaped where it holds control characters."""
    text = str(path)
    return text if text.isprintable() else repr(text)


# -- no path leaves the KG folder --------------------------------------------------------------
# Writers never follow a symbolic link inside a KG folder (or the warehouse's cache), wherever it
# points: a link to a folder outside let `kgwalk vacuum` delete what was there, and a link to
# another table would let one table's vacuum delete the other's live files. A writer refuses any
# link there when it starts (`refuse_links`), and opens and deletes without following one
# (`open_no_follow`, `unlink_beneath`), so a link planted while it runs is refused too.


def link_refusal(path: Path) -> str:
    return (f"{_shown(path)} is a symbolic link: kgwalk follows no link inside a KG folder or the warehouse cache, "
            "wherever it points; remove it (put a copy of what it points to in its place if that belongs there)")


def refuse_links(folder: Path) -> None:
    """Refuse (KgwalkError) a symbolic link at `folder` or anywhere below it. The folders above it
    (the warehouse's path) may pass through links: they are the user's to choose."""
    if folder.is_symlink():
        raise KgwalkError(link_refusal(folder))
    pending = [folder]
    while pending:
        try:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        raise KgwalkError(link_refusal(Path(entry.path)))
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
        except (FileNotFoundError, NotADirectoryError):
            continue  # not made yet, or removed meanwhile (Qdrant's temporary folders)


def open_no_follow(path: Path, flags: int, mode: int = 0o644) -> int:
    """os.open that refuses (KgwalkError) a symbolic link at `path` instead of opening its target."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise KgwalkError(link_refusal(path)) from None
        raise


def unlink_beneath(root: Path, relative: str) -> None:
    """Delete the file `relative` (a path inside `root`) through file descriptors that follow no
    link on the way: a link among its folders is refused (KgwalkError), so nothing outside `root`
    is ever deleted; a file that is itself a link loses the link, never its target."""
    parts = PurePosixPath(relative).parts
    if not parts or parts[0] == "/" or ".." in parts:
        raise KgwalkError(f"refusing to delete {_shown(relative)}: not a path inside {_shown(root)}")
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for depth, part in enumerate(parts[:-1], 1):
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=folder)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(root.joinpath(*parts[:depth])):
                    raise KgwalkError(link_refusal(root.joinpath(*parts[:depth]))) from None
                if e.errno == errno.ENOENT:
                    return  # gone already
                raise
            os.close(folder)
            folder = inner
        try:
            os.unlink(parts[-1], dir_fd=folder)
        except FileNotFoundError:
            pass
    finally:
        os.close(folder)
