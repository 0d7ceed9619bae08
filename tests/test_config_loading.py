"""Loading the config: defaults, overrides, stacked files, the environment, errors that name the key."""

from pathlib import Path

import pytest

from kgwalk.config import load_config
from kgwalk.errors import KgwalkError


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


def _values(cfg) -> dict:
    """The config as data, its warehouse (absolute, so the test's folder) cut to its last part."""
    from dataclasses import asdict

    data = asdict(cfg)
    data["warehouse"] = "<abs>/" + Path(data["warehouse"]).name
    return data


def test_the_loaded_values_match_their_snapshot():
    """Every value conf/local.yaml and the code's defaults give, as the code base had them before the
    settings' descriptions moved into the code (tests/data/config_values.json): a rewrite of the
    descriptions, of local.yaml's comments or of the field declarations changes no value, nor its
    type (json tells 0 from 0.0)."""
    import json

    from kgwalk.config import Config

    snapshot = json.loads((Path(__file__).parent / "data" / "config_values.json").read_text())
    got = {"local_yaml": _values(load_config()), "code": _values(Config())}
    assert json.dumps(got, sort_keys=True) == json.dumps(snapshot, sort_keys=True)
