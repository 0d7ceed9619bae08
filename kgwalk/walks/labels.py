"""Labels joined onto walks where they are needed (verbalize, index payloads).

The walks table holds ids only: labels would multiply its size by the walk count, and a label
fix would otherwise mean rewriting every walk through the entity.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import positions
from kgwalk.storage import read_table
from kgwalk.walks.table import list_array


def walk_triples(node_labels: list[str], rel_labels: list[str], inverse: list[bool]) -> list[tuple[str, str, str]]:
    """A walk's (head, relation, tail) triples in walk order, each as the KG states it: a step
    taken backwards along an edge gives (next node, relation, node)."""
    return [
        (node_labels[i + 1], rel, node_labels[i]) if inv else (node_labels[i], rel, node_labels[i + 1])
        for i, (rel, inv) in enumerate(zip(rel_labels, inverse))
    ]


def step_triples(node_labels: list[str], rel_labels: list[str], inverse: list[bool], steps: np.ndarray) -> list[tuple[str, str, str]]:
    """`walk_triples` of many walks in one pass, their steps one after another: the walks' node labels, relation labels
    and directions one walk after another, and each walk's step count (a walk has one node more). A question's 170
    walks took half as long as one call each."""
    # the node each step leaves: each earlier walk has one node more than it has steps
    leaves = np.arange(len(rel_labels)) + np.repeat(np.arange(len(steps)), steps)
    backwards, nodes = np.asarray(inverse, bool), np.asarray(node_labels, object)
    heads, tails = nodes[np.where(backwards, leaves + 1, leaves)], nodes[np.where(backwards, leaves, leaves + 1)]
    return list(zip(heads.tolist(), rel_labels, tails.tolist()))


class LabelLookup:
    """Entity and relation labels by id, for whole Arrow columns at once."""

    def __init__(self, entities: pa.Table, relations: pa.Table) -> None:
        ent = entities.select(["id", "label"]).sort_by("id")
        rel = relations.select(["id", "label"]).sort_by("id")
        self._entity_ids = ent.column("id").to_numpy()
        self._entity_labels = ent.column("label").combine_chunks()
        self._rel_ids = rel.column("id").to_numpy()
        self._rel_labels = rel.column("label").combine_chunks()

    @property
    def entity_ids(self) -> np.ndarray:
        """Every entity id, sorted."""
        return self._entity_ids

    @staticmethod
    def _labels_of(ids: np.ndarray, known: np.ndarray, labels: pa.Array, what: str) -> pa.Array:
        pos, found = positions(ids, known)
        if not found.all():
            raise KgwalkError(f"walks reference {what} ids missing from the {what} table: rerun `kgwalk walks`")
        return labels.take(pa.array(pos))

    def _label_lists(self, column: pa.ChunkedArray, known: np.ndarray, labels: pa.Array, what: str) -> pa.ListArray:
        lists = column.combine_chunks()
        lengths = lists.value_lengths().to_numpy(zero_copy_only=False)
        # flatten() honours slicing; the raw .offsets would not
        return list_array(self._labels_of(lists.flatten().to_numpy(), known, labels, what), lengths)

    def attach(self, walks: pa.Table) -> pa.Table:
        """`walks` plus node_labels and rel_labels (list<string>) parallel to nodes and rels."""
        node_labels = self._label_lists(walks.column("nodes"), self._entity_ids, self._entity_labels, "entity")
        rel_labels = self._label_lists(walks.column("rels"), self._rel_ids, self._rel_labels, "relation")
        return walks.append_column("node_labels", node_labels).append_column("rel_labels", rel_labels)

    def relation_label(self, relation: int) -> str:
        return str(self._labels_of(np.array([relation], np.int64), self._rel_ids, self._rel_labels, "relation")[0])

    def entity_labels(self, ids: np.ndarray) -> pa.Array:
        return self._labels_of(np.asarray(ids, np.int64), self._entity_ids, self._entity_labels, "entity")


def load_labels(cfg: Config) -> LabelLookup:
    """Every entity and relation label of the KG's current tables."""
    return LabelLookup(
        read_table(cfg.table("entities"), ["id", "label"], what="ingest"),
        read_table(cfg.table("relations"), ["id", "label"], what="ingest"),
    )


def signature(rel_labels: list[str], inverse: list[bool]) -> str:
    """A walk's relation path as one string, e.g. "directed_by>|<directed_by" (< = walked backwards)."""
    return "|".join(step_signatures(rel_labels, inverse))


def step_signatures(rel_labels: list[str], inverse: list[bool]) -> list[str]:
    """Each step's part of a `signature`: of every step of many walks in one pass."""
    return [("<" + r) if inv else (r + ">") for r, inv in zip(rel_labels, inverse)]
