"""What a walk hit shows, by walk id: walk points carry only their root (kgwalk.index.build), so a
reader looks the rest up here, from the Delta tables at the versions the index it reads was built
from (its `reflects`): kind, text, nodes, relations and their labels.

Two ways to read, the same records either way. By default the walks and texts are read into
memory once per version (a long-lived reader: kgwalk serve, eval), and lookups are a binary
search over walk ids sorted once at load plus Arrow takes of the few rows a query returns.
`on_demand=True` (one question, then exit: `kgwalk query`) reads only the looked-up walks' rows
of those versions: reading 762K rows to show nine took most of a CLI query's second.

A reader whose index moves to a new version (a refresh) reads that version's tables on its next
lookup. A store that keeps no versions (the server backend) gets the latest tables, read again
when a hit is missing from them (the server was refreshed since).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.index.build import with_texts
from kgwalk.state import versions
from kgwalk.storage import read_rows, read_version
from kgwalk.walks.labels import LabelLookup

RECORD_TABLES = ("walks", "texts", "entities", "relations")
WALK_FIELDS = ["walk_id", "kind", "nodes", "rels", "inverse"]


class WalkRecords:
    def __init__(self, cfg: Config, on_demand: bool = False) -> None:
        self.cfg = cfg
        self.on_demand = on_demand
        self.versions: dict[str, int] | None = None
        self._follows_latest = False
        self._table: pa.Table | None = None  # walks with texts at `versions` (in memory: not on demand)
        self._ids = np.zeros(0, np.int64)  # the table's walk ids, sorted
        self._labels: LabelLookup | None = None  # of `versions`

    def sync(self, reflects: dict[str, Any] | None) -> None:
        """Hold the tables at the versions `reflects` names (None: the latest, looked up once)."""
        self._follows_latest = reflects is None
        if reflects is None and self._labels is not None:
            return  # reading table versions per query would cost more than the query
        wanted = {t: reflects[t] for t in RECORD_TABLES} if reflects else versions(self.cfg, RECORD_TABLES)
        if wanted != self.versions:
            self._load(wanted)

    def _load(self, wanted: dict[str, int]) -> None:
        def read(table: str, columns: list[str]) -> pa.Table:
            return read_rows(self.cfg.table(table), wanted[table], columns) if self.on_demand else read_version(self.cfg.table(table), wanted[table], columns)

        self.versions = wanted
        self._table = None if self.on_demand else self._walks(read)
        self._ids = np.zeros(0, np.int64) if self._table is None else self._table.column("walk_id").to_numpy()
        self._labels = LabelLookup(read("entities", ["id", "label"]), read("relations", ["id", "label"]))

    @staticmethod
    def _walks(read: Callable[[str, list[str]], pa.Table]) -> pa.Table:
        return with_texts(read("walks", WALK_FIELDS), read("texts", ["walk_id", "text"]))

    def lookup(self, walk_ids: list[int]) -> list[dict[str, Any]]:
        """One record per id, in order: walk_id, kind, text, nodes, rels, inverse, node_labels,
        rel_labels."""
        if self._labels is None or self.versions is None:
            raise RuntimeError("call sync() before lookup()")
        ids = np.asarray(walk_ids, np.int64)
        found = self._take(ids)
        if found is None and self._follows_latest:
            self._load(versions(self.cfg, RECORD_TABLES))
            found = self._take(ids)
        if found is None:
            raise KgwalkError(f"the index holds walks that tables {self.versions} lack: run `kgwalk index`")
        return self._labels.attach(found).to_pylist()

    def _take(self, ids: np.ndarray) -> pa.Table | None:
        """The rows of these walk ids in their order, or None if any is missing."""
        table, known = self._table, self._ids
        if table is None:  # on demand: only these rows, at the versions held
            held = self.versions or {}

            def read(name: str, columns: list[str]) -> pa.Table:
                return read_rows(self.cfg.table(name), held[name], columns, key="walk_id", values=np.unique(ids))

            table = self._walks(read)
            known = table.column("walk_id").to_numpy()
        rows = np.minimum(np.searchsorted(known, ids), max(len(known) - 1, 0))
        if len(ids) and (not len(known) or not np.array_equal(known[rows], ids)):
            return None
        return table.take(pa.array(rows))
