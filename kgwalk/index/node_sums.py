"""Node-sum files beside a node collection (the KeepsNodeSums capability of kgwalk.index.base).

A node vector is the normalized sum of its root's walk vectors, in fixed point (see
kgwalk.index.build.NodeSums). These files keep those exact sums so a refresh updates a node by
adding its new walks' vectors and subtracting its vanished ones. They are layered: a base
written by a build (or a compaction), `<name>.sums.npy` with `<name>.sums.roots.npy`, plus a
generation's `<name>.sums-delta.npz` of the roots changed since. A row is the walk count, then
the sums."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from kgwalk.index.generations import Layout, write_atomically
from kgwalk.kg.ids import positions


class NodeSumFiles:
    """The node-sum files of a store folder, and the sums a writer set but has not committed."""

    def __init__(self, folder: Path, compact_ratio: float, min_walks: int = 1) -> None:
        self.folder = folder
        self.compact_ratio = compact_ratio
        self.min_walks = min_walks  # index.node_sums_min_walks: a root with fewer walks keeps no sum
        self._written: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # collection: (roots, [walks, sums...]) written

    def _delta_path(self, generation: str, name: str) -> Path:
        return self.folder / generation / f"{name}.sums-delta.npz"

    def _delta(self, generation: str, name: str) -> tuple[np.ndarray, np.ndarray]:
        path = self._delta_path(generation, name)
        if not path.exists():
            return np.zeros(0, np.int64), np.zeros((0, 0), np.int64)
        with np.load(path) as f:
            return f["roots"], f["values"]

    def carry_delta(self, live: str, generation: str, name: str) -> None:
        """The live generation's delta of `name`, if any, as the new generation's."""
        if self._delta_path(live, name).exists():
            shutil.copy(self._delta_path(live, name), self._delta_path(generation, name))

    def read(self, generation: str, name: str, layout: Layout, roots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fixed-point sums [len(roots), dim], walk counts) of these roots in `generation`
        (before uncommitted writes); zeros for roots without walks."""
        roots = np.asarray(roots, np.int64)
        values = np.zeros((len(roots), layout.dim + 1), np.int64)  # walks, then the sums
        base_roots = np.load(self.folder / f"{layout.sums_base}.sums.roots.npy")
        base = np.load(self.folder / f"{layout.sums_base}.sums.npy", mmap_mode="r")
        for known, table in ((base_roots, base), self._delta(generation, name)):  # the delta wins
            if len(known):
                pos, found = positions(roots, known)
                hit = np.flatnonzero(found)
                order = np.argsort(pos[hit])  # rows in file order: sequential reads of the mmap
                values[hit[order]] = table[pos[hit][order]]
        return values[:, 1:], values[:, 0]

    def keeps(self, walks: np.ndarray) -> np.ndarray:
        """Which roots, by their walk counts, keep a sum."""
        return np.asarray(walks) >= self.min_walks

    def write(self, name: str, roots: np.ndarray, sums: np.ndarray, walks: np.ndarray) -> None:
        """Set these roots' sums (walks 0: the root has no node any more), kept at `commit`; a root
        with fewer than `min_walks` walks is written as one without a sum (a refresh sums its walks)."""
        walks = np.asarray(walks, np.int64)
        rows = np.concatenate([np.where(self.keeps(walks), walks, 0)[:, None], sums], axis=1)
        old_roots, old_rows = self._written.get(name, (np.zeros(0, np.int64), np.zeros((0, rows.shape[1]), np.int64)))
        roots, rows = np.concatenate([roots, old_roots]), np.concatenate([rows, old_rows])
        roots, first = np.unique(roots, return_index=True)  # the latest write of a root wins
        self._written[name] = roots, rows[first]

    def forget(self, name: str) -> None:
        """Drop uncommitted writes of `name` (its collection is created anew)."""
        self._written.pop(name, None)

    def commit(self, generation: str, layouts: dict[str, Layout]) -> None:
        """Each collection's written roots join its delta in `generation`, or a new base once the
        delta passes `compact_ratio` of the base (always, for a build's new collection); the
        layouts are updated to match."""
        for name in list(self._written):
            self._commit_one(generation, name, layouts[name])

    def _commit_one(self, generation: str, name: str, layout: Layout) -> None:
        roots, rows = self._written.pop(name)
        delta_roots, delta_rows = self._delta(generation, name)
        if len(delta_roots):
            keep = ~np.isin(delta_roots, roots)
            roots, rows = np.concatenate([roots, delta_roots[keep]]), np.concatenate([rows, delta_rows[keep]])
        order = np.argsort(roots)
        roots, rows = roots[order], rows[order]
        if layout.sums_base is not None and len(roots) <= self.compact_ratio * max(layout.sums_base_rows, 1):
            write_atomically(self._delta_path(generation, name), lambda f: np.savez(f, roots=roots, values=rows))
            return
        prefix = self.folder / generation / name
        rows_path, roots_path = Path(f"{prefix}.sums.npy"), Path(f"{prefix}.sums.roots.npy")
        if layout.sums_base is None:
            alive = rows[:, 0] > 0
            roots, rows = roots[alive], rows[alive]
            write_atomically(rows_path, lambda f: np.save(f, rows))
        else:
            roots = self._fold(layout.sums_base, roots, rows, rows_path)
        write_atomically(roots_path, lambda f: np.save(f, roots))
        self._delta_path(generation, name).unlink(missing_ok=True)
        layout.sums_base, layout.sums_base_rows = f"{generation}/{name}", len(roots)

    def _fold(self, base_name: str, roots: np.ndarray, rows: np.ndarray, path: Path) -> np.ndarray:
        """Write the base `base_name` with these rows (sorted `roots`) in place of its own, rows
        of roots without walks dropped, to `path`; returns the new base's roots. The base is
        most of a node index's bytes (8 bytes x (dim + 1) a node: 800 MB for the 1M-edge KG), so
        its rows are streamed from the old file into the new one in order, never copied whole."""
        base_roots = np.load(self.folder / f"{base_name}.sums.roots.npy")
        base = np.load(self.folder / f"{base_name}.sums.npy", mmap_mode="r")
        kept = np.flatnonzero(~np.isin(base_roots, roots))  # the delta's rows win
        alive = rows[:, 0] > 0
        roots, rows = roots[alive], rows[alive]
        merged = np.concatenate([base_roots[kept], roots])
        order = np.argsort(merged, kind="stable")  # merged[order]: the new base's roots

        def write(f) -> None:
            header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.int64)), "fortran_order": False, "shape": (len(merged), base.shape[1])}
            np.lib.format.write_array_header_1_0(f, header)
            for start in range(0, len(merged), _FOLD_ROWS):
                source = order[start : start + _FOLD_ROWS]
                from_base = source < len(kept)
                chunk = np.empty((len(source), base.shape[1]), np.int64)
                chunk[from_base] = base[kept[source[from_base]]]
                chunk[~from_base] = rows[source[~from_base] - len(kept)]
                f.write(chunk.tobytes())

        write_atomically(path, write)
        return merged[order]


_FOLD_ROWS = 16_384  # base rows copied at a time (32 MB at 256 dimensions)
