"""What a walk hit shows, by walk id: walk points carry only walk_id and root (kgwalk.index.build),
so a reader looks the rest up here, in memory, from the Delta tables at the versions the index
it reads was built from (its `reflects`): kind, text, nodes, relations and their labels.

Lookups are a binary search over walk ids sorted once at load, plus Arrow takes of the few rows
a query returns. A reader whose index moves to a new version (a refresh) loads that version's
tables on its next lookup. A store that keeps no versions (the server backend) gets the latest
tables, reloaded when a hit is missing from them (the server was refreshed since).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.index.build import with_texts
from kgwalk.state import versions
from kgwalk.storage import read_version
from kgwalk.walks.labels import LabelLookup

RECORD_TABLES = ("walks", "texts", "entities", "relations")
WALK_FIELDS = ["walk_id", "kind", "nodes", "rels", "inverse"]


class WalkRecords:
    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.versions: dict[str, int] | None = None
        self._follows_latest = False
        self._ids = np.zeros(0, np.int64)
        self._table: pa.Table | None = None
        self._labels: LabelLookup | None = None

    def sync(self, reflects: dict[str, Any] | None) -> None:
        """Hold the tables at the versions `reflects` names (None: the latest, loaded once)."""
        self._follows_latest = reflects is None
        if reflects is None and self._table is not None:
            return  # reading table versions per query would cost more than the query
        wanted = {t: reflects[t] for t in RECORD_TABLES} if reflects else versions(self.cfg, RECORD_TABLES)
        if wanted != self.versions:
            self._load(wanted)

    def _load(self, wanted: dict[str, int]) -> None:
        def read(table: str, columns: list[str]) -> pa.Table:
            return read_version(self.cfg.table(table), wanted[table], columns)

        self._table = with_texts(read("walks", WALK_FIELDS), read("texts", ["walk_id", "text"]))
        self._ids = self._table.column("walk_id").to_numpy()
        self._labels = LabelLookup(read("entities", ["id", "label"]), read("relations", ["id", "label"]))
        self.versions = wanted

    def lookup(self, walk_ids: list[int]) -> list[dict[str, Any]]:
        """One record per id, in order: walk_id, kind, text, nodes, rels, inverse, node_labels,
        rel_labels."""
        if self._table is None or self._labels is None:
            raise RuntimeError("call sync() before lookup()")
        ids = np.asarray(walk_ids, np.int64)
        rows = self._rows(ids)
        if rows is None and self._follows_latest:
            self._load(versions(self.cfg, RECORD_TABLES))
            rows = self._rows(ids)
        if rows is None:
            raise KgwalkError(f"the index holds walks that tables {self.versions} lack: run `kgwalk index`")
        return self._labels.attach(self._table.take(pa.array(rows))).to_pylist()

    def _rows(self, ids: np.ndarray) -> np.ndarray | None:
        """Rows of these walk ids, or None if any is missing."""
        rows = np.minimum(np.searchsorted(self._ids, ids), max(len(self._ids) - 1, 0))
        if len(ids) and (not len(self._ids) or not np.array_equal(self._ids[rows], ids)):
            return None
        return rows
