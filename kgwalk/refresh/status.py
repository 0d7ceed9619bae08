"""`kgwalk status`: versions of every table and what each derived table and the index reflect."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

from kgwalk.config import Config
from kgwalk.stages import Runner
from kgwalk.state import lock_path, read_state, table_folders
from kgwalk.storage import check_logs, open_no_follow, table_exists


def status_data(cfg: Config) -> dict[str, Any]:
    """What `kgwalk status` says, as data (the query service's GET /status): the KG tables'
    versions and last change, what each derived table reflects and whether it is behind (from the
    stage declarations), the index's layout, the last refresh and the writer lock. A table whose
    Delta log is damaged is refused in one line (KgwalkError), every such table named."""
    check_logs(table_folders(cfg.root))
    tables = Runner(cfg).status()
    kg, derived, now = tables["kg"], tables["derived"], tables["versions"]
    state = read_state(cfg)
    layout = None
    if now.get("index"):
        from kgwalk.index.edge import EdgeStore

        layout = EdgeStore(cfg.root / "qdrant", cfg.index.compact_ratio).describe()
    edges = state.get("edges")
    holder = _holder(lock_path(cfg))
    return {"name": cfg.name, "root": str(cfg.root), "kg": kg, "derived": derived, "index_layout": layout,
            # a refresh records its change id with the KG tables; a build records its source file
            "last_refresh": {"change": edges.reflects["change"], "at": edges.updated} if edges and "change" in edges.reflects else None,
            "writer_lock": {"held": holder is not None, "holder": holder}}


def corpus_shape(cfg: Config, hubs: int = 10) -> dict[str, Any]:
    """How the walks spread over roots, and the entities with the most edges, for the query
    service's status page: {"roots", "walks", "walks_per_root": [{"walks": n, "roots": roots
    with n walks}], "hubs": [{"id", "label", "edges", "walks"}]}. Reads the edges and the walks'
    roots in full: callers keep it per table version."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from kgwalk.storage import read_table

    shape: dict[str, Any] = {"roots": 0, "walks": 0, "walks_per_root": [], "hubs": []}
    per_root: dict[int, int] = {}
    if table_exists(cfg.table("walks")):
        counts = pc.value_counts(read_table(cfg.table("walks"), ["root"]).column("root"))
        per_root = dict(zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist()))
        histogram = pc.value_counts(counts.field("counts"))
        shape["walks_per_root"] = sorted(({"walks": w, "roots": r} for w, r in zip(histogram.field("values").to_pylist(),
                                                                               histogram.field("counts").to_pylist())),
                                         key=lambda bar: bar["walks"])
        shape["roots"], shape["walks"] = len(per_root), sum(per_root.values())
    if table_exists(cfg.table("edges")) and table_exists(cfg.table("entities")):
        edges = read_table(cfg.table("edges"), ["src", "dst"])
        degree = pc.value_counts(pa.chunked_array(edges.column("src").chunks + edges.column("dst").chunks))
        top = pa.table({"id": degree.field("values"), "edges": degree.field("counts")}).sort_by(
            [("edges", "descending"), ("id", "ascending")]).slice(0, hubs)  # ties by id: the same hubs every time
        entities = read_table(cfg.table("entities"), ["id", "label"])
        labels = entities.filter(pc.is_in(entities.column("id"), top.column("id")))
        label_of = dict(zip(labels.column("id").to_pylist(), labels.column("label").to_pylist()))
        shape["hubs"] = [{"id": i, "label": label_of.get(i, str(i)), "edges": n, "walks": per_root.get(i, 0)}
                         for i, n in zip(top.column("id").to_pylist(), top.column("edges").to_pylist())]
    return shape


def status_text(cfg: Config) -> str:
    status = status_data(cfg)
    lines = [f"{status['name']} at {status['root']}"]
    lines += [f"  {t['table']:<9} version {t['version']:>4}  ({t['change']})" for t in status["kg"]]
    for t in status["derived"]:
        if not t["built"]:
            lines.append(f"  {t['table']:<9} not built")
            continue
        stale = [f"{b['table']} v{b['reflects']} -> v{b['current']}" for b in t["behind"]]
        reflects = ", ".join(f"{name} v{version}" for name, version in t["reflects"].items())
        verdict = "up to date" if not stale else "behind: " + "; ".join(stale) + " (run `kgwalk refresh` or `kgwalk build`)"
        lines.append(f"  {t['table']:<9} version {t['version']:>4}  reflects {reflects}; {verdict}  [{t['updated']}]")
    if status["index_layout"]:
        lines.append(f"  {'':<9} {status['index_layout']}")
    lock = status["writer_lock"]
    lines.append(f"  writer lock: {'free' if not lock['held'] else 'held by ' + lock['holder']}")
    return "\n".join(lines)


def _holder(path: Path) -> str | None:
    """Who holds the writer lock (what its file says), or None when no writer does. Opened
    read-only, and a link there is refused rather than followed."""
    try:
        fd = open_no_follow(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return os.pread(fd, 4096, 0).decode(errors="replace").strip()
    finally:
        os.close(fd)
