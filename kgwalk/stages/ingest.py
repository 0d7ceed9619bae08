"""The KG tables (entities, relations, edges, rejected): read from the KG file in full, or
changed by a change set or a new snapshot (refresh's first step)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from kgwalk.config import Config
from kgwalk.errors import KgwalkError, QualityGateFailed
from kgwalk.faults import crashpoint
from kgwalk.log import log, timed
from kgwalk.stages.base import Stage, Step
from kgwalk.state import KG_TABLES, fingerprint, read_state, record, versions
from kgwalk.storage import commit_metadata, read_table, table_exists, table_version, write_table

if TYPE_CHECKING:  # read lazily: `kgwalk query` builds the CLI from these declarations
    from kgwalk.kg.ingest import IngestResult


def check_kg_file(cfg: Config) -> str:
    """The KG file ingest will read (it exists): checked before the writer lock is taken, so a
    wrong --kg leaves no folder behind."""
    from kgwalk.kg.readers import input_file

    if not cfg.kg.path:
        raise KgwalkError("no KG file given: pass --kg FILE or set kg.path in conf")
    input_file(cfg.kg.path)
    return cfg.kg.path


def _preflight(cfg: Config) -> None:
    check_kg_file(cfg)
    if cfg.ingest.align:
        from kgwalk.kg.align import read_overrides

        read_overrides(cfg.ingest.align_overrides)  # a bad decisions file fails before anything is written


def _build(step: Step) -> IngestResult:
    from kgwalk.kg.ingest import ingest

    cfg = step.cfg
    check = None
    if cfg.quality.gates:
        from kgwalk.quality import gate_ingest

        check = lambda r: gate_ingest(cfg, r)  # noqa: E731
    result = ingest(check_kg_file(cfg), cfg.root, cfg.kg.format, cfg.ingest.max_label_length, check)
    if cfg.ingest.align:  # the review table; queries recompute the links from the tables they read
        from kgwalk.kg.align import write_alignment

        i = cfg.ingest
        timed("align", lambda: write_alignment(cfg.root, result.entities, result.edges, i.align_threshold, i.align_overrides), str)
    reflects = _source(cfg)  # recorded last: a kill before leaves nothing a rerun could keep
    for table, version in versions(cfg, KG_TABLES).items():
        record(cfg, table, version, reflects)
    return result


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()[:24]


def _source(cfg: Config) -> dict[str, str]:
    """What the KG tables of a build reflect: the file (its path and content) and the settings
    that decide what ingest makes of it or refuses."""
    overrides = cfg.ingest.align_overrides
    settings = [cfg.kg.format, asdict(cfg.ingest), _digest(overrides) if cfg.ingest.align and overrides else None, asdict(cfg.quality)]
    return {"source": str(cfg.kg.path), "digest": _digest(check_kg_file(cfg)), "settings": fingerprint(settings)}


def _kept(cfg: Config) -> bool:
    """The KG tables are as a build of this file with these settings left them (a refresh since
    records its change instead, and a later write moves a table's version on)."""
    state = read_state(cfg)
    if any(t not in state or not table_exists(cfg.table(t)) or state[t].version != table_version(cfg.table(t)) for t in KG_TABLES):
        return False
    reflects = _source(cfg)
    return all(state[t].reflects == reflects for t in KG_TABLES)


def _change_id(path: str, snapshot: bool) -> str:
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:24]
    return f"{'snapshot' if snapshot else 'changes'}:{digest}"


def _applied(cfg: Config, change_id: str) -> int | None:
    """The edges version this change input was applied in, if it is the latest change, so that a
    retry of the same run (cron, a crash) is a no-op. Only the latest counts: a change set whose
    content equals an older one that a later change undid is a new change. Skipping it when it is
    the latest is exact, since applying a change set or snapshot twice in a row equals applying it
    once (adds of present and removals of absent edges change nothing)."""
    if commit_metadata(cfg.table("edges")).get("change") == change_id:
        return table_version(cfg.table("edges"))
    return None


def _update(step: Step) -> None:
    """The change input -> new versions of entities, relations, edges (edges last: its commit,
    tagged with the change id, is what marks the change as applied)."""
    from kgwalk.kg.changes import KgTables, apply_changes, snapshot_update
    from kgwalk.kg.ingest import keep_rejected
    from kgwalk.kg.readers import read_kg

    cfg, change = step.cfg, step.change
    assert change is not None, "a refresh step is given its change input"
    change_id = _change_id(change.path, change.snapshot)
    version = _applied(cfg, change_id)
    if version is not None:
        log(f"refresh: {change.path} was applied already (edges version {version}); bringing the corpus up to date")
        return
    read = read_kg(change.path, change.format, cfg.ingest.max_label_length, with_op=not change.snapshot)
    old = KgTables(*(read_table(cfg.table(t), what="ingest") for t in ("entities", "relations", "edges")))
    update = (snapshot_update if change.snapshot else apply_changes)(old, read, str(change.path))
    if not update.tables.edges.num_rows:
        raise KgwalkError(f"{change.path}: the change would leave the KG without edges; refusing")
    # `base` tells this run's commits from an earlier application of the same content
    meta = {"change": change_id, "base": table_version(cfg.table("edges"))}
    if cfg.quality.gates:
        from kgwalk.quality import gate_kg

        t = update.tables
        try:
            gate_kg(cfg, t.entities, t.relations, t.edges, len(read.triples) + len(read.rejected), update.rejected)
        except QualityGateFailed as e:  # the KG stays as it was; its rejected lines are kept to read
            raise QualityGateFailed(f"{e}{keep_rejected(cfg.table('rejected'), update.rejected, meta)}") from None
    keep_rejected(cfg.table("rejected"), update.rejected, meta)
    write_table(cfg.table("entities"), update.tables.entities, metadata=meta)
    write_table(cfg.table("relations"), update.tables.relations, metadata=meta)
    crashpoint("kg.labels_written")
    write_table(cfg.table("edges"), update.tables.edges, metadata=meta)
    for table, v in versions(cfg, KG_TABLES).items():
        record(cfg, table, v, meta)
    step.report.kg = update


INGEST: Stage[IngestResult] = Stage(
    name="kg", command="ingest", help="read a KG file into Delta tables (entities, relations, edges, rejected)",
    inputs=(), build=_build, describe=lambda cfg, r: r.summary(), update=_update,
    preflight=_preflight, reads_kg_file=True, kept=_kept,
)
