"""The in-memory walk engine: roots in, Arrow walk tables out, batch by batch."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context

import numpy as np
import pyarrow as pa

from kgwalk.config import WalksConf
from kgwalk.errors import KgwalkError
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


def walks_in_processes(graph: Graph, root_ids: np.ndarray, spec: WalkSpec, roots_per_batch: int, max_paths: int,
                       processes: int | None = None) -> pa.Table:
    """`generate_walks` of these roots as one table, in their order, spread over `processes` (None: one a
    CPU) where the roots make more than one batch. Each process is spawned (not forked: the caller's
    threads, such as delta-rs's runtime, hold locks a fork would copy) and gets a copy of the graph."""
    processes = processes or os.cpu_count() or 1
    root_ids = np.asarray(root_ids, np.int64)
    parts = [root_ids[start : start + roots_per_batch] for start in range(0, len(root_ids), roots_per_batch)]
    if processes < 2 or len(parts) < 2:
        tables = list(generate_walks(graph, root_ids, spec, roots_per_batch, max_paths))
    else:
        try:
            with ProcessPoolExecutor(min(processes, len(parts)), mp_context=get_context("spawn"), initializer=_hold,
                                     initargs=(graph, spec, max_paths)) as pool:
                tables = [t for part in pool.map(_walks_of_held, parts) for t in part]
        except BrokenProcessPool as e:  # a spawned process imports the caller's main module: an unguarded script runs again
            raise KgwalkError(f"walking in {processes} processes failed ({e}): a script that refreshes must run under "
                              "`if __name__ == \"__main__\":`, or set walks.processes=1") from e
    return pa.concat_tables(tables) if tables else WALKS_SCHEMA.empty_table()


_held: tuple[Graph, WalkSpec, int] | None = None  # a walking process's graph, spec and max_paths


def _hold(graph: Graph, spec: WalkSpec, max_paths: int) -> None:
    global _held
    _held = (graph, spec, max_paths)


def _walks_of_held(roots: np.ndarray) -> list[pa.Table]:
    assert _held is not None
    graph, spec, max_paths = _held
    return list(generate_walks(graph, roots, spec, len(roots), max_paths))


def all_walks(graph: Graph, spec: WalkSpec, roots_per_batch: int = 1024, max_paths: int = DEFAULT_MAX_PATHS) -> pa.Table:
    """Every root's walks in one table (for tests and small graphs)."""
    tables = list(generate_walks(graph, graph.node_ids, spec, roots_per_batch, max_paths))
    return pa.concat_tables(tables) if tables else WALKS_SCHEMA.empty_table()
