"""One home per setting: each field of kgwalk/config.py carries its description, and docs/config.md and
conf/local.yaml's comments are generated from it (kgwalk/config_docs.py), so neither can drift."""

import dataclasses
import re

import yaml

from kgwalk import config_docs
from kgwalk.config import DEFAULT_CONF, load_config


def test_the_generated_files_are_what_the_code_says():
    for path, text in config_docs.generated().items():
        assert path.read_text() == text, f"{path} is stale: run python -m kgwalk.config_docs"


def test_every_setting_and_section_is_described():
    described = list(config_docs.sections())
    assert [s.key for s in described][:3] == ["", "kg", "ingest"] and "query.synthetic" in {s.key for s in described}
    for section in described:
        assert section.doc and not re.match(r"\w+\(", section.doc), section.key  # a docstring, not the one dataclass makes up
        for setting in section.settings:
            assert setting.doc.strip(), f"{setting.key} has no description"
    keys = {s.key for section in described for s in section.settings}
    assert {"query.k_nodes", "query.synthetic.focus_slack", "walks.random.length", "answer.llm.max_tokens", "ray.runtime_env"} <= keys


def test_each_description_is_written_once_beside_its_field():
    """No comment restates a setting above its field any more: the metadata is the only home."""
    source = (DEFAULT_CONF.parent.parent / "kgwalk" / "config.py").read_text()
    body = source[source.index("class KgConf"):source.index("# One path segment")]
    assert not re.findall(r"^[ \t]+#", body, re.M)


def test_the_page_and_the_conf_show_ranges_and_defaults():
    page = config_docs.CONFIG_PAGE.read_text()
    assert "| `k_nodes` | `3` | an integer >= 1 |" in page
    assert "| `content_mix` | `0.5` | a number >= 0, <= 1 |" in page
    assert "| `node_search` | `hybrid` | one of: dense, hybrid |" in page
    assert "| `max_tokens` | `128` |" in page  # answer.llm is built with max_tokens=128
    assert "| `model` | `auto` |" in page  # as declared, not as EmbedConf resolves it on a CPU
    assert "[synthetic-prior.md](synthetic-prior.md)" in page  # docs/ paths become links, which the strict build checks
    local = DEFAULT_CONF.read_text()
    assert ("  # Walks fetched per node by cosine before reranking; a topic the prior reranks also takes the best walk\n"
            "  # of every other relation path it has (docs/query-and-answer.md).\n  candidates: 50\n") in local  # a long description wrapped (WIDTH)
    # every key of the code is in the conf, with the value the code would give where the demo sets none
    assert dataclasses.asdict(load_config()).keys() == yaml.safe_load(local).keys()


def test_check_names_a_stale_file(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "config.md"
    stale.write_text(config_docs.config_page().replace("Walks fetched per node", "Walks per node"))
    monkeypatch.setattr(config_docs, "CONFIG_PAGE", stale)
    monkeypatch.setattr(config_docs, "ROOT", tmp_path)
    assert config_docs.main(["--check"]) == 1
    assert "config.md is stale: run python -m kgwalk.config_docs" in capsys.readouterr().err
    assert config_docs.main([]) == 0 and stale.read_text() == config_docs.config_page()
    assert config_docs.main(["--check"]) == 0


def test_a_key_the_code_does_not_know_stops_the_generator():
    try:
        config_docs.local_yaml("query:\n  k_nodez: 3\n")
    except SystemExit as e:
        assert "k_nodez" in str(e)
    else:
        raise AssertionError("an unknown key was written out")

