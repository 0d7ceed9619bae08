"""What a walk hit shows, by walk id: walk points carry only their root (kgwalk.index.build), so a
reader looks the rest up here, from the Delta tables at the versions the index it reads was built
from (its `reflects`): kind, text, nodes, relations and their labels.

Three sources, the same records from each (query.records):
- `memory`: the walks and texts read into memory once per version (a long-lived reader of a
  model's sentences: kgwalk serve, eval); a lookup is a binary search over walk ids sorted once at load plus Arrow takes of
  the few rows a query returns. About 160 B a walk: 10 GB for the 10M-edge KG's 64M walks, which
  the first query could not read (bench/results/scale_build_10m_memory.md).
- `graph`: the walks of the hits' roots made again from the KG's edges, and their sentences from
  the template verbalizer. Walks are a function of the graph and the walk settings and a walk id
  is a hash of the walk's content (kgwalk.walks.table), so a remade walk with a hit's id is that
  walk. The graph is the KG tables' at the versions the walks table's version was made from (the
  state table says); a reader held on an older walks version, or a hit the remade walks lack,
  reads the tables. The reader holds the graph (about 20 B an edge), not the walks.
- `tables`: only the looked-up walks' rows of those versions, read per lookup (one question, then
  exit: `kgwalk query`; reading 762K rows to show nine took most of a CLI query's second).
`auto` remakes them from the graph where the sentences are the template's (on MetaQA as fast as
memory, p99 lower, 0.78 GiB against 1.09: bench/results/query_records_metaqa.md), else holds them in
memory where they fit query.records_memory_mib, else reads the tables.

A reader whose index moves to a new version (a refresh) reads that version's tables on its next
lookup. A store that keeps no versions (the server backend) gets the latest tables, read again
when a hit is missing from them (the server was refreshed since).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.index.build import with_texts
from kgwalk.kg.ids import IdSet, positions
from kgwalk.state import KG_TABLES, read_state, versions
from kgwalk.storage import read_rows, read_version, row_count
from kgwalk.walks.graph import Graph
from kgwalk.walks.labels import LabelLookup

if TYPE_CHECKING:
    from kgwalk.verbalize.template import TemplateVerbalizer

RecordSource = Literal["memory", "graph", "tables"]
RECORD_TABLES = ("walks", "texts", "entities", "relations")
WALK_FIELDS = ["walk_id", "kind", "nodes", "rels", "inverse"]
RECORD_BYTES = 160  # a walk's record held in memory, its sentence included (MetaQA: 156 B)


def record_source(cfg: Config) -> RecordSource:
    """query.records, `auto` resolved: the graph for the template's sentences, else by the walks table's size (its
    files' footers)."""
    chosen = cfg.query.records
    if chosen == "auto":
        if cfg.verbalize.verbalizer == "template":
            return "graph"
        fits = row_count(cfg.table("walks"), "walks") * RECORD_BYTES <= cfg.query.records_memory_mib * 2**20
        return "memory" if fits else "tables"
    if chosen == "graph" and cfg.verbalize.verbalizer != "template":
        raise KgwalkError(f"query.records=graph makes the template's sentences again, but verbalize.verbalizer is "
                          f"{cfg.verbalize.verbalizer}: use memory or tables")
    return chosen


class WalkRecords:
    def __init__(self, cfg: Config, source: RecordSource | None = None) -> None:
        """`source`: query.records' when None, resolved at the first sync (a retriever may open before its KG is built)."""
        self.cfg = cfg
        self._source = source if source is None else record_source(replace(cfg, query=replace(cfg.query, records=source)))
        self.versions: dict[str, int] | None = None
        self._follows_latest = False
        self._table: pa.Table | None = None  # memory: walks with texts at `versions`
        self._ids = np.zeros(0, np.int64)  # the table's walk ids, sorted
        self._labels: LabelLookup | None = None  # of `versions`
        self._remade: _RemadeWalks | None = None  # graph: of the KG tables' versions the held walks were made from

    @property
    def source(self) -> RecordSource:
        if self._source is None:
            self._source = record_source(self.cfg)
        return self._source

    @property
    def graph(self) -> Graph | None:
        """The KG's graph as walks traverse it (graph source; None before the first sync)."""
        return self._remade.graph if self._remade is not None else None

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
            if self.source == "memory":
                return read_version(self.cfg.table(table), wanted[table], columns)
            return read_rows(self.cfg.table(table), wanted[table], columns)

        self.versions = wanted
        self._table = self._walks(read) if self.source == "memory" else None
        self._ids = np.zeros(0, np.int64) if self._table is None else self._table.column("walk_id").to_numpy()
        self._labels = LabelLookup(read("entities", ["id", "label"]), read("relations", ["id", "label"]))
        if self.source == "graph":
            walks = read_state(self.cfg).get("walks")
            if walks is None or walks.version != wanted["walks"]:
                self._remade = None  # an older walks version (a reader between refreshes): its rows are read
            elif self._remade is None or self._remade.versions != {t: walks.reflects[t] for t in KG_TABLES}:
                self._remade = _RemadeWalks.of_versions(self.cfg, {t: walks.reflects[t] for t in KG_TABLES})

    @staticmethod
    def _walks(read: Callable[[str, list[str]], pa.Table]) -> pa.Table:
        return with_texts(read("walks", WALK_FIELDS), read("texts", ["walk_id", "text"]))

    def lookup(self, walk_ids: Sequence[int], roots: Sequence[int] | None = None) -> pa.Table:
        """One record per id, in order: walk_id, kind, text, nodes, rels, inverse, node_labels,
        rel_labels. `roots`: each walk's root (what the graph source remakes; without them it
        reads the tables)."""
        if self._labels is None or self.versions is None:
            raise RuntimeError("call sync() before lookup()")
        ids = np.asarray(walk_ids, np.int64)
        found = self._take(ids, roots)
        if found is None and self._follows_latest:
            self._load(versions(self.cfg, RECORD_TABLES))
            found = self._take(ids, roots)
        if found is None:
            raise KgwalkError(f"the index holds walks that tables {self.versions} lack: run `kgwalk index`")
        return self._labels.attach(found)

    def walks_of(self, roots: Sequence[int]) -> pa.Table | None:
        """Every walk of `roots`, remade from the graph with its sentence and labels (lookup's fields, and its root),
        sorted by walk id: where the source is the graph and the walks held are the ones it makes (see sync); None
        otherwise. What a search of the walks by their sentences alone needs (query.walk_search=graph)."""
        made = self.made(roots)
        return None if made is None else self.shown(made)

    def made(self, roots: Sequence[int]) -> pa.Table | None:
        """walks_of's walks without their labels and sentences (WALK_FIELDS and root): `shown` adds them."""
        if self._remade is None or self._labels is None:
            return None
        return self._remade.made(np.unique(np.asarray(roots, np.int64)))

    @property
    def labels(self) -> LabelLookup | None:
        """The labels of the versions held (None before the first sync)."""
        return self._labels

    @property
    def verbalizer(self) -> TemplateVerbalizer | None:
        """What makes the sentences of the walks walks_of remakes; None where it remakes none."""
        return self._remade.verbalizer if self._remade is not None else None

    @property
    def made_from(self) -> dict[str, int] | None:
        """The KG tables' versions the walks walks_of remakes were made from; None where it remakes none."""
        return self._remade.versions if self._remade is not None else None

    def hubs(self, max_degree: int) -> np.ndarray:
        """The graph's nodes with more than `max_degree` adjacency entries, sorted (none where walks_of remakes none)."""
        if self._remade is None:
            return np.zeros(0, np.int64)
        graph = self._remade.graph
        return graph.node_ids[graph.degree > max_degree]

    def shown(self, walks: pa.Table) -> pa.Table:
        """Walks as walks_of made them (WALK_FIELDS and root), with their labels and sentences added again."""
        if self._remade is None or self._labels is None:
            raise RuntimeError("shown() needs the graph source, synced")
        return self._remade.shown(walks, self._labels)

    def degrees(self, roots: Sequence[int]) -> np.ndarray | None:
        """Each root's adjacency entries in the graph its walks are remade from (0: not a node of it), what making them
        costs; None where walks_of gives none."""
        if self._remade is None or self._labels is None:
            return None
        return self._remade.degrees(np.asarray(roots, np.int64))

    def _take(self, ids: np.ndarray, roots: Sequence[int] | None) -> pa.Table | None:
        """The rows of these walk ids in their order, or None if any is missing."""
        if self._table is not None:
            table, known = self._table, self._ids
        else:
            table = self._fetch(np.unique(ids), roots)
            known = table.column("walk_id").to_numpy()
        rows, found = positions(ids, known)
        if not found.all():
            return None
        return table.take(pa.array(rows))

    def _fetch(self, ids: np.ndarray, roots: Sequence[int] | None) -> pa.Table:
        """Records of these (sorted, unique) ids sorted by walk id: remade from the graph where it can,
        the rest read from the tables at the versions held."""
        remade = None
        if self._remade is not None and self._labels is not None and roots is not None:
            remade = self._remade.records(ids, np.unique(np.asarray(roots, np.int64)), self._labels)
        missing = ids if remade is None else ids[~np.isin(ids, remade.column("walk_id").to_numpy())]
        if not len(missing) and remade is not None:
            return remade
        held = self.versions or {}

        def read(name: str, columns: list[str]) -> pa.Table:
            return read_rows(self.cfg.table(name), held[name], columns, key="walk_id", values=missing)

        read_back = self._walks(read)
        return read_back if remade is None else pa.concat_tables([remade, read_back]).sort_by("walk_id")


class _RemadeWalks:
    """The walks of given roots made again, with their template sentences (the graph source)."""

    def __init__(self, cfg: Config, graph: Graph, kg: dict[str, int]) -> None:
        from kgwalk.verbalize.template import TemplateVerbalizer
        from kgwalk.walks.spec import WalkSpec

        self.cfg, self.graph, self.versions = cfg, graph, kg
        self.nodes = IdSet(graph.node_ids)  # np.isin would sort the 10M-edge KG's 3.7M nodes again per question
        self.spec = WalkSpec.from_conf(cfg.walks)
        self.verbalizer = TemplateVerbalizer(cfg.verbalize.phrases)

    @classmethod
    def of_versions(cls, cfg: Config, kg: dict[str, int]) -> _RemadeWalks:
        """From the KG tables at the versions the walks were made from."""
        columns = {"edges": ["src", "rel", "dst"], "entities": ["id"], "relations": ["id", "label"]}  # labels name explicit inverses
        tables = {t: read_version(cfg.table(t), kg[t], columns[t]) for t in KG_TABLES}
        return cls(cfg, Graph.from_arrow(tables["edges"], tables["entities"], tables["relations"], cfg.walks.direction), kg)

    def degrees(self, roots: np.ndarray) -> np.ndarray:
        known = self.nodes.mask(roots)
        degrees = np.zeros(len(roots), np.int64)
        degrees[known] = self.graph.degree[self.graph.index_of(roots[known])]
        return degrees

    def made(self, roots: np.ndarray) -> pa.Table:
        """Every walk of the (unique) roots, those the graph has, sorted by walk id: WALK_FIELDS and root."""
        from kgwalk.walks.engine import generate_walks
        from kgwalk.walks.table import WALKS_SCHEMA

        w = self.cfg.walks
        roots = roots[self.nodes.mask(roots)]
        tables = list(generate_walks(self.graph, roots, self.spec, w.roots_per_batch, w.max_paths_per_batch))
        return (pa.concat_tables(tables) if tables else WALKS_SCHEMA.empty_table()).select([*WALK_FIELDS, "root"]).sort_by("walk_id")

    def shown(self, walks: pa.Table, labels: LabelLookup) -> pa.Table:
        walks = labels.attach(walks)
        text, _ = self.verbalizer.verbalize(walks)
        return walks.append_column("text", text)

    def records(self, ids: np.ndarray, roots: np.ndarray, labels: LabelLookup) -> pa.Table:
        """Those of `ids` among the roots' walks, sorted by walk id, with their sentences."""
        walks = self.shown(self.made(roots), labels)
        return walks.filter(pc.is_in(walks.column("walk_id"), pa.array(ids))).select([*WALK_FIELDS, "text"])
