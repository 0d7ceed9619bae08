"""`kgwalk refresh` from Python: apply a change set (or a new snapshot) and bring walks, texts,
vectors and the index up to date by recomputing only what the change reaches. Each table's
update is declared with its stage (kgwalk.stages); the runner applies them in order."""

from __future__ import annotations

from typing import Any

from kgwalk.config import Config
from kgwalk.stages import RefreshReport, Runner


def run_refresh(cfg: Config, path: str, fmt: str = "auto", snapshot: bool = False, spark: Any = None) -> RefreshReport:
    """The whole refresh under the writer lock (see `Runner.refresh`); `spark`: walk the affected
    roots as a Spark job instead of in this process."""
    return Runner(cfg, spark).refresh(path, fmt, snapshot)
