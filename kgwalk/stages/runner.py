"""`STAGES`, every table of the build in dependency order, and the `Runner` that walks them for
`build`, a single stage, `refresh` and `status`.

Every run takes the KG's writer lock (a build holds it across its stages, a stage run inside it
takes it again) and prints one line of progress per stage.
"""

from __future__ import annotations

import time
from typing import Any, TypeVar

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.faults import crashpoint
from kgwalk.log import log, timed
from kgwalk.ray_runtime import release_ray
from kgwalk.stages.base import ChangeInput, Stage, Step, folder_bytes, recorded
from kgwalk.stages.index import INDEX
from kgwalk.stages.ingest import INGEST
from kgwalk.stages.report import BuildReport, RefreshReport
from kgwalk.stages.texts import TEXTS
from kgwalk.stages.vectors import VECTORS
from kgwalk.stages.walks import WALKS
from kgwalk.state import KG_TABLES, check_kg_folder, read_state, writer_lock
from kgwalk.storage import commit_metadata, table_exists, table_version

R = TypeVar("R")

STAGES: tuple[Stage[Any], ...] = (INGEST, WALKS, TEXTS, VECTORS, INDEX)


def stage_named(command: str) -> Stage[Any]:
    """The stage a `kgwalk` subcommand runs."""
    return next(s for s in STAGES if s.command == command)


def check_refresh_input(cfg: Config, path: str, snapshot: bool) -> None:
    """The change input is a file and the KG exists: checked before the writer lock, which creates
    the KG's folder, so a wrong path or name ends in one line and leaves nothing behind."""
    from kgwalk.kg.readers import input_file

    input_file(path, "snapshot" if snapshot else "change set")
    if not cfg.root.is_dir():
        raise KgwalkError(f"nothing to refresh: no KG named {cfg.name!r} in {cfg.warehouse} (run `kgwalk build` first)")
    check_kg_folder(cfg)  # and again under the lock: a refresh never builds on a damaged table


def check_kg_exists(cfg: Config) -> None:
    """The KG has been ingested (its edges table exists): checked before a reader opens it, so
    that a wrong name ends in one line saying so, not in what the first missing table suggests."""
    if not table_exists(cfg.table("edges")):
        raise KgwalkError(f"no KG named {cfg.name!r} in the warehouse {cfg.warehouse}: check --name and --warehouse, "
                          f"or build it with `kgwalk build --name {cfg.name} --kg FILE`")


class Runner:
    """Runs the declared stages on one KG. `spark`: a session for the walks (build: the walks
    job starts its own when none is given; refresh: the affected roots are walked in this
    process when none is given)."""

    def __init__(self, cfg: Config, spark: Any = None, stages: tuple[Stage[Any], ...] = STAGES) -> None:
        self.cfg, self.spark, self.stages = cfg, spark, stages

    def run(self, stage: Stage[R]) -> R:
        """One stage in full, under the writer lock, timed; a derived table's input versions and
        settings are recorded in the state table."""
        if stage.preflight:
            stage.preflight(self.cfg)
        return self._run(stage)

    def _run(self, stage: Stage[R]) -> R:
        """`run` after the preflight check (a build checks every stage's before its first)."""
        cfg = self.cfg
        step = Step(cfg, stage, self.spark)
        compute = (lambda: recorded(cfg, stage, lambda: stage.build(step))) if stage.derived else (lambda: stage.build(step))
        with writer_lock(cfg, f"kgwalk {stage.command}"):
            return timed(stage.command, compute, lambda result: stage.describe(cfg, result))

    def build(self, *, keep_done: bool = True) -> BuildReport:
        """Every stage in full, in order, under one writer lock (taken after the preflight checks,
        so a wrong path leaves nothing behind). With `keep_done`, a stage whose table an earlier
        run left up to date (`Stage.up_to_date`: the same input and settings) is kept, not made
        again: a build killed in its last stage resumes there when run again. Ray is let go
        after the last stage that uses it: the index stage runs in this process and needs the
        memory a local Ray keeps (kgwalk.ray_runtime.release_ray).

        A build is not a refresh from empty: the full path walks every root as a Spark job and
        verbalizes and embeds on Ray, where an update works in this process on the difference
        to the recorded versions; from empty it would do all the work in one process."""
        cfg, report = self.cfg, BuildReport()
        for stage in self.stages:
            if stage.preflight:
                stage.preflight(cfg)
        results: dict[str, Any] = {}
        last_on_ray = max((n for n, stage in enumerate(self.stages) if stage.uses_ray), default=-1)
        with writer_lock(cfg, "kgwalk build"):
            for n, stage in enumerate(self.stages):
                start = time.perf_counter()
                if keep_done and stage.up_to_date(cfg):
                    log(f"{stage.command}: kept, as an earlier run left it (same input and settings; --rebuild makes it again)")
                    report.kept.append(stage.command)
                else:
                    results[stage.name] = self._run(stage)
                if n == last_on_ray:
                    release_ray()
                report.seconds[stage.command] = time.perf_counter() - start
        index = results[INDEX.name]
        report.walks, report.nodes = index.walks, index.nodes
        report.index_bytes = folder_bytes(cfg.root / "qdrant")
        total = sum(report.seconds.values())
        log(
            f"build: {report.walks:,} walks, {report.nodes:,} nodes in {total:.1f} s "
            + "(" + ", ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items()) + ")"
            + (f"; index {report.index_bytes / 2**20:,.1f} MiB at {cfg.root / 'qdrant'}" if report.index_bytes else "")
            + (f"; kept from an earlier run: {', '.join(report.kept)}" if report.kept else "")
        )
        return report

    def refresh(self, path: str, fmt: str = "auto", snapshot: bool = False) -> RefreshReport:
        """Apply a change set (or a new snapshot) and bring every derived table up to date by
        recomputing only what the change reaches, under the writer lock.

        Each update diffs its inputs between the versions its table's state row records and the
        current ones, and applies only the difference; its commit carries the same facts as
        metadata. So a refresh killed anywhere is completed by running it again: updates that
        landed are recognised and skipped, the others redo the same deterministic work."""
        cfg = self.cfg
        check_refresh_input(cfg, path, snapshot)
        report, change = RefreshReport(), ChangeInput(path, fmt, snapshot)
        with writer_lock(cfg, "kgwalk refresh"):
            state = read_state(cfg)
            derived = [s for s in self.stages if s.derived]
            missing = [s.name for s in derived if s.name not in state]
            if missing:
                raise KgwalkError(f"nothing to refresh: no recorded {missing[0]} (run `kgwalk build` first)")
            for stage in derived:
                if stage.settings and state[stage.name].reflects.get("settings") != stage.fingerprint(cfg):
                    # the one default that moved: a corpus embedded before embed.model's default became auto
                    hint = " (or set the model it was built with: embed.model's default is auto, static on a CPU)" if stage.name == "vectors" else ""
                    raise KgwalkError(f"{stage.name} settings changed since the corpus was built: refresh recomputes only changes; "
                                      f"run `kgwalk build`{hint}")
            shared: dict[str, Any] = {}
            for stage in self.stages:
                start = time.perf_counter()
                stage.update(Step(cfg, stage, self.spark, report, change, read_state(cfg), shared))
                report.seconds[stage.name] = time.perf_counter() - start
                crashpoint(f"{stage.name}.done")
        return report

    def status(self) -> dict[str, Any]:
        """What the tables are at: the KG tables' versions and last change, and per derived table
        its recorded version, the input versions it reflects and which of them moved on."""
        cfg = self.cfg
        state = read_state(cfg)
        now: dict[str, int] = {t: table_version(cfg.table(t)) for t in KG_TABLES if table_exists(cfg.table(t))}
        for stage in self.stages:
            version = stage.current_version(cfg) if stage.derived else None
            if version is not None:
                now[stage.name] = version
        kg = [{"table": table, "version": now[table],
               "change": commit_metadata(cfg.table(table)).get("change", state[table].reflects.get("source", "?") if table in state else "?")}
              for table in KG_TABLES if table in now]
        derived: list[dict[str, Any]] = []
        for stage in self.stages:
            if not stage.derived:
                continue
            if stage.name not in state:
                derived.append({"table": stage.name, "built": False})
                continue
            s, inputs = state[stage.name], stage.inputs
            derived.append({"table": stage.name, "built": True, "version": s.version, "updated": s.updated,
                            "reflects": {t: s.reflects[t] for t in inputs if t in s.reflects},
                            "behind": [{"table": t, "reflects": s.reflects.get(t), "current": now[t]}
                                       for t in inputs if t in now and s.reflects.get(t) != now[t]]})
        return {"kg": kg, "derived": derived, "versions": now}
