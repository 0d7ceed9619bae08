"""The in-memory walk engine: roots in, Arrow walk tables out, batch by batch."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from kgwalk.config import WalksConf
from kgwalk.walks.graph import Graph
from kgwalk.walks.spec import WalkSpec
from kgwalk.walks.table import WALKS_SCHEMA, block_to_arrow, finish
from kgwalk.walks.walkers import WALKERS

DEFAULT_MAX_PATHS = WalksConf.max_paths_per_batch


def generate_walks(graph: Graph, root_ids: np.ndarray, spec: WalkSpec, roots_per_batch: int = 1024,
                   max_paths: int = DEFAULT_MAX_PATHS) -> Iterator[pa.Table]:
    """Walks of every kind in `spec` for the given roots (entity ids), one table per batch and kind.

    Every root's walks are independent of which batch it falls in, so any split of the roots
    (Spark partitions included) yields the same rows. Working memory is bounded by
    `roots_per_batch` and `max_paths` (rows of a BFS level's candidate arrays, walkers of a
    random batch), not by the graph.
    """
    roots = graph.index_of(np.asarray(root_ids, np.int64))
    for start in range(0, len(roots), roots_per_batch):
        batch = roots[start : start + roots_per_batch]
        for kind in spec.kinds:
            block = WALKERS[kind].walk(graph, batch, spec, max_paths)
            table = finish(block_to_arrow(graph, block), kind, spec)
            if table.num_rows:
                yield table


def all_walks(graph: Graph, spec: WalkSpec, roots_per_batch: int = 1024, max_paths: int = DEFAULT_MAX_PATHS) -> pa.Table:
    """Every root's walks in one table (for tests and small graphs)."""
    tables = list(generate_walks(graph, graph.node_ids, spec, roots_per_batch, max_paths))
    return pa.concat_tables(tables) if tables else WALKS_SCHEMA.empty_table()
