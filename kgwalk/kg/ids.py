"""Stable 64-bit ids: a hash of the normalized label, the same on every rebuild and machine.

Stable ids let incremental refresh patch tables in place; collisions are detected, never ignored.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable

import numpy as np
import pyarrow as pa

from kgwalk.errors import KgwalkError

_SPACES = re.compile(r"\s+")


def normalize_label(text: str) -> str:
    """NFC-normalize, collapse runs of whitespace, strip. Case is kept: 'Drama' and 'drama' differ."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


def hash64(key: str) -> int:
    """Signed 64-bit id of a normalized key (blake2b, so it is stable across processes and versions)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


def assign_ids(keys: Iterable[str], what: str, hasher: Callable[[str], int] = hash64) -> pa.Table:
    """Ids for distinct keys as a table (id, key); raises if two distinct keys share an id."""
    uniq = sorted(set(keys))
    ids = np.fromiter((hasher(k) for k in uniq), dtype=np.int64, count=len(uniq))
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    dup = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    if dup.size:
        a, b = uniq[order[dup[0]]], uniq[order[dup[0] + 1]]
        raise KgwalkError(f"id collision: {what} {a!r} and {b!r} hash to the same 64-bit id {sorted_ids[dup[0]]}")
    return pa.table({"id": pa.array(ids, pa.int64()), "key": pa.array(uniq, pa.string())})


class IdSet:
    """Membership in a fixed set of int64 ids, asked batch by batch over a table streamed from disk:
    sorted once, each ask a binary search (`isin` hashes the whole set again on every call)."""

    def __init__(self, ids: np.ndarray | pa.Array | pa.ChunkedArray) -> None:
        values = ids if isinstance(ids, np.ndarray) else ids.to_numpy(zero_copy_only=False)
        self.ids = np.unique(np.asarray(values, np.int64))

    def __len__(self) -> int:
        return len(self.ids)

    def mask(self, values: pa.Array | pa.ChunkedArray | np.ndarray) -> np.ndarray:
        """Which of `values` are in the set."""
        values = np.asarray(values if isinstance(values, np.ndarray) else values.to_numpy(zero_copy_only=False), np.int64)
        if not len(self.ids):
            return np.zeros(len(values), bool)
        if len(values) > len(self.ids):  # a set smaller than the ids asked stays in cache: sorting them would cost more
            at = np.minimum(np.searchsorted(self.ids, values), len(self.ids) - 1)
        else:  # sorted needles: numpy's binary search starts from the last one found, and the set's pages are met in order
            order = np.argsort(values)
            at = np.empty(len(values), np.int64)
            at[order] = np.minimum(np.searchsorted(self.ids, values[order]), len(self.ids) - 1)
        return self.ids[at] == values
