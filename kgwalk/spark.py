"""Thin Spark adapter: session, and Delta I/O that uses delta-spark when a cluster provides it
and delta-rs otherwise (these machines cannot fetch delta-spark's jars)."""

from __future__ import annotations

import os
import shutil
import sys
import uuid
from pathlib import Path

import pyarrow.dataset as pads

from kgwalk.config import SparkConf
from kgwalk.storage import current_files, open_table, write_table


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
    for key, value in conf.settings.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def has_delta_spark(spark) -> bool:
    """True when delta-spark's JVM classes are on the classpath (e.g. via spark.jars.packages)."""
    try:
        spark.sparkContext._jvm.java.lang.Class.forName("io.delta.tables.DeltaTable")
        return True
    except Exception:
        return False


def read_delta(spark, path: str):
    if has_delta_spark(spark):
        return spark.read.format("delta").load(path)
    open_table(path)  # a clear error if the table is missing
    return spark.read.parquet(*current_files(path))


def write_delta(df, path: str, schema) -> None:
    """Overwrite a Delta table with a DataFrame.

    Without delta-spark, executors write Parquet to a staging folder beside the table and the
    driver streams it into a Delta commit batch by batch (bounded memory), then drops the staging.
    """
    spark = df.sparkSession
    if has_delta_spark(spark):
        df.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(path)
        return
    staging = f"{path.rstrip('/')}._staging-{uuid.uuid4().hex[:8]}"
    try:
        df.write.mode("overwrite").parquet(staging)
        dataset = pads.dataset(staging, format="parquet", schema=schema)
        write_table(path, dataset.scanner(batch_size=65536).to_reader())
    finally:
        if Path(staging).exists():
            shutil.rmtree(staging)
