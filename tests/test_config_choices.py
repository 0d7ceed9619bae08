"""Settings with a closed set of values are `Literal` types in kgwalk/config.py, checked once where
the config is loaded: from YAML, `--set` overrides and keyword values alike."""

import dataclasses
import os
import subprocess
import sys
import types
import typing
from collections.abc import Iterator
from typing import Any, Literal

import pytest

from kgwalk.config import AtLeast, Config, load_config
from kgwalk.errors import KgwalkError

BAD = "bogus"


def choice_fields(cls: Any = Config, prefix: str = "") -> Iterator[tuple[str, tuple[str, ...], bool]]:
    """(dotted key, allowed values, whether the setting is a list of them) for every Literal
    setting, found from the type hints so that a new one is tested without being listed here."""
    for name, tp in typing.get_type_hints(cls).items():
        if dataclasses.is_dataclass(tp):
            yield from choice_fields(tp, f"{prefix}{name}.")
            continue
        origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin in (typing.Union, types.UnionType):  # X | None
            (tp,) = [a for a in args if a is not type(None)]
            origin, args = typing.get_origin(tp), typing.get_args(tp)
        in_list = origin is list
        if in_list:
            (tp,) = args
            origin, args = typing.get_origin(tp), typing.get_args(tp)
        if origin is Literal:
            yield f"{prefix}{name}", args, in_list


CHOICES = list(choice_fields())


def _get(cfg: Config, key: str) -> Any:
    value: Any = cfg
    for part in key.split("."):
        value = getattr(value, part)
    return value


def _assert_names_the_choice(message: str, key: str, allowed: tuple[str, ...]) -> None:
    assert "\n" not in message
    assert f"'{key}'" in message and repr(BAD) in message and ", ".join(allowed) in message, message


def test_the_choice_settings_are_literals():
    keys = {key for key, _, _ in CHOICES}
    assert {"kg.format", "walks.kinds", "walks.direction", "walks.bfs_mode", "walks.engine", "verbalize.verbalizer",
            "verbalize.llm.dtype", "answer.llm.dtype", "answer.backend", "embed.precision", "index.backend",
            "index.vector_datatype", "query.node_search", "query.rerank", "query.encoder", "query.mode"} <= keys
    # open sets stay strings: a model name or folder, a device, a host
    assert not keys & {"embed.model", "embed.device", "verbalize.llm.device", "serve.host", "spark.master"}


@pytest.mark.parametrize(("key", "allowed", "in_list"), CHOICES, ids=[key for key, _, _ in CHOICES])
def test_a_choice_outside_its_set_is_refused_at_load(key, allowed, in_list):
    value: Any = [allowed[0], BAD] if in_list else BAD
    override = f"{key}=[{allowed[0]}, {BAD}]" if in_list else f"{key}={BAD}"
    named = f"{key}[1]" if in_list else key
    for load in (lambda: load_config(None, [override]), lambda: load_config(None, **{key: value})):
        with pytest.raises(KgwalkError) as refused:
            load()
        _assert_names_the_choice(str(refused.value), named, allowed)
    for good in allowed:
        cfg = load_config(None, [f"{key}=[{good}]" if in_list else f"{key}={good}"])
        assert _get(cfg, key) == ([good] if in_list else good)


def test_a_choice_in_a_yaml_file_is_checked_too(tmp_path):
    conf = tmp_path / "kg.yaml"
    conf.write_text(f"base: local.yaml\nquery:\n  node_search: {BAD}\n")
    (tmp_path / "local.yaml").write_text("walks:\n  engine: memory\n")
    with pytest.raises(KgwalkError) as refused:
        load_config(conf)
    _assert_names_the_choice(str(refused.value), "query.node_search", ("dense", "hybrid"))
    conf.write_text("base: local.yaml\nanswer:\n  backend: null\n")
    cfg = load_config(conf)
    assert cfg.answer.backend is None and cfg.walks.engine == "memory"


def test_a_bad_value_of_an_optional_setting_is_one_error():
    # a value that fits no member of `int | None` is reported for the key, never a TypeError
    with pytest.raises(KgwalkError, match="'walks.hub_degree' must be int, got 'abc'"):
        load_config(None, ["walks.hub_degree=abc"])
    with pytest.raises(KgwalkError, match=r"'answer.backend': unknown backend 'gpt' \(one of: vllm, transformers, openai or null\)"):
        load_config(None, ["answer.backend=gpt"])


def test_the_cli_refuses_a_bad_choice_in_one_line(tmp_path):
    """Every choice setting through `--set`, and kg.format through its flag: exit 2, one line."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    runs = {key: ["status", "--warehouse", str(tmp_path), "--set", f"{key}=[{allowed[0]}, {BAD}]" if in_list else f"{key}={BAD}"]
            for key, allowed, in_list in CHOICES}
    runs["kg.format (--format)"] = ["ingest", "--warehouse", str(tmp_path), "--kg", str(tmp_path / "kg.txt"), "--format", BAD]
    procs = {key: subprocess.Popen([sys.executable, "-m", "kgwalk.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=env) for key, args in runs.items()}
    allowed_of = {key: (f"{key}[1]" if in_list else key, allowed) for key, allowed, in_list in CHOICES}
    allowed_of["kg.format (--format)"] = allowed_of["kg.format"]
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2 and out == "", (key, out, err)
        (line,) = err.splitlines()
        assert line.startswith("kgwalk: error: config: ")
        _assert_names_the_choice(line, *allowed_of[key])
    assert not list(tmp_path.iterdir())  # refused before anything was written


def bounded_fields(cls: Any = Config, prefix: str = "") -> Iterator[tuple[str, int]]:
    """(dotted key, least value) for every setting annotated with an AtLeast bound."""
    for name, tp in typing.get_type_hints(cls, include_extras=True).items():
        if dataclasses.is_dataclass(tp):
            yield from bounded_fields(tp, f"{prefix}{name}.")
            continue
        for member in typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,):
            for bound in getattr(member, "__metadata__", ()):
                if isinstance(bound, AtLeast):
                    yield f"{prefix}{name}", bound.least


BOUNDS = list(bounded_fields())


def test_counts_below_their_least_are_refused_at_load():
    assert {"query.k_nodes", "query.k_walks", "query.candidates", "query.walk_budget", "query.ego_chars"} <= {k for k, _ in BOUNDS}
    for key, least in BOUNDS:
        for load in (lambda: load_config(None, [f"{key}={least - 1}"]), lambda: load_config(None, **{key: least - 1})):
            with pytest.raises(KgwalkError) as refused:
                load()
            assert str(refused.value) == f"config: '{key}' must be >= {least}, got {least - 1}"
        assert _get(load_config(None, [f"{key}={least}"]), key) == least
