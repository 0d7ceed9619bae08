"""Thin Spark adapter: session, and Delta I/O that uses delta-spark when a cluster provides it
and delta-rs otherwise (these machines cannot fetch delta-spark's jars)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.pandas.types import from_arrow_schema

from kgwalk.config import SparkConf
from kgwalk.log import quiet_engines, terminal
from kgwalk.quality.checks import merge_summaries
from kgwalk.storage import commit_files, current_files, open_table


def get_spark(conf: SparkConf):
    """The active session if there is one (spark-submit), else a new one from conf."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # Executors must run the same interpreter (and so the same packages) as the driver.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(conf.app_name)
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # under spark-submit, --master decides
        builder = builder.master(conf.master)
    builder = builder.config("spark.sql.execution.arrow.pyspark.enabled", "true")
    for key, value in spark_settings(conf).items():
        builder = builder.config(key, value)
    quiet_engines()  # the JVM's log lines go to the command's log file (the CLI without --verbose)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


DELTA_SQL = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


def spark_settings(conf: SparkConf) -> dict[str, str]:
    """conf's settings, less empty values (an empty ${VAR-} means: Spark's default), plus Delta's
    SQL extension and catalog when delta-spark is among the packages (it needs both)."""
    settings = {k: str(v) for k, v in conf.settings.items() if str(v) != ""}
    if "delta-spark" in settings.get("spark.jars.packages", ""):
        settings = DELTA_SQL | settings
    return settings


def has_delta_spark(spark) -> bool:
    """True when delta-spark's JVM classes are on the classpath (e.g. via spark.jars.packages)."""
    try:
        spark.sparkContext._jvm.java.lang.Class.forName("io.delta.tables.DeltaTable")
        return True
    except Exception:
        return False


@contextmanager
def task_progress(spark, desc: str) -> Iterator[None]:
    """A progress bar, with its ETA, of the Spark tasks the block's jobs finish: polled from the
    driver's status tracker once a second (Spark's own console bar is off, and goes to the engine
    log with the rest of its output)."""
    from tqdm import tqdm

    tracker = spark.sparkContext.statusTracker()
    stages: dict[int, tuple[int, int]] = {}  # stage id: (tasks done, tasks), kept once it ends
    stop = threading.Event()
    bar = tqdm(desc=desc, total=0, unit=" tasks", file=terminal())

    def poll() -> None:
        while not stop.wait(1.0):
            for sid in tracker.getActiveStageIds():
                info = tracker.getStageInfo(sid)
                if info is not None:
                    stages[sid] = (info.numCompletedTasks, info.numTasks)
            bar.total = sum(t for _, t in stages.values())
            bar.n = sum(d for d, _ in stages.values())
            bar.refresh()

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield
        bar.n = bar.total  # the last stages ended between two polls
    finally:
        stop.set()
        watcher.join()
        bar.close()


def read_delta(spark, path: str):
    if has_delta_spark(spark):
        return spark.read.format("delta").load(path)
    open_table(path)  # a clear error if the table is missing
    return spark.read.parquet(*current_files(path))


# Rows of one Parquet row group in the files the walk tasks write: few large row groups compress well
# and read fast; a task holds at most one group of Arrow batches before writing it.
ROW_GROUP_ROWS = 1 << 20


class RowGate(Protocol):
    """A quality gate over rows made by Spark tasks: `summarize` runs in the tasks on each Arrow
    batch (it must pickle), `check` on the driver with the merged summary, raising to stop the commit."""

    def summarize(self, batch: pa.RecordBatch) -> pa.Table: ...

    def check(self, summary: pa.Table | None) -> object: ...  # None: no rows at all


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _check(gate: RowGate, summaries: list[bytes]) -> None:
    parts = [pa.ipc.open_stream(s).read_all() for s in summaries if s]
    gate.check(merge_summaries(parts) if parts else None)


def _check_frame(gate: RowGate, df) -> None:
    """A gate over a DataFrame's rows: summarized in its tasks, checked on the driver."""

    def summarize(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = [gate.summarize(b) for b in batches if b.num_rows]
        if parts:
            yield pa.RecordBatch.from_pydict({"summary": [_ipc(merge_summaries(parts))]})

    _check(gate, [row.summary for row in df.mapInArrow(summarize, "summary binary").collect()])


def write_delta(df, path: str, schema: pa.Schema, metadata: dict[str, Any] | None = None, gate: RowGate | None = None) -> None:
    """Overwrite a Delta table with a DataFrame; `gate` sees the rows before the commit.

    Without delta-spark, executors write Parquet into a fresh folder inside the table and the
    driver commits those very files through delta-rs: no copy, and until the commit readers see
    the previous version. With delta-spark the write is the commit, so the rows are cached and
    checked before it.
    """
    spark = df.sparkSession
    if has_delta_spark(spark):
        if gate is not None:
            df = df.persist()
            _check_frame(gate, df)
        writer = df.write.format("delta").mode("overwrite").option("overwriteSchema", "true")
        if metadata:
            writer = writer.option("userMetadata", json.dumps(metadata, sort_keys=True))
        writer.save(path)
        df.unpersist()
        return
    with _new_files(path) as folder:
        df.write.mode("errorifexists").parquet(f"{path.rstrip('/')}/{folder}")
        files = [f"{folder}/{f.name}" for f in sorted((Path(path) / folder).glob("*.parquet"))]
        if gate is not None:
            _check_frame(gate, spark.read.parquet(*(f"{path.rstrip('/')}/{f}" for f in files)))
        commit_files(path, files, schema, metadata)


def write_delta_from_arrow(source, produce: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
                           path: str, schema: pa.Schema, metadata: dict[str, Any] | None = None, gate: RowGate | None = None) -> None:
    """Overwrite a Delta table with what `produce` makes of each partition of `source`; `gate`
    summarizes each batch in the task that makes it and checks the whole before the commit.

    Without delta-spark each task writes its Arrow output straight to a Parquet file with pyarrow
    and returns only the file's name: the output never crosses into the JVM (converting list
    columns to Spark rows cost more than computing the walks). Only files of successful task
    attempts are committed, so retried or speculative tasks cannot duplicate rows.
    """
    spark = source.sparkSession
    if has_delta_spark(spark):
        write_delta(source.mapInArrow(produce, from_arrow_schema(schema)), path, schema, metadata, gate)
        return
    with _new_files(path) as folder:
        target = f"{path.rstrip('/')}/{folder}"

        def write(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            name = f"part-{uuid.uuid4().hex}.parquet"
            writer: pq.ParquetWriter | None = None
            pending: list[pa.RecordBatch] = []
            summaries: list[pa.Table] = []

            def flush() -> None:
                nonlocal writer
                if writer is None:  # an empty partition leaves no file
                    Path(target).mkdir(parents=True, exist_ok=True)
                    writer = pq.ParquetWriter(f"{target}/{name}", schema, compression="zstd")
                writer.write_table(pa.Table.from_batches(pending, schema))
                pending.clear()

            for batch in produce(batches):
                pending.append(batch)
                if gate is not None and batch.num_rows:
                    summaries.append(gate.summarize(batch))
                if sum(b.num_rows for b in pending) >= ROW_GROUP_ROWS:  # few large row groups compress well
                    flush()
            if pending:
                flush()
            if writer is not None:
                writer.close()
                summary = _ipc(merge_summaries(summaries)) if summaries else b""
                yield pa.RecordBatch.from_pydict({"file": [f"{folder}/{name}"], "summary": [summary]})

        written = source.mapInArrow(write, "file string, summary binary").collect()
        if gate is not None:
            _check(gate, [row.summary for row in written])
        commit_files(path, [row.file for row in written], schema, metadata)


@contextmanager
def _new_files(path: str) -> Iterator[str]:
    """A fresh folder name inside the table for one write; removed again unless committed."""
    folder = f"spark-{uuid.uuid4().hex[:12]}"
    try:
        yield folder
    except BaseException:
        shutil.rmtree(Path(path) / folder, ignore_errors=True)
        raise
