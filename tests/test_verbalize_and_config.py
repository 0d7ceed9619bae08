"""Template phrasing (inverse relations, fallbacks) and config loading errors."""

import pyarrow as pa
import pytest

from kgwalk.config import load_config
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
        ("capitalOf", "has capitalOf", "is the capitalOf of"),
    ],
)
def test_fallback_phrases(relation, forward, inverse):
    assert fallback_phrases(relation) == (forward, inverse)


def test_verbalize_arrow_batch():
    walks = pa.table(
        {"node_labels": [["A", "B"], ["B", "A"]], "rel_labels": [["written_by"], ["written_by"]], "inverse": [[False], [True]]}
    )
    assert make_verbalizer("template").verbalize(walks).to_pylist() == ["A was written by B.", "B written A."]
    with pytest.raises(KgwalkError, match="unknown verbalizer"):
        make_verbalizer("gpt")


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
