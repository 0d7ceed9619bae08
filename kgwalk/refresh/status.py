"""`kgwalk status`: versions of every table and what each derived table and the index reflect."""

from __future__ import annotations

from kgwalk.config import Config
from kgwalk.index.store import index_version
from kgwalk.refresh.state import KG_TABLES, read_state
from kgwalk.storage import commit_metadata, table_exists, table_version

_DERIVED = {"walks": KG_TABLES, "texts": ("walks", "entities", "relations"), "vectors": ("texts",),
            "index": ("walks", "texts", "vectors", "entities", "relations")}


def status_text(cfg: Config) -> str:
    state = read_state(cfg)
    now = {t: table_version(cfg.table(t)) for t in (*KG_TABLES, "walks", "texts", "vectors") if table_exists(cfg.table(t))}
    if cfg.index.backend == "edge":
        now["index"] = index_version(cfg)
    lines = [f"{cfg.name} at {cfg.root}"]
    for table in KG_TABLES:
        if table in now:
            change = commit_metadata(cfg.table(table)).get("change", state[table].reflects.get("source", "?") if table in state else "?")
            lines.append(f"  {table:<9} version {now[table]:>4}  ({change})")
    for table, inputs in _DERIVED.items():
        if table not in state:
            lines.append(f"  {table:<9} not built")
            continue
        s = state[table]
        stale = [f"{t} v{s.reflects.get(t)} -> v{now[t]}" for t in inputs if t in now and s.reflects.get(t) != now[t]]
        reflects = ", ".join(f"{t} v{s.reflects[t]}" for t in inputs if t in s.reflects)
        verdict = "up to date" if not stale else "behind: " + "; ".join(stale) + " (run `kgwalk refresh` or `kgwalk build`)"
        lines.append(f"  {table:<9} version {s.version:>4}  reflects {reflects}; {verdict}  [{s.updated}]")
    if now.get("index"):
        from kgwalk.index.edge import EdgeStore

        lines.append(f"  {'':<9} {EdgeStore(cfg.root / 'qdrant', cfg.index.compact_ratio).describe()}")
    lock = cfg.root / "_writer.lock"
    holder = lock.read_text().strip() if lock.exists() else ""
    lines.append(f"  writer lock: {'free' if not _held(lock) else 'held by ' + holder}")
    return "\n".join(lines)


def _held(path) -> bool:
    import fcntl
    import os

    if not path.exists():
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
