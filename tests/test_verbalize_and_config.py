"""Template phrasing (inverse relations, fallbacks) and config loading errors."""

from pathlib import Path

import pyarrow as pa
import pytest

from kgwalk.config import VerbalizeConf, load_config
from kgwalk.errors import KgwalkError
from kgwalk.verbalize import TemplateVerbalizer, make_verbalizer
from kgwalk.verbalize.template import fallback_phrases


def test_phrase_map_forward_and_inverse():
    v = TemplateVerbalizer({"directed_by": ["was directed by", "directed"]})
    assert v.sentence(["Kismet", "William Dieterle"], ["directed_by"], [False]) == "Kismet was directed by William Dieterle."
    assert v.sentence(["William Dieterle", "Kismet"], ["directed_by"], [True]) == "William Dieterle directed Kismet."


def test_multi_step_sentence_is_one_sentence():
    v = TemplateVerbalizer({"directed_by": ["was directed by", "directed"]})
    text = v.sentence(["Kismet", "William Dieterle", "Juarez", "Drama"], ["directed_by", "directed_by", "has_genre"], [False, True, False])
    assert text == "Kismet was directed by William Dieterle, which directed Juarez, which has genre Drama."


@pytest.mark.parametrize(
    "relation,forward,inverse",
    [
        ("directed_by", "was directed by", "directed"),
        ("release_year", "has release year", "is the release year of"),
        ("has_genre", "has genre", "is the genre of"),
        ("in_language", "is in language", "is the language of"),
        ("capitalOf", "is the capital of", "has capital"),
    ],
)
def test_fallback_phrases(relation, forward, inverse):
    assert fallback_phrases(relation) == (forward, inverse)


def test_verbalize_arrow_batch():
    walks = pa.table(
        {"node_labels": [["A", "B"], ["B", "A"]], "rel_labels": [["written_by"], ["written_by"]], "inverse": [[False], [True]]}
    )
    sentences, source = make_verbalizer(VerbalizeConf()).verbalize(walks)
    assert sentences.to_pylist() == ["A was written by B.", "B wrote A."]
    assert source.to_pylist() == ["template", "template"]
    with pytest.raises(KgwalkError, match="unknown verbalizer"):  # refused as the config loads
        make_verbalizer(load_config(None, ["verbalize.verbalizer=gpt"]).verbalize)


def test_config_defaults_overrides_and_errors(tmp_path):
    cfg = load_config(None, ["walks.depth=2", "walks.kinds=[bfs, random]"], name="x")
    assert (cfg.walks.depth, cfg.walks.kinds, cfg.name) == (2, ["bfs", "random"], "x")
    assert cfg.walks.direction == "both" and cfg.verbalize.phrases["directed_by"] == ["was directed by", "directed"]
    dotted = load_config(None, ["spark.settings.spark.driver.memory=8g", "verbalize.phrases.wrote=[wrote, was written by]"])
    assert dotted.spark.settings["spark.driver.memory"] == "8g"  # a dotted key inside a mapping stays one key
    assert dotted.verbalize.phrases["wrote"] == ["wrote", "was written by"]
    with pytest.raises(KgwalkError, match="unknown key 'walks.dept'"):
        load_config(None, ["walks.dept=2"])
    with pytest.raises(KgwalkError, match="'walks.depth' must be int"):
        load_config(None, ["walks.depth=deep"])
    with pytest.raises(KgwalkError, match="file not found"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("walks: [1, 2")
    with pytest.raises(KgwalkError, match="not valid YAML"):
        load_config(bad)


def test_conf_local_yaml_and_code_defaults_agree():
    """Without conf/local.yaml (an installed wheel) the code's defaults must give the same build,
    except for what is specific to the demo: its name, its KG and the MetaQA phrase map."""
    from dataclasses import asdict

    from kgwalk.config import Config
    from kgwalk.walks import WalkSpec

    from_yaml, from_code = asdict(load_config()), asdict(Config())
    for key in ("name", "kg"):
        from_yaml.pop(key), from_code.pop(key)
    from_yaml["verbalize"].pop("phrases"), from_code["verbalize"].pop("phrases")
    from_yaml["spark"].pop("settings"), from_code["spark"].pop("settings")
    assert from_yaml == from_code
    assert WalkSpec.from_conf(load_config().walks) == WalkSpec()


def test_conf_files_stack_on_a_base_and_read_the_environment(tmp_path, monkeypatch):
    (tmp_path / "base.yaml").write_text("name: basekg\nwalks: {depth: 2, seed: 7}\nquery: {k_nodes: 5}\n")
    (tmp_path / "site.yaml").write_text(
        "base: base.yaml\n"
        "warehouse: ${WH}\n"
        "walks: {depth: '${DEPTH:-4}'}\n"
        "spark: {master: 'spark://${HOST}:7077', settings: {spark.jars.packages: '${PKGS-io.delta:x:1}'}}\n"
        "index: {url: '${QURL-}'}\n"
    )
    monkeypatch.setenv("WH", "rel/wh")
    monkeypatch.setenv("HOST", "head")
    monkeypatch.delenv("DEPTH", raising=False)
    monkeypatch.delenv("QURL", raising=False)
    monkeypatch.setenv("PKGS", "")
    cfg = load_config(tmp_path / "site.yaml")
    assert cfg.name == "basekg" and cfg.walks.seed == 7 and cfg.query.k_nodes == 5  # from the base
    assert cfg.walks.depth == 4 and isinstance(cfg.walks.depth, int)  # default, typed like YAML
    assert cfg.spark.master == "spark://head:7077"
    assert cfg.spark.settings["spark.jars.packages"] == ""  # ${VAR-default}: set but empty stays empty
    assert cfg.index.url == ""
    assert Path(cfg.warehouse).is_absolute() and cfg.warehouse.endswith("rel/wh")  # executors have other cwds
    monkeypatch.setenv("DEPTH", "2")
    assert load_config(tmp_path / "site.yaml").walks.depth == 2

    monkeypatch.delenv("WH")
    with pytest.raises(KgwalkError, match=r"'warehouse' needs the environment variable WH"):
        load_config(tmp_path / "site.yaml")
    assert load_config(tmp_path / "site.yaml", warehouse="/x").warehouse == "/x"  # --warehouse instead
    (tmp_path / "loop.yaml").write_text("base: loop.yaml\n")
    with pytest.raises(KgwalkError, match="its own base"):
        load_config(tmp_path / "loop.yaml")


def test_warehouse_uris(tmp_path):
    assert load_config(None, warehouse=f"file://{tmp_path}/wh").warehouse == f"{tmp_path}/wh"
    with pytest.raises(KgwalkError, match="object-store URIs are not supported yet"):
        load_config(None, warehouse="s3://bucket/kgwalk")


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
