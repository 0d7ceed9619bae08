"""Delta tables through delta-rs (the `deltalake` package): the warehouse every stage reads and writes.

Spark jobs use delta-spark instead when its JVM classes are on the classpath (see kgwalk.spark);
both speak the same table format.
"""

from __future__ import annotations

import json
import os
import urllib.parse
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, write_deltalake

from kgwalk.errors import KgwalkError


def user_cache(kind: str) -> Path:
    """Where kgwalk keeps `kind` of what it derives once per user and reuses (model exports,
    distillations, question vectors): `$XDG_CACHE_HOME/kgwalk/<kind>`, else `~/.cache/kgwalk/<kind>`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kgwalk" / kind

# Every commit we make carries what it was computed from under this key (commit info), so a
# rerun after a crash can tell whether a step's output already landed.
METADATA_KEY = "kgwalk"


def _commit_properties(metadata: dict[str, Any] | None) -> CommitProperties | None:
    return CommitProperties(custom_metadata={METADATA_KEY: json.dumps(metadata, sort_keys=True)}) if metadata else None


def commit_metadata(path: str | Path) -> dict[str, Any]:
    """The kgwalk metadata of the table's latest commit ({} if it has none)."""
    info = open_table(path).history(1)[0]
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
    if not table_exists(path):
        hint = f" (run `kgwalk {what}` first)" if what else ""
        raise KgwalkError(f"no Delta table at {path}{hint}")
    return DeltaTable(str(path))


def read_table(path: str | Path, columns: list[str] | None = None, what: str = "") -> pa.Table:
    """The table's current version as Arrow."""
    return scan(path, columns=columns, what=what).read_all()


def write_table(
    path: str | Path,
    data: pa.Table | pa.RecordBatchReader | Iterable[pa.RecordBatch],
    schema: pa.Schema | None = None,
    mode: str = "overwrite",
    metadata: dict[str, Any] | None = None,
) -> int:
    """Write Arrow data as a new Delta version (overwrite by default); returns the version written.

    Batches stream straight into the table, so a stage never has to hold its whole output.
    """
    if not isinstance(data, (pa.Table, pa.RecordBatchReader)):
        if schema is None:
            raise ValueError("schema is required when writing an iterable of batches")
        data = pa.RecordBatchReader.from_batches(schema, iter(data))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_deltalake(
        str(path), data, mode=mode, schema_mode="overwrite" if mode == "overwrite" else None,
        commit_properties=_commit_properties(metadata),
    )
    return DeltaTable(str(path)).version()


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
    actions = []
    for name in files:
        file = root / name
        rows = pq.read_metadata(file).num_rows
        if rows:
            stats = json.dumps({"numRecords": rows})  # lets readers count rows without opening files
            actions.append(AddAction(name, file.stat().st_size, {}, now, True, stats))
    delta_schema = Schema.from_arrow(schema)
    if table_exists(root):
        DeltaTable(str(root)).create_write_transaction(actions, "overwrite", delta_schema, commit_properties=_commit_properties(metadata))
    else:
        create_table_with_add_actions(str(root), delta_schema, actions, mode="overwrite", commit_properties=_commit_properties(metadata))
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
