"""Cluster settings: Spark's Delta settings, the Ray runtime_env shipped to workers, conf/cluster.yaml."""

from pathlib import Path

import pytest

from kgwalk.config import load_config
from kgwalk.errors import KgwalkError


def test_spark_settings_drop_empty_values_and_complete_delta():
    from kgwalk.config import SparkConf
    from kgwalk.spark import spark_settings

    plain = spark_settings(SparkConf(settings={"spark.jars.packages": "", "spark.executor.memory": "2g"}))
    assert plain == {"spark.executor.memory": "2g"}
    delta = spark_settings(SparkConf(settings={"spark.jars.packages": "io.delta:delta-spark_2.13:4.4.1"}))
    assert delta["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    assert delta["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")


def test_cluster_runtime_env_ships_kgwalk_and_keeps_conf_additions():
    from kgwalk.config import RayConf
    from kgwalk.ray_runtime import cluster_runtime_env

    env = cluster_runtime_env(RayConf(runtime_env={"env_vars": {"A": 1}, "py_modules": ["/x/mod"], "pip": ["tqdm"]}))
    assert Path(env["py_modules"][0]) == Path(__file__).resolve().parent.parent / "kgwalk"
    assert env["py_modules"][1:] == ["/x/mod"] and env["pip"] == ["tqdm"]
    assert env["env_vars"] == {"HF_HUB_OFFLINE": "1", "A": "1"}


def test_conf_cluster_yaml_loads_with_only_its_required_variable(monkeypatch):
    for var in ("SPARK_MASTER", "RAY_ADDRESS", "QDRANT_URL", "KGWALK_SPARK_PACKAGES", "KGWALK_EMBED_DEVICE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("KGWALK_WAREHOUSE", "/shared/kgwalk")
    cfg = load_config(Path(__file__).resolve().parent.parent / "conf" / "cluster.yaml")
    assert cfg.warehouse == "/shared/kgwalk" and cfg.index.backend == "server" and cfg.ray.address is None
    assert "delta-spark" in cfg.spark.settings["spark.jars.packages"]
    assert cfg.verbalize.phrases["directed_by"] == ["was directed by", "directed"]  # from local.yaml


def test_a_ray_client_address_is_refused_before_connecting(monkeypatch):
    """Ray Data cannot run through Ray Client (ray-project/ray#48682): say so, and what to do."""
    from kgwalk.config import RayConf
    from kgwalk.ray_runtime import init_ray

    monkeypatch.setenv("RAY_ADDRESS", "ray://127.0.0.1:1")
    with pytest.raises(KgwalkError, match=r"'ray://127.0.0.1:1' is a Ray Client address.*ray job submit"):
        init_ray(RayConf())
