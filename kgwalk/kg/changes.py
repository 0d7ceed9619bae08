"""Change input for refresh: a change set (triples with an op) or a new full snapshot, turned
into the KG's next canonical tables. Pure: Arrow tables in, Arrow tables out.

Entities and relations follow from the edges: an entity exists while some edge mentions it, so
deleting an entity means removing its edges, and a new entity arrives with its first edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64
from kgwalk.kg.ingest import EDGES_SCHEMA, ENTITIES_SCHEMA, REJECTED_SCHEMA, build_tables
from kgwalk.kg.readers import ReadResult

_EDGE_KEYS = ["src", "rel", "dst"]


@dataclass
class KgTables:
    entities: pa.Table
    relations: pa.Table
    edges: pa.Table


@dataclass
class KgUpdate:
    """The next KG tables, rejected records, and what changed."""

    tables: KgTables
    rejected: pa.Table
    records: int  # change records (or snapshot triples) read
    added: int  # edges that are new
    removed: int  # edges that are gone

    def summary(self) -> str:
        return (
            f"{self.records:,} records -> {self.added:,} edges added, {self.removed:,} removed; "
            f"{self.tables.edges.num_rows:,} edges, {self.tables.entities.num_rows:,} entities; "
            f"{self.rejected.num_rows:,} rejected"
        )


def _rejected(source: str, rows: list[tuple[int, str, str]]) -> pa.Table:
    lines, reasons, texts = (list(c) for c in zip(*rows)) if rows else ([], [], [])
    return pa.table({"source": [source] * len(lines), "line": lines, "reason": reasons, "text": texts}, schema=REJECTED_SCHEMA)


def _names(old: pa.Table, keys: dict[int, str], labels: dict[str, str], ids: np.ndarray, what: str) -> pa.Table:
    """(id, key, label) rows for `ids`: keys and labels from the change input, else from `old`."""
    old_pos = {int(i): n for n, i in enumerate(old.column("id").to_numpy())}
    old_keys, old_labels = old.column("key").to_pylist(), old.column("label").to_pylist()
    out_keys, out_labels = [], []
    for i in ids.tolist():
        key = keys.get(i)
        n = old_pos.get(i)
        if key is None:
            key = old_keys[n]
        elif n is not None and old_keys[n] != key:
            raise KgwalkError(f"id collision: {what} {key!r} and {old_keys[n]!r} hash to the same 64-bit id {i}")
        out_keys.append(key)
        out_labels.append(labels.get(key) or (old_labels[n] if n is not None else key))
    return pa.table({"id": pa.array(ids, pa.int64()), "key": out_keys, "label": out_labels}, schema=ENTITIES_SCHEMA)


def _edge_table(triples: list[tuple[str, str, str]]) -> pa.Table:
    cols = list(zip(*triples)) if triples else ([], [], [])
    return pa.table({n: pa.array([hash64(k) for k in col], pa.int64()) for n, col in zip(_EDGE_KEYS, cols)}, schema=EDGES_SCHEMA)


def apply_changes(old: KgTables, read: ReadResult, source: str) -> KgUpdate:
    """Apply a change set. Within one set the last op of a triple wins; adding an edge that
    exists is a no-op; removing one that does not exist is rejected (it is usually a typo)."""
    last_op: dict[tuple[str, str, str], tuple[str, int, str]] = {}
    for (line, h, r, t), op in zip(read.triples, read.ops):
        last_op[(h, r, t)] = (op, line, f"{h}|{r}|{t}|{op}")
    adds = [k for k, (op, _, _) in last_op.items() if op == "add"]
    removes = [k for k, (op, _, _) in last_op.items() if op == "remove"]
    add_t, remove_t = _edge_table(adds), _edge_table(removes)
    edges = old.edges.select(_EDGE_KEYS)
    present = remove_t.append_column("i", pa.array(np.arange(len(removes)))).join(edges, _EDGE_KEYS, join_type="left semi")
    missing = np.setdiff1d(np.arange(len(removes)), present.column("i").to_numpy())
    rejected = list(read.rejected) + [
        (last_op[removes[i]][1], "remove: no such edge", last_op[removes[i]][2]) for i in missing.tolist()
    ]
    kept = edges.join(remove_t, _EDGE_KEYS, join_type="left anti")
    new_edges = pa.concat_tables([kept, add_t.join(kept, _EDGE_KEYS, join_type="left anti")])
    new_edges = new_edges.group_by(_EDGE_KEYS).aggregate([])  # distinct, in case adds repeat
    keys = {hash64(k): k for triple in last_op for k in (triple[0], triple[2])}
    rel_keys = {hash64(triple[1]): triple[1] for triple in last_op}
    ends = np.unique(np.concatenate([new_edges.column("src").to_numpy(), new_edges.column("dst").to_numpy()]))
    tables = KgTables(
        entities=_names(old.entities, keys, read.labels, ends, "entities"),
        relations=_names(old.relations, rel_keys, read.labels, np.unique(new_edges.column("rel").to_numpy()), "relations"),
        edges=new_edges.select(_EDGE_KEYS).cast(EDGES_SCHEMA),
    )
    return KgUpdate(
        tables=tables,
        rejected=_rejected(source, rejected),
        records=len(read.triples) + len(read.rejected),
        added=new_edges.num_rows - kept.num_rows,
        removed=edges.num_rows - kept.num_rows,
    )


def snapshot_update(old: KgTables, read: ReadResult, source: str) -> KgUpdate:
    """The KG becomes the snapshot: exactly what ingesting it into an empty warehouse gives."""
    result = build_tables(read, source)
    edges = old.edges.select(_EDGE_KEYS)
    kept = edges.join(result.edges, _EDGE_KEYS, join_type="left semi").num_rows
    return KgUpdate(
        tables=KgTables(result.entities, result.relations, result.edges),
        rejected=result.rejected,
        records=result.lines_read,
        added=result.edges.num_rows - kept,
        removed=edges.num_rows - kept,
    )
