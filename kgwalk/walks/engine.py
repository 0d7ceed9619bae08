"""The in-memory walk engine: roots in, Arrow walk tables out, batch by batch."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from kgwalk.walks.graph import Graph
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA, block_to_arrow
from kgwalk.walks.walkers import WALKERS, cap_per_root


def generate_walks(graph: Graph, root_ids: np.ndarray, spec: WalkSpec, roots_per_batch: int = 1024) -> Iterator[pa.Table]:
    """Walks of every kind in `spec` for the given roots (entity ids), one table per batch and kind.

    Every root's walks are independent of which batch it falls in, so any split of the roots
    (Spark partitions included) yields the same rows.
    """
    roots = graph.index_of(np.asarray(root_ids, np.int64))
    for start in range(0, len(roots), roots_per_batch):
        batch = roots[start : start + roots_per_batch]
        for kind in spec.kinds:
            block = cap_per_root(WALKERS[kind].walk(graph, batch, spec), spec.max_per_root)
            if len(block):
                yield block_to_arrow(graph, block)


def all_walks(graph: Graph, spec: WalkSpec, roots_per_batch: int = 1024) -> pa.Table:
    """Every root's walks in one table (for tests and small graphs)."""
    tables = list(generate_walks(graph, graph.node_ids, spec, roots_per_batch))
    return pa.concat_tables(tables) if tables else WALKS_SCHEMA.empty_table()
