"""The build's tables, each declared once as a `Stage` (its inputs, settings, full build, update
and progress line), and one `Runner` for `build`, single stages, `refresh` and `status`.

Entry points (CLI, jobs/, pipelines/, Python callers) use the runner or the `run_*` functions
below; each prints one line of progress per stage and takes the KG's writer lock. Stage modules
load Spark, Ray and models lazily: `kgwalk query` builds its command line from these declarations.

Adding a table: a module here with its `Stage` (and its compute function where it lives), and
its place in `runner.STAGES`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgwalk.config import Config
from kgwalk.stages.base import ChangeInput, Stage, Step, folder_bytes, recorded
from kgwalk.stages.index import INDEX
from kgwalk.stages.ingest import INGEST, check_kg_file
from kgwalk.stages.report import BuildReport, RefreshReport
from kgwalk.stages.runner import STAGES, Runner, check_kg_exists, check_refresh_input, stage_named
from kgwalk.stages.texts import TEXTS
from kgwalk.stages.vectors import VECTORS
from kgwalk.stages.walks import WALKS

if TYPE_CHECKING:
    from kgwalk.index.build import IndexResult
    from kgwalk.kg.ingest import IngestResult
    from kgwalk.walks.spark_job import WalksResult

__all__ = [
    "INDEX", "INGEST", "STAGES", "TEXTS", "VECTORS", "WALKS", "BuildReport", "ChangeInput", "RefreshReport", "Runner", "Stage",
    "Step", "check_kg_exists", "check_kg_file", "check_refresh_input", "folder_bytes", "recorded", "run_build", "run_embed", "run_index",
    "run_ingest", "run_verbalize", "run_walks", "stage_named",
]


def run_build(cfg: Config) -> BuildReport:
    return Runner(cfg).build()


def run_ingest(cfg: Config) -> IngestResult:
    return Runner(cfg).run(INGEST)


def run_walks(cfg: Config, spark: Any = None) -> WalksResult:
    return Runner(cfg, spark).run(WALKS)


def run_verbalize(cfg: Config) -> int:
    """The number of sentences written."""
    return sum(Runner(cfg).run(TEXTS).sources.values())


def run_embed(cfg: Config) -> int:
    return Runner(cfg).run(VECTORS)


def run_index(cfg: Config) -> IndexResult:
    return Runner(cfg).run(INDEX)
