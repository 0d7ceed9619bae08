"""A stage declaration (`Stage`) and what one run of a stage is given (`Step`).

Each table the build makes is declared once, as a `Stage` in its own module of this package
(ingest, walks, texts, vectors, index); `kgwalk.stages.runner` lists them in order (`STAGES`)
and runs them for `build`, a single stage, `refresh` and `status`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from kgwalk.config import Config
from kgwalk.state import TableState, fingerprint, read_state, record, versions
from kgwalk.storage import commit_metadata, table_exists, table_version
from kgwalk.stages.report import RefreshReport

R = TypeVar("R")


@dataclass(frozen=True)
class ChangeInput:
    """What a refresh applies: a change set (an op per triple) or a new snapshot of the KG."""

    path: str
    format: str = "auto"
    snapshot: bool = False


@dataclass
class Step:
    """One stage's run: the config, a Spark session where one was passed (else the stage starts
    its own, or none), and for a refresh the report it fills, the change input, the state
    table as it was before the step and the refresh's memo shared by its steps."""

    cfg: Config
    stage: Stage[Any]
    spark: Any = None
    report: RefreshReport = field(default_factory=RefreshReport)
    change: ChangeInput | None = None
    state: dict[str, TableState] = field(default_factory=dict)
    shared: dict[str, Any] = field(default_factory=dict)  # a refresh's memo of what several steps compute (kgwalk.stages.diff)

    def pending(self) -> dict[str, Any] | None:
        """What the stage's table will reflect after this update, or None when there is nothing
        to do: its inputs did not change, or a crashed run already committed it (its commit
        metadata says so; then it is recorded here)."""
        cfg, table = self.cfg, self.stage.name
        done = self.state[table].reflects
        now = versions(cfg, self.stage.inputs)
        if all(done[t] == now[t] for t in self.stage.inputs):
            self.report.skipped.append(table)
            return None
        reflects = {**now, "settings": done["settings"], "base": self.state[table].version}
        if commit_metadata(cfg.table(table)) == reflects:
            record(cfg, table, table_version(cfg.table(table)), reflects)
            return None
        return reflects


@dataclass(frozen=True)
class Stage(Generic[R]):
    """One table of the build, declared once.

    `name` is the table it writes, as the state table, the refresh report and the crash points
    name it ("kg" for ingest's entities, relations and edges); `command` its `kgwalk` subcommand.
    `inputs` are the tables it reads (none: it reads the KG file). `build` computes it in full
    and returns what `describe` turns into its progress line; `update` brings it up to date
    from the input versions its state row records (refresh), writing and recording itself.
    `settings` returns the settings that decide its content (not how fast it is made): their
    fingerprint is recorded with the table, and a refresh refuses a corpus built with others.
    """

    name: str
    command: str
    help: str
    inputs: tuple[str, ...]
    build: Callable[[Step], R]
    describe: Callable[[Config, R], str]
    update: Callable[[Step], None]
    settings: Callable[[Config], Any] | None = None
    # the version recorded for it; default: its Delta table's (the index: the live generation)
    version: Callable[[Config], int] | None = None
    # its version for `status`, None when there is none to show; default: its Delta table's
    current: Callable[[Config], int | None] | None = None
    # checks run before the writer lock is taken (which creates the KG folder): a wrong path
    # ends in one line and leaves nothing behind
    preflight: Callable[[Config], None] | None = None
    reads_kg_file: bool = False  # its command takes --kg and --format
    uses_ray: bool = False  # a build lets Ray go after the last stage that uses it (kgwalk.ray_runtime.release_ray)
    # whether an earlier run left its table(s) complete for today's input and settings, so that a
    # build run again after a kill keeps them; default: `up_to_date`'s rule for derived tables
    kept: Callable[[Config], bool] | None = None

    @property
    def derived(self) -> bool:
        return bool(self.inputs)

    def fingerprint(self, cfg: Config) -> str | None:
        return fingerprint(self.settings(cfg)) if self.settings else None

    def up_to_date(self, cfg: Config) -> bool:
        """Whether a build may keep this stage's table as an earlier run left it: its state row
        reflects today's input versions and settings, and nothing wrote the table since. Only
        stages with a settings fingerprint qualify (the index records none, so it is always
        made again): without one, a build with other settings could not be told apart."""
        if self.kept:
            return self.kept(cfg)
        if not self.settings:
            return False
        row = read_state(cfg).get(self.name)
        if row is None or row.version != self.current_version(cfg):
            return False
        return row.reflects == {**versions(cfg, self.inputs), "settings": self.fingerprint(cfg)}

    def recorded_version(self, cfg: Config) -> int:
        return self.version(cfg) if self.version else versions(cfg, (self.name,))[self.name]

    def current_version(self, cfg: Config) -> int | None:
        if self.current:
            return self.current(cfg)
        return table_version(cfg.table(self.name)) if table_exists(cfg.table(self.name)) else None


def recorded(cfg: Config, stage: Stage[R], compute: Callable[[], R]) -> R:
    """Compute a derived table and record in the state table which input versions it reflects
    (read before it reads its inputs) and its settings' fingerprint: what a refresh starts from."""
    reflects: dict[str, Any] = versions(cfg, stage.inputs)
    result = compute()
    if stage.settings:
        reflects["settings"] = stage.fingerprint(cfg)
    record(cfg, stage.name, stage.recorded_version(cfg), reflects)
    return result


def folder_bytes(path: Path) -> int:
    """Bytes on disk (allocated blocks: Qdrant preallocates sparse files)."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) if path.exists() else 0
