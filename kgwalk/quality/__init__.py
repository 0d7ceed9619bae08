"""Data-quality gates: each stage validates what it is about to commit, and commits nothing when
a gate fails (`quality.gates`, on by default).

- ingest: `entities`, `relations`, `edges` and the rejected-record ratio, before any table is written;
- walks: every walk (length, arrays, root, known nodes and relations, no hub passed through),
  summarized by the Spark tasks that make the walks, validated before the Delta commit;
- verbalize: every sentence (non-empty, bounded, known source, fallback ratio), before the commit;
- refresh: the same gates on the KG tables a change set makes, on the walks it recomputed (and
  the row count of the whole walks table) and on the whole texts table it is about to write.

Suites live in `suites.py`, the per-row check columns in `checks.py`, the GX runner in `gate.py`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kgwalk.log import log
from kgwalk.quality.checks import WALK_CHECKS_SCHEMA, WalkReference, ingest_checks, merge_summaries, summarize, text_checks, walk_checks
from kgwalk.quality.gate import GateResult, QualityGateFailed, enforce, validate

if TYPE_CHECKING:
    from kgwalk.config import Config
    from kgwalk.kg.ingest import IngestResult

__all__ = ["GateResult", "QualityGateFailed", "WalksGate", "gate_ingest", "gate_kg", "gate_texts", "gate_walks", "rejected_words", "summarize", "text_checks", "walk_reference", "walks_gate"]


_EMPTY_TEXTS = pa.table({"walk_id": pa.array([], pa.int64()), "text": pa.array([], pa.string()), "source": pa.array([], pa.string())})


def _validated(cfg: Config, gates: list[tuple[str, Any, Any, str | None, bool]], table_rows: dict[str, int] | None = None) -> list[GateResult]:
    """Validate (name, frame, suite, id column, frame is a summary) each and log the verdicts.
    `table_rows`: by gate name, the rows of the table a summary's rows belong to, where the
    summary covers only part of it (see gate_walks)."""
    rows = table_rows or {}
    results = [validate(name, frame, suite, cfg.root / "_quality", id_column, summary, table_rows=rows.get(name))
               for name, frame, suite, id_column, summary in gates]
    for r in results:
        verdict = "passed" if r.success else "FAILED"
        log(f"quality: {r.name} {verdict} ({r.rows:,} rows) in {r.seconds:.2f} s; report {r.report.with_suffix('.html')}")
    return results


def _run(cfg: Config, gates: list[tuple[str, Any, Any, str | None, bool]], table_rows: dict[str, int] | None = None) -> list[GateResult]:
    """Validate and log each gate, then raise once for all that failed."""
    results = _validated(cfg, gates, table_rows)
    enforce(results)
    return results


def gate_ingest(cfg: Config, result: IngestResult) -> list[GateResult]:
    """Validate an ingest's tables before they are written."""
    return gate_kg(cfg, result.entities, result.relations, result.edges, result.lines_read, result.rejected)


def gate_kg(cfg: Config, entities: pa.Table, relations: pa.Table, edges: pa.Table, records_read: int, rejected: pa.Table) -> list[GateResult]:
    """Validate the KG tables about to be written (by ingest, or by a refresh's change set);
    `rejected`: the input's rejected lines (kgwalk.kg.ingest.REJECTED_SCHEMA), which a failed
    rejected-ratio gate counts by reason and quotes."""
    from kgwalk.quality.suites import ingest_suites

    rows = ingest_checks(entities, relations, edges, records_read, rejected.num_rows)
    suites = ingest_suites(cfg)
    ids = {"entities": "key", "relations": "key", "edges": "src"}
    results = _validated(cfg, [("ingest", rows["ingest"], suites["ingest"], None, False)]
                         + [(name, summarize(rows[name], id_column), suites[name], id_column, True) for name, id_column in ids.items()])
    if not results[0].success:  # the ratio alone tells a user nothing: which lines, and why
        results[0].failures = [rejected_words(rejected, records_read, cfg.quality.max_rejected_ratio)]
    enforce(results)
    return results


def rejected_words(rejected: pa.Table, records_read: int, limit: float, reasons: int = 5, lines: int = 5) -> str:
    """A failed rejected-ratio gate in one line: how many of how many lines, each reason counted
    (the `reasons` commonest), and the first `lines` rejected lines with their numbers."""
    counts = Counter(rejected.column("reason").to_pylist())
    named = ", ".join(f"{reason!r} x{n:,}" for reason, n in counts.most_common(reasons))
    if len(counts) > reasons:
        named += f" and {len(counts) - reasons:,} other reasons"
    first = rejected.sort_by("line").slice(0, lines).to_pylist()
    quoted = ", ".join(f"line {r['line']}: {(r['text'] or '')[:60]!r}" for r in first)
    share = rejected.num_rows / records_read if records_read else 0.0
    return (f"{rejected.num_rows:,} of {records_read:,} lines rejected ({share:.1%} > quality.max_rejected_ratio {limit * 100:g}%): "
            f"{named}; first rejected lines: {quoted}")


def walk_reference(cfg: Config, kg: dict[str, pa.Table] | None = None) -> WalkReference:
    """The KG's entities, hubs and relations: from `kg` (edges: src, rel, dst; entities: id;
    relations: id, label), the ingested tables a caller has read already, else read here."""
    from kgwalk.storage import read_table

    if kg is None:
        kg = {"edges": read_table(cfg.table("edges"), ["src", "rel", "dst"], what="ingest"),
              "entities": read_table(cfg.table("entities"), ["id"], what="ingest"),
              "relations": read_table(cfg.table("relations"), ["id", "label"], what="ingest")}  # labels name explicit inverses
    edges, entities, relations = kg["edges"], kg["entities"], kg["relations"]
    return WalkReference.from_tables(edges, entities, relations, cfg.walks.direction, cfg.walks.hub_degree)


@dataclass
class WalksGate:
    """The walks' gate for Spark writers (`kgwalk.spark.RowGate`): each task summarizes the walks
    it makes against the broadcast reference; the driver validates the merged summary."""

    cfg: Config
    reference: Any  # a Spark broadcast of WalkReference

    def summarize(self, batch: pa.RecordBatch) -> pa.Table:
        return summarize(walk_checks(batch, self.reference.value), "walk_id")

    def check(self, summary: pa.Table | None) -> list[GateResult]:
        from kgwalk.quality.suites import walks_suite

        if summary is None:
            summary = summarize(WALK_CHECKS_SCHEMA.empty_table(), "walk_id")
        return _run(self.cfg, [("walks", summary, walks_suite(self.cfg), "walk_id", True)])


def walks_gate(cfg: Config, spark) -> WalksGate:
    return WalksGate(cfg, spark.sparkContext.broadcast(walk_reference(cfg)))


def gate_walks(cfg: Config, walks: pa.Table, *, table_rows: int | None = None, kg: dict[str, pa.Table] | None = None) -> list[GateResult]:
    """Validate walks held as Arrow. A refresh passes the walks it recomputed, as `table_rows` the
    rows of the whole table it is about to write, which the row-count expectation sees, and as
    `kg` the KG tables it has read (`walk_reference`). The walks it keeps are rows of
    the previous version, which passed this gate, and consult no node, hub or relation the change
    touched (that is what makes their roots unaffected: kgwalk.walks.affected), so their checks
    cannot have changed; checking all 7M walks of the 1M-edge KG again took 5 s of a 0.1%
    refresh's 40."""
    from kgwalk.quality.suites import walks_suite

    summary = summarize(walk_checks(walks, walk_reference(cfg, kg)), "walk_id")
    return _run(cfg, [("walks", summary, walks_suite(cfg), "walk_id", True)], None if table_rows is None else {"walks": table_rows})


def gate_texts(cfg: Config, summaries: list[pa.Table]) -> list[GateResult]:
    """Validate the summaries (`summarize(text_checks(batch), "walk_id")`) of every sentence a
    stage is about to commit."""
    from kgwalk.quality.suites import texts_suite

    summary = merge_summaries(summaries) if summaries else summarize(text_checks(_EMPTY_TEXTS), "walk_id")
    return _run(cfg, [("texts", summary, texts_suite(cfg), "walk_id", True)])
