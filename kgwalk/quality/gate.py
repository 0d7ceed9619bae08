"""Quality gates: validate a stage's check frames with Great Expectations before the stage commits.

A frame is either every check row (an Arrow table, validated on pandas) or a summary of them
(`checks.summarize`: one row per distinct combination of check values with its row count). A
summary is validated by GX row by row; each row-wise verdict is then weighted by the row count,
so counts, percentages, `mostly` and the row-count expectation come out as for every row.
Every gate writes `<kg>/_quality/<name>.json` (GX's validation result)
and `<name>.html` (GX's data-docs page for it); a failed gate raises `QualityGateFailed`, one line
naming the rules broken in kgwalk's words, before anything is committed.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from kgwalk.errors import QualityGateFailed

# GX reports usage to its vendor by default; a corpus builder must not phone home
os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")

RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": 3}


@dataclass
class GateResult:
    name: str
    success: bool
    failures: list[str]
    rows: int
    seconds: float
    report: Path


# "context", an engine's data source ("pandas", "spark"), and (engine, frame name): its batch definition
_gx: dict[str | tuple[str, str], Any] = {}


def context():
    """One ephemeral GX context per process (suites and batches need one; set up once)."""
    if "context" not in _gx:
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        _gx["context"] = gx.get_context(mode="ephemeral")
        _gx["context"].variables.progress_bars = ProgressBarsConfig(globally=False)
    return _gx["context"]


def _batch(name: str, frame: Any):
    """A GX batch of `frame` (pandas from Arrow, or a Spark DataFrame as it is)."""
    spark = hasattr(frame, "sparkSession")
    engine = "spark" if spark else "pandas"
    key = (engine, name)
    if key not in _gx:
        sources = context().data_sources
        if engine not in _gx:
            _gx[engine] = sources.add_spark(engine) if spark else sources.add_pandas(engine)
        _gx[key] = _gx[engine].add_dataframe_asset(name).add_batch_definition_whole_dataframe(name)
    return _gx[key].get_batch(batch_parameters={"dataframe": frame if spark else frame.to_pandas()})


def _describe(result, id_column: str | None) -> str:
    """One failed expectation in kgwalk's words: the rule (its `meta.why`), how many rows break
    it, and example ids (or values)."""
    config, got = result.expectation_config, result.result
    column = config.kwargs.get("column") or ",".join(config.kwargs.get("column_list") or []) or "table"
    text = (config.meta or {}).get("why") or f"{column} {config.type}"
    if "unexpected_count" in got:
        text += f": {got['unexpected_count']:,} of {got['element_count']:,} rows fail"
        examples = [row.get(id_column) for row in got.get("partial_unexpected_index_list") or [] if isinstance(row, dict)]
        values = got.get("partial_unexpected_list") or []
        if id_column and any(e is not None for e in examples):
            text += f" (e.g. {id_column} " + ", ".join(str(e) for e in examples) + ")"
        elif values:
            text += f" (e.g. {column} " + ", ".join(repr(v)[:60] for v in values) + ")"
    elif "observed_value" in got:  # the row-count expectation, the only one that observes a value
        text += f": {got['observed_value']} rows"
    return text


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def _weigh(result, summary: pa.Table, id_column: str, table_rows: int | None = None) -> None:
    """Turn GX's verdicts on a summary's rows into verdicts on the rows it counts (in place)."""
    from kgwalk.quality.checks import FIRST, LAST, ROWS

    rows = summary.column(ROWS).to_numpy()
    first, last = summary.column(FIRST).to_pylist(), summary.column(LAST).to_pylist()
    total = int(rows.sum())
    for r in result.results:
        got, kwargs = r.result, r.expectation_config.kwargs
        if "unexpected_index_list" in got:
            bad = sorted(set(got.pop("unexpected_index_list")))
            got.pop("unexpected_list", None)
            unexpected = int(rows[bad].sum())
            share = unexpected / total if total else 0.0
            got.update(
                element_count=total, unexpected_count=unexpected, unexpected_percent=100 * share,
                unexpected_percent_total=100 * share, unexpected_percent_nonmissing=100 * share,
                partial_unexpected_index_list=[{id_column: e} for i in bad[:2] for e in dict.fromkeys((first[i], last[i]))][:3],
            )
            got.pop("partial_unexpected_counts", None)  # counted over summary rows: meaningless here
            r.success = share <= 1 - (kwargs.get("mostly") or 1.0)
        elif r.expectation_config.type == "expect_table_row_count_to_be_between":
            count = total if table_rows is None else table_rows
            got["observed_value"] = count
            low, high = kwargs.get("min_value"), kwargs.get("max_value")
            r.success = (low is None or count >= low) and (high is None or count <= high)
    result.success = all(r.success for r in result.results)
    result.statistics["successful_expectations"] = sum(r.success for r in result.results)
    result.statistics["unsuccessful_expectations"] = sum(not r.success for r in result.results)
    result.statistics["success_percent"] = 100 * result.statistics["successful_expectations"] / max(len(result.results), 1)


def validate(name: str, frame: pa.Table | Any, suite, report_dir: Path, id_column: str | None = None, summary: bool = False,
             *, table_rows: int | None = None) -> GateResult:
    """Validate one check frame (every row, or with `summary` a `checks.summarize` table) against
    its suite and write its report; does not raise. `table_rows` (a summary only): the rows of
    the table the summarized rows belong to, for the row-count expectation, when they are part
    of it."""
    from great_expectations.render.renderer import ValidationResultsPageRenderer
    from great_expectations.render.view import DefaultJinjaPageView

    from kgwalk.quality.checks import FIRST, LAST, ROWS

    start = time.perf_counter()
    if summary:
        if id_column is None:  # the summary's FIRST and LAST columns hold ids of that column
            raise ValueError(f"quality gate {name}: a summary frame needs its id_column")
        checked = frame.drop_columns([ROWS, FIRST, LAST])
        result = _batch(name, checked).validate(suite, result_format={"result_format": "COMPLETE"})
        _weigh(result, frame, id_column, table_rows)
    else:
        result_format = dict(RESULT_FORMAT, **({"unexpected_index_column_names": [id_column]} if id_column else {}))
        result = _batch(name, frame).validate(suite, result_format=result_format)
    seconds = time.perf_counter() - start
    failures = [_describe(r, id_column) for r in result.results if not r.success]
    rows = next((r.result["element_count"] for r in result.results if "element_count" in r.result), 0)
    report = report_dir / f"{name}.json"
    _write(report, json.dumps(result.to_json_dict() | {"kgwalk": {"seconds": seconds}}, indent=1, default=str))
    _write(report.with_suffix(".html"), DefaultJinjaPageView().render(ValidationResultsPageRenderer().render(result)))
    return GateResult(name, bool(result.success), failures, rows, seconds, report)


def enforce(results: list[GateResult]) -> None:
    """Raise one line naming every failed expectation of every failed gate, and the reports."""
    failed = [r for r in results if not r.success]
    if failed:
        raise QualityGateFailed(
            "quality gate failed, nothing committed: "
            + "; ".join(f"{r.name}: " + "; ".join(r.failures) for r in failed)
            + " (report: " + ", ".join(str(r.report.with_suffix(".html")) for r in failed) + ")"
        )
