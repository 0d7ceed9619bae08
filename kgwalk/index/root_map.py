"""A graphless collection's walk ids by root, kept beside its shards in each generation instead of
a `root` payload on every point.

Walk search always runs within one root. As a Qdrant payload, that one integer cost 144 bytes a
point of payload pages and 29 of root index, as much as the walk's TurboQuant vector
(bench/results/bytes_per_walk.md); here it costs 8 bytes a walk and 16 a root. A search passes the
root's walk ids to Qdrant as a HasId filter. Three .npy files per collection and generation
(written whole by every writer: a refresh's sort of the 7M pairs of a 1M-edge KG takes about a
second), memory-mapped by readers, never written by them.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import IO

import numpy as np

from kgwalk.index.generations import write_atomically
from kgwalk.kg.ids import IdSet, positions

_PARTS = ("roots", "starts", "ids")


def root_map_paths(folder: Path, generation: str, name: str) -> dict[str, Path]:
    return {part: folder / generation / f"{name}.root_{part}.npy" for part in _PARTS}


class RootMap:
    """Walk ids grouped by root: `ids[starts[i]:starts[i + 1]]` are the walks of `roots[i]`
    (roots sorted, ids sorted within a root)."""

    def __init__(self, roots: np.ndarray, starts: np.ndarray, ids: np.ndarray) -> None:
        self.roots, self.starts, self.ids = roots, starts, ids
        self._by_id: tuple[np.ndarray, np.ndarray] | None = None  # (ids sorted, their roots): made on first `roots_of`

    @classmethod
    def from_pairs(cls, ids: np.ndarray, roots: np.ndarray) -> RootMap:
        ids, roots = np.asarray(ids, np.int64), np.asarray(roots, np.int64)
        order = np.lexsort((ids, roots))
        return cls._of_sorted(ids[order], roots[order])

    @classmethod
    def _of_sorted(cls, ids: np.ndarray, roots: np.ndarray) -> RootMap:
        """From pairs sorted by root, then id."""
        first = np.flatnonzero(np.r_[True, roots[1:] != roots[:-1]]) if len(roots) else np.zeros(0, np.int64)
        return cls(roots[first], np.r_[first, len(ids)].astype(np.int64), ids)

    def merged(self, ids: np.ndarray, roots: np.ndarray) -> RootMap:
        """This map plus these pairs (ids it lacks): the few pairs sorted and inserted where they belong. Sorting
        the 64M pairs of the 10M-edge KG again took about 30 s of a refresh's commit."""
        order = np.lexsort((ids, roots))
        ids, roots = np.asarray(ids, np.int64)[order], np.asarray(roots, np.int64)[order]
        kept_ids, kept_roots = self.pairs()
        at = np.searchsorted(_root_id_keys(kept_roots, kept_ids), _root_id_keys(roots, ids))
        return RootMap._of_sorted(np.insert(kept_ids, at, ids), np.insert(kept_roots, at, roots))

    @classmethod
    def load(cls, folder: Path, generation: str, name: str) -> RootMap | None:
        """The map a generation keeps for collection `name`; None where it keeps none (its points
        carry their root as a payload: an index built before the map)."""
        paths = root_map_paths(folder, generation, name)
        if not paths["roots"].exists():
            return None
        return cls(*(np.load(paths[part], mmap_mode="r") for part in _PARTS))

    def save(self, folder: Path, generation: str, name: str) -> None:
        for part, path in root_map_paths(folder, generation, name).items():
            write_atomically(path, functools.partial(_save, np.ascontiguousarray(getattr(self, part))))

    def walks_of(self, root: int) -> np.ndarray:
        at = int(np.searchsorted(self.roots, root))
        if at == len(self.roots) or self.roots[at] != root:
            return np.zeros(0, np.int64)
        return np.asarray(self.ids[self.starts[at] : self.starts[at + 1]])

    def roots_of(self, ids: np.ndarray, missing: int) -> np.ndarray:
        """The root of each walk id (`missing` for an id the map lacks): what a payload would say."""
        if self._by_id is None:
            all_ids, roots = self.pairs()
            order = np.argsort(all_ids)
            self._by_id = all_ids[order], roots[order]
        sorted_ids, roots = self._by_id
        ids = np.asarray(ids, np.int64)
        at, found = positions(ids, sorted_ids)
        return np.where(found, roots[at] if len(sorted_ids) else missing, missing)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, roots), a row per walk."""
        return np.asarray(self.ids), np.repeat(np.asarray(self.roots), np.diff(np.asarray(self.starts)))


class RootChanges:
    """One writer's deletions and upserts of a collection's walks, in their order, until its commit
    applies them to the map it started from (each id's last change wins).

    A build's commit applies 64M upserts at the 10M-edge KG: deduplicating them with np.unique,
    then merging with the map, took about 5 GB of temporaries, the build's peak
    (bench/results/scale_build_10m_memory.md). Here the columns are joined one at a time and freed
    as they go, and one sort by id finds each id's last change: about three arrays of the
    changes' length at once."""

    def __init__(self) -> None:
        self._ids: list[np.ndarray] = []
        self._roots: list[np.ndarray] = []
        self._deleted: list[np.ndarray] = []

    def add(self, ids: np.ndarray, roots: np.ndarray) -> None:
        self._append(ids, np.asarray(roots, np.int64), False)

    def remove(self, ids: np.ndarray) -> None:
        self._append(ids, np.zeros(len(ids), np.int64), True)

    def _append(self, ids: np.ndarray, roots: np.ndarray, deleted: bool) -> None:
        self._ids.append(np.asarray(ids, np.int64))
        self._roots.append(roots)
        self._deleted.append(np.full(len(ids), deleted))

    def applied_to(self, current: RootMap) -> RootMap:
        """`current` with these changes; they are used up."""
        ids = _joined(self._ids)
        order = np.argsort(ids, kind="stable")  # stable: an id's changes stay in the order they came
        ids = ids[order]
        last = np.r_[ids[1:] != ids[:-1], True] if len(ids) else np.zeros(0, bool)
        ids, keep = ids[last], order[last]
        del order
        roots, deleted = _joined(self._roots)[keep], _joined(self._deleted)[keep]
        del keep
        if not len(current.ids):
            return RootMap.from_pairs(ids[~deleted], roots[~deleted])
        kept_ids, kept_roots = current.pairs()
        untouched = ~IdSet(ids).mask(kept_ids)  # in map order still
        return RootMap._of_sorted(kept_ids[untouched], kept_roots[untouched]).merged(ids[~deleted], roots[~deleted])


def _root_id_keys(roots: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """(root, id) rows as one array that sorts and searches as the map orders them."""
    keys = np.empty(len(ids), [("root", np.int64), ("id", np.int64)])
    keys["root"], keys["id"] = roots, ids
    return keys


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The parts as one array, the list emptied (its arrays freed once joined)."""
    joined = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    parts.clear()
    return joined


def _save(array: np.ndarray, file: IO[bytes]) -> None:
    np.save(file, array)


def empty_root_map() -> RootMap:
    return RootMap.from_pairs(np.zeros(0, np.int64), np.zeros(0, np.int64))
