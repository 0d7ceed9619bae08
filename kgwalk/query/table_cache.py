"""What a query derives from whole KG tables, cached per table version in the user cache.

`kgwalk query` is one question, then exit: building the label lexicon from every entity label
and finding the corpus's distinct relation paths in every walk took about a third of its 2.3 s on
the full MetaQA KB (bench/results/query_cli.md), for arrays that change only when the tables do.

An entry is keyed by each table's identity, its Delta table id (a table made anew in the same
folder gets a new one) and version, and by the source of the modules that compute it, so a code
change computes it again. It lives in `$XDG_CACHE_HOME/kgwalk/tables` (else
`~/.cache/kgwalk/tables`), written atomically; writing an entry removes the same tables' older
versions' entries, so one entry per tables remains, and the least recently used entries beyond
MAX_ENTRIES (tables since deleted: every test builds KGs of its own).
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np

from kgwalk.storage import open_table, user_cache

CACHE = "tables"
MAX_ENTRIES = 32  # entries kept (a few KGs, each with its tables' versions); the rest go least recently used first


def table_identity(path: str) -> tuple[str, int]:
    """(Delta table id, current version) of a table."""
    table = open_table(path)
    return table.metadata().id, table.version()


def _digest(*parts: object) -> str:
    return hashlib.sha256("\n".join(map(str, parts)).encode()).hexdigest()


def _source_digest(modules: list[ModuleType]) -> str:
    return _digest(*(hashlib.sha256(Path(m.__file__ or "").read_bytes()).hexdigest() for m in modules))


def cached_arrays(kind: str, tables: list[str], modules: list[ModuleType],
                  compute: Callable[[dict[str, int]], dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """`compute(versions)`'s arrays for the current versions of `tables` (compute must read them at
    those versions), from the cache when they were computed before by the same `modules`' code."""
    identities = [table_identity(path) for path in tables]
    family = _digest(kind, *(table_id for table_id, _ in identities))[:12]
    key = _digest(family, *(version for _, version in identities), _source_digest(modules))[:16]
    folder = user_cache(CACHE)
    entry = folder / f"{kind}-{family}-{key}.npz"
    try:
        with np.load(entry) as stored:
            arrays = {name: stored[name] for name in stored.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):  # missing, or truncated by a crash: computed again
        pass
    else:
        try:
            os.utime(entry)  # recently used: kept
        except OSError:
            pass
        return arrays
    arrays = compute({path: version for path, (_, version) in zip(tables, identities)})
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f"{entry.stem}.{os.getpid()}.tmp.npz"
        np.savez(partial, allow_pickle=False, **arrays)  # our arrays only: nothing to unpickle on load
        os.replace(partial, entry)  # readers see a whole entry or none
        entries = [e for e in folder.glob("*.npz") if not e.name.endswith(".tmp.npz")]
        for stale in [e for e in entries if e.name.startswith(f"{kind}-{family}-") and e != entry]:
            stale.unlink(missing_ok=True)
        for unused in sorted(entries, key=lambda e: e.stat().st_mtime_ns, reverse=True)[MAX_ENTRIES:]:
            unused.unlink(missing_ok=True)
    except OSError:
        pass  # a cache that cannot be written (read-only home, full disk) costs time, not the answer
    return arrays
