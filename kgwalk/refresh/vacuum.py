"""`kgwalk vacuum`: delete the Delta files that no table version still in use needs.

Delta is copy-on-write: every refresh writes new versions of `walks` and `texts` whole and
appends to `vectors`, and the files of older versions stay on disk for time travel (about
0.5 GB a 0.1% refresh of the 1M-edge KG; an hourly schedule fills a disk in days). Vacuum
deletes the files the tables stopped using more than `keep_hours` ago, except those of every
version something still reads: the versions the state table records (a refresh that was killed
resumes from them) and those the index's generations were built from (a server on the previous
generation reads its walk records at those versions). It takes the writer lock, so no build or
refresh is writing files it has not committed yet; like every writer, it refuses a KG folder
with a symbolic link in it or a damaged Delta log (kgwalk.state.check_kg_folder), and deletes
through file descriptors that follow no link (kgwalk.storage.unlink_beneath).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.state import read_state, table_folders, writer_lock
from kgwalk.storage import unlink_beneath


@dataclass
class VacuumReport:
    """Per table: the files deleted (or, in a dry run, that would be), how many and their bytes."""

    dry_run: bool
    files: dict[str, int] = field(default_factory=dict)
    bytes: dict[str, int] = field(default_factory=dict)
    paths: dict[str, list[Path]] = field(default_factory=dict)

    def summary(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        total = sum(self.bytes.values())
        per_table = ", ".join(f"{t} {n:,}" for t, n in self.files.items() if n) or "none"
        return f"{verb} {sum(self.files.values()):,} files, {total / 2**20:,.1f} MiB (files by table: {per_table})"


def versions_in_use(cfg: Config) -> dict[str, set[int]]:
    """By table: the versions the state table records (each table's own, and every input version
    a derived table or the index reflects) and those the index generations on disk reflect."""
    recorded: list[dict[str, Any]] = []
    kept: dict[str, set[int]] = {}
    for row in read_state(cfg).values():  # a killed update's table is still at its recorded version
        kept.setdefault(row.table, set()).add(row.version)
        recorded.append(row.reflects)
    recorded += _index_reflects(cfg.root / "qdrant")
    for reflects in recorded:
        for table, version in reflects.items():
            if table != "base" and isinstance(version, int) and not isinstance(version, bool):
                kept.setdefault(table, set()).add(version)
    return kept


def _index_reflects(folder: Path) -> list[dict[str, Any]]:
    if not folder.is_dir():
        return []
    from kgwalk.index.generations import Generations

    generations = Generations(folder)
    manifests = (generations.manifest(d.name) for d in sorted(folder.iterdir()) if d.is_dir())
    return [m.get("reflects") or {} for m in manifests if m]


def vacuum(cfg: Config, *, keep_hours: int = 24, dry_run: bool = False) -> VacuumReport:
    """Delete (or with `dry_run` list) the files of every Delta table of the KG that no version
    in use needs and that left the table more than `keep_hours` ago."""
    from deltalake import DeltaTable

    if keep_hours < 0:
        raise KgwalkError(f"vacuum: --keep-hours must be >= 0, got {keep_hours}")
    if not cfg.root.is_dir():
        raise KgwalkError(f"vacuum: no KG {cfg.name!r} under {cfg.warehouse} (run `kgwalk build` first)")
    report = VacuumReport(dry_run)
    with writer_lock(cfg, "kgwalk vacuum"):
        in_use = versions_in_use(cfg)
        for folder in table_folders(cfg.root):
            table = DeltaTable(str(folder))
            keep = sorted(in_use.get(folder.name, set()) | {table.version()})
            # Listed by delta-rs, deleted here: its vacuum would also log itself as two commits,
            # moving every table's version and so making each derived table look behind its inputs.
            listed = table.vacuum(retention_hours=keep_hours, dry_run=True, enforce_retention_duration=False, full=True, keep_versions=keep)
            names = sorted(name for name in listed if os.path.lexists(folder / name))  # the log still names files an earlier vacuum deleted
            report.paths[folder.name] = [folder / name for name in names]
            report.files[folder.name] = len(names)
            report.bytes[folder.name] = sum((folder / name).lstat().st_size for name in names)
            if not dry_run:
                for name in names:
                    unlink_beneath(folder, name)
    return report
