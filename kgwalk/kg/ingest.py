"""Ingest: a KG file -> canonical Delta tables `entities`, `relations`, `edges`, `rejected`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from kgwalk.errors import KgwalkError, QualityGateFailed
from kgwalk.kg.ids import assign_ids
from kgwalk.kg.readers import ReadResult, read_kg
from kgwalk.storage import commit_metadata, table_exists, write_table

ENTITIES_SCHEMA = pa.schema([("id", pa.int64()), ("key", pa.string()), ("label", pa.string())])
RELATIONS_SCHEMA = ENTITIES_SCHEMA
EDGES_SCHEMA = pa.schema([("src", pa.int64()), ("rel", pa.int64()), ("dst", pa.int64())])
REJECTED_SCHEMA = pa.schema(
    [("source", pa.string()), ("line", pa.int64()), ("reason", pa.string()), ("text", pa.string())]
)


@dataclass
class IngestResult:
    """Tables and counts of one ingest; `summary()` is what the CLI prints."""

    entities: pa.Table
    relations: pa.Table
    edges: pa.Table
    rejected: pa.Table
    lines_read: int
    duplicates: int
    blank_lines: int

    def summary(self) -> str:
        s = (
            f"{self.lines_read:,} records read -> {self.edges.num_rows:,} edges "
            f"({self.duplicates:,} duplicate triples collapsed), {self.entities.num_rows:,} entities, "
            f"{self.relations.num_rows:,} relations; {self.rejected.num_rows:,} rejected"
        )
        if self.rejected.num_rows:
            reasons: dict[str, int] = {}
            for r in self.rejected.column("reason").to_pylist():
                reasons[r] = reasons.get(r, 0) + 1
            top = sorted(reasons.items(), key=lambda kv: -kv[1])[:5]
            s += " (" + "; ".join(f"{n:,} x {r}" for r, n in top) + ")"
        if self.blank_lines:
            s += f"; {self.blank_lines:,} blank/comment lines skipped"
        return s


def _label_table(ids: pa.Table, labels: dict[str, str]) -> pa.Table:
    keys = ids.column("key").to_pylist()
    return pa.table(
        {"id": ids.column("id"), "key": ids.column("key"), "label": pa.array([labels.get(k, k) for k in keys])},
        schema=ENTITIES_SCHEMA,
    )


def _lookup(ids: pa.Table, keys: list[str]) -> np.ndarray:
    index = dict(zip(ids.column("key").to_pylist(), ids.column("id").to_numpy()))
    return np.fromiter((index[k] for k in keys), dtype=np.int64, count=len(keys))


def build_tables(read: ReadResult, source: str) -> IngestResult:
    """Pure core of ingest: reader output -> Arrow tables with stable ids, duplicates collapsed."""
    if not read.triples:
        raise KgwalkError(
            f"{source}: no valid triples ({len(read.rejected):,} rejected lines"
            + (f", first: line {read.rejected[0][0]}: {read.rejected[0][1]}" if read.rejected else "")
            + ")"
        )
    distinct = list(dict.fromkeys((h, r, t) for _, h, r, t in read.triples))
    heads, rels, tails = (list(col) for col in zip(*distinct))
    entity_ids = assign_ids(heads + tails, "entities")
    relation_ids = assign_ids(rels, "relations")
    edges = pa.table(
        {"src": _lookup(entity_ids, heads), "rel": _lookup(relation_ids, rels), "dst": _lookup(entity_ids, tails)},
        schema=EDGES_SCHEMA,
    )
    lines, reasons, texts = (list(c) for c in zip(*read.rejected)) if read.rejected else ([], [], [])
    rejected = pa.table(
        {"source": [source] * len(lines), "line": lines, "reason": reasons, "text": texts}, schema=REJECTED_SCHEMA
    )
    return IngestResult(
        entities=_label_table(entity_ids, read.labels),
        relations=_label_table(relation_ids, read.labels),
        edges=edges,
        rejected=rejected,
        lines_read=len(read.triples) + len(read.rejected),
        duplicates=len(read.triples) - len(distinct),
        blank_lines=read.blank_lines,
    )


def ingest(
    path: str | Path, root: str | Path, fmt: str = "auto", max_label_length: int = 1000,
    check: Callable[[IngestResult], object] | None = None,
) -> IngestResult:
    """Read a KG file and write its canonical tables under `root` (one Delta table per folder).
    `check` (the quality gate) sees the tables first and raises to write none of them but the
    rejected lines, so that a user can read every one (the error says where)."""
    result = build_tables(read_kg(path, fmt, max_label_length), str(path))
    root = Path(root)
    if check is not None:
        try:
            check(result)
        except QualityGateFailed as e:
            raise QualityGateFailed(f"{e}{keep_rejected(root / 'rejected', result.rejected)}") from None
    for name in ("entities", "relations", "edges", "rejected"):
        write_table(root / name, getattr(result, name))
    return result


def keep_rejected(path: str | Path, rejected: pa.Table, metadata: dict[str, Any] | None = None) -> str:
    """Write rejected lines: an ingest's (overwriting the table, as an ingest does), or with
    `metadata` a change's (appended once: a retry of the same run finds its commit there).
    Returns the words that end a failed gate's error, saying where they are ("" for none)."""
    if not rejected.num_rows:
        return ""
    if metadata is None:
        write_table(path, rejected)
    elif not (table_exists(path) and commit_metadata(path) == metadata):
        write_table(path, rejected, mode="append", metadata=metadata)
    return f"; all {rejected.num_rows:,} rejected lines are in the Delta table {path}"
