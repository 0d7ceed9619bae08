"""The five stages, each a function of the config, and `build` running them in order.

Entry points (CLI, jobs/, pipelines/, Python callers) call these; each prints one line of progress
per stage and takes the KG's writer lock (a build holds it across its stages).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.log import log, timed
from kgwalk.state import DERIVED_INPUTS, KG_TABLES, fingerprint, record, versions, writer_lock

if TYPE_CHECKING:  # stage modules load lazily: `kgwalk query` should not import Spark or Ray
    from kgwalk.index.build import IndexResult
    from kgwalk.kg.ingest import IngestResult
    from kgwalk.walks.spark_job import WalksResult

T = TypeVar("T")


def folder_bytes(path: Path) -> int:
    """Bytes on disk (allocated blocks: Qdrant preallocates sparse files)."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def settings_fingerprints(cfg: Config) -> dict[str, str]:
    """Per derived table, a fingerprint of the settings that decide its content (not how fast it
    is made): a refresh refuses a corpus built with other settings."""
    from kgwalk.verbalize.llm import verbalizer_key

    walks = asdict(cfg.walks)
    for key in ("engine", "max_graph_bytes", "roots_per_batch", "max_paths_per_batch"):  # how, not what
        walks.pop(key)
    # an LLM verbalizer's sentences follow its model, prompt and sampling (the template's: phrases)
    llm = {} if cfg.verbalize.verbalizer == "template" else {"llm": verbalizer_key(cfg.verbalize)}
    return {
        "walks": fingerprint(walks),
        "texts": fingerprint({"verbalizer": cfg.verbalize.verbalizer, "phrases": cfg.verbalize.phrases, **llm}),
        "vectors": fingerprint({"model": cfg.embed.model, "precision": cfg.embed.precision}),
    }


def recorded(cfg: Config, table: str, inputs: tuple[str, ...], fn: Callable[[], Any]) -> Any:
    """Run a stage and record in the state table which input versions its output reflects
    (read before the stage reads its inputs); what incremental refresh starts from."""
    reflects: dict[str, Any] = versions(cfg, inputs) if inputs else {}
    result = fn()
    if table in ("walks", "texts", "vectors"):
        reflects["settings"] = settings_fingerprints(cfg)[table]
    if table == "index":
        from kgwalk.index.store import index_version

        record(cfg, table, index_version(cfg), reflects)
    else:
        record(cfg, table, versions(cfg, (table,))[table], reflects)
    return result


def check_kg_file(cfg: Config) -> str:
    """The KG file ingest will read (it exists): checked before the writer lock is taken, so a
    wrong --kg leaves no folder behind."""
    from kgwalk.kg.readers import input_file

    if not cfg.kg.path:
        raise KgwalkError("no KG file given: pass --kg FILE or set kg.path in conf")
    input_file(cfg.kg.path)
    return cfg.kg.path


def run_ingest(cfg: Config) -> IngestResult:
    from kgwalk.kg.ingest import ingest

    path = check_kg_file(cfg)
    check = None
    if cfg.quality.gates:
        from kgwalk.quality import gate_ingest

        check = lambda r: gate_ingest(cfg, r)  # noqa: E731
    if cfg.ingest.align:
        from kgwalk.kg.align import read_overrides

        read_overrides(cfg.ingest.align_overrides)  # a bad decisions file fails before anything is written
    with writer_lock(cfg, "kgwalk ingest"):
        result = timed("ingest", lambda: ingest(path, cfg.root, cfg.kg.format, cfg.ingest.max_label_length, check), lambda r: r.summary())
        for table, version in versions(cfg, KG_TABLES).items():
            record(cfg, table, version, {"source": str(path)})
        if cfg.ingest.align:  # the review table; queries recompute the links from the tables they read
            from kgwalk.kg.align import write_alignment

            i = cfg.ingest
            timed("align", lambda: write_alignment(cfg.root, result.entities, result.edges, i.align_threshold, i.align_overrides), str)
    return result


def _derive(cfg: Config, stage: str, table: str, compute: Callable[[], T], describe: Callable[[T], str]) -> T:
    """One derived table's stage: under the writer lock, timed, its inputs recorded in the state table."""
    with writer_lock(cfg, f"kgwalk {stage}"):
        return timed(stage, lambda: recorded(cfg, table, DERIVED_INPUTS[table], compute), describe)


def run_walks(cfg: Config, spark=None) -> WalksResult:
    from kgwalk.walks.spark_job import build_walks

    return _derive(
        cfg, "walks", "walks", lambda: build_walks(cfg, spark),
        lambda r: f"{r.walks:,} walks from {r.roots:,} roots ({r.engine} engine; {','.join(cfg.walks.kinds)}, direction {cfg.walks.direction}, depth {cfg.walks.depth})",
    )


def run_verbalize(cfg: Config) -> int:
    from kgwalk.verbalize.pipeline import verbalize_walks

    sink = _derive(
        cfg, "verbalize", "texts", lambda: verbalize_walks(cfg),
        lambda s: f"{sum(s.sources.values()):,} sentences ({cfg.verbalize.verbalizer}: {s.summary()})",
    )
    return sum(sink.sources.values())


def run_embed(cfg: Config) -> int:
    from kgwalk.embed.pipeline import embed_texts

    return _derive(cfg, "embed", "vectors", lambda: embed_texts(cfg), lambda n: f"{n:,} vectors ({cfg.embed.model})")


def run_index(cfg: Config) -> IndexResult:
    from kgwalk.index.build import build_index

    def describe(r: IndexResult) -> str:
        size = folder_bytes(cfg.root / "qdrant") if cfg.index.backend == "edge" else 0
        text = f"{r.walks:,} walk points, {r.nodes:,} node points"
        if r.entities_without_walks:
            text += f" ({r.entities_without_walks:,} entities have no walk and no node point)"
        return text + (f"; index {size / 2**20:,.1f} MiB" if size else "")

    return _derive(cfg, "index", "index", lambda: build_index(cfg), describe)


@dataclass
class BuildReport:
    seconds: dict[str, float] = field(default_factory=dict)
    walks: int = 0
    nodes: int = 0
    index_bytes: int = 0


def run_build(cfg: Config) -> BuildReport:
    """Every stage in order, under one writer lock (taken after the KG file is found, so a wrong
    path leaves nothing behind)."""
    check_kg_file(cfg)
    with writer_lock(cfg, "kgwalk build"):
        return _build(cfg)


def _build(cfg: Config) -> BuildReport:
    report = BuildReport()
    stages: list[tuple[str, Callable[[Config], Any]]] = [
        ("ingest", run_ingest),
        ("walks", run_walks),
        ("verbalize", run_verbalize),
        ("embed", run_embed),
        ("index", run_index),
    ]
    for name, fn in stages:
        start = time.perf_counter()
        result = fn(cfg)
        report.seconds[name] = time.perf_counter() - start
        if name == "index":
            report.walks, report.nodes = result.walks, result.nodes
    report.index_bytes = folder_bytes(cfg.root / "qdrant")
    total = sum(report.seconds.values())
    log(
        f"build: {report.walks:,} walks, {report.nodes:,} nodes in {total:.1f} s "
        + "(" + ", ".join(f"{k} {v:.1f} s" for k, v in report.seconds.items()) + ")"
        + (f"; index {report.index_bytes / 2**20:,.1f} MiB at {cfg.root / 'qdrant'}" if report.index_bytes else "")
    )
    return report
