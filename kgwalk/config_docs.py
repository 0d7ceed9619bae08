"""docs/config.md and conf/local.yaml's comments, generated from the settings' own descriptions.

Each field of kgwalk/config.py carries its description (`setting(default, doc)`) and its range in
its type (a Literal's values, the Annotated bounds). This module writes them out twice: a reference
page, and conf/local.yaml with every key, its value kept from the file (or the code's default where
the file has none) and its description as the comment above it. tests/test_config_docs.py fails
when either file differs from what this writes, so they cannot drift from the code.

    python -m kgwalk.config_docs           # rewrite both
    python -m kgwalk.config_docs --check   # exit 1 naming the stale files
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import textwrap
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml

from kgwalk.config import DEFAULT_CONF, Above, AtLeast, AtMost, Config

ROOT = DEFAULT_CONF.parent.parent
CONFIG_PAGE = ROOT / "docs" / "config.md"
WIDTH = 110  # local.yaml's comment lines

LOCAL_HEADER = """\
# kgwalk's default config: the embedded single-machine setup (Spark local[*], delta-rs, local Ray,
# in-process Qdrant). Every key can be overridden on the command line: --set walks.depth=2.
# The comments are generated from kgwalk/config.py (python -m kgwalk.config_docs): edit the values
# here, the descriptions there. docs/config.md lists the same settings with their ranges.

"""

PAGE_HEADER = """\
# Settings

<!-- Generated from kgwalk/config.py by `python -m kgwalk.config_docs`; edit the descriptions there. -->

Every setting of kgwalk, by section. *default* is what a key no conf file sets takes;
`conf/local.yaml`, the conf the CLI reads unless `--conf` names another, lists every key and sets a
few to the demo's values (`name`, `kg.path`, `spark.settings`, `verbalize.phrases`). `--conf FILE`
reads another file (which may start from one with `base: local.yaml`), and
`--set section.key=value` overrides any key on the command line. A YAML value may read the
environment: `${VAR}`, `${VAR:-default}` (unset or empty), `${VAR-default}` (unset).

Values are checked as the config loads: an unknown key, a wrong type, a choice outside its set or
a number outside its range ends in one line naming the key (`kgwalk: error: config: ...`).
"""


@dataclass(frozen=True)
class Setting:
    key: str  # dotted: query.synthetic.focus
    hint: Any  # the annotation, bounds included
    default: Any
    doc: str


@dataclass(frozen=True)
class Section:
    key: str  # "" for the top level
    doc: str
    settings: list[Setting]


def _section_doc(cls: type) -> str:
    return " ".join(inspect.cleandoc(cls.__doc__ or "").split())


def _default(f: dataclasses.Field, made: Any) -> Any:
    """A field's default: its value in the section as the parent builds it (answer.llm is built with
    max_tokens=128), except in a class that rewrites values as it is made (embed.model auto becomes
    static, the warehouse an absolute path), where the declaration says what a user writes."""
    if not hasattr(type(made), "__post_init__"):
        return getattr(made, f.name)
    if f.default is not dataclasses.MISSING:
        return f.default
    factory = f.default_factory
    assert callable(factory), f"{f.name} has no default"
    return factory()


def sections(cls: type = Config, key: str = "", made: Any = None) -> Iterator[Section]:
    """Every section of the config, parents before their subsections, in declaration order."""
    made = cls() if made is None else made
    hints = typing.get_type_hints(cls, include_extras=True)
    own: list[Setting] = []
    nested: list[tuple[str, type, Any]] = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        dotted = f"{key}.{f.name}" if key else f.name
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            nested.append((dotted, hint, getattr(made, f.name)))
        else:
            own.append(Setting(dotted, hint, _default(f, made), f.metadata.get("doc", "")))
    yield Section(key, _section_doc(cls), own)
    for dotted, sub, sub_made in nested:
        yield from sections(sub, dotted, sub_made)


def _bounds(bounds: list[Any]) -> str:
    said = []
    for bound in bounds:
        if isinstance(bound, AtLeast):
            said.append(f">= {bound.least:g}")
        elif isinstance(bound, Above):
            said.append(f"> {bound.bound:g}")
        elif isinstance(bound, AtMost):
            said.append(f"<= {bound.most:g}")
    return ", ".join(said)


def value_range(hint: Any) -> str:
    """What a setting takes, in words: `int >= 1 or null`, `one of: dense, hybrid`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("null" if a is type(None) else value_range(a) for a in args)
    if origin is Annotated:
        inner, *bounds = args
        return f"{value_range(inner)} {_bounds(bounds)}"
    if origin is Literal:
        return "one of: " + ", ".join(map(str, args))
    if origin is list:
        return "a list of: " + ", ".join(typing.get_args(args[0])) if typing.get_origin(args[0]) is Literal else "a list of strings"
    if origin is dict:
        return "a mapping"
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(hint, str(hint))


def _flow(value: Any) -> str:
    """One YAML value on one line: 3, null, [bfs], 'local[*]'."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10**6, allow_unicode=True, sort_keys=False).strip()
    return text.removesuffix("\n...").strip()


def _shown(value: Any) -> str:
    return "`" + _flow(value) + "`"


def _cell(text: str) -> str:
    """Text in a Markdown table cell, a docs/ page's path as a link to it."""
    text = re.sub(r"docs/([\w-]+\.md)", r"[\1](\1)", text)
    return text.replace("|", "\\|")


def config_page() -> str:
    """docs/config.md: one table per section."""
    parts = [PAGE_HEADER]
    for section in sections():
        title = f"`{section.key}`" if section.key else "Top level"
        rows = [f"| `{s.key.rsplit('.', 1)[-1]}` | {_cell(_shown(s.default))} | {_cell(value_range(s.hint))} | {_cell(s.doc)} |"
                for s in section.settings]
        table = ["| key | default | takes | what it does |", "|---|---|---|---|", *rows] if rows else []
        parts.append("\n".join([f"## {title}", "", _cell(section.doc), "", *table]) + "\n")
    return "\n".join(parts)


def _comment(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH - len(indent) - 2, initial_indent=f"{indent}# ", subsequent_indent=f"{indent}# ",
                         break_on_hyphens=False, break_long_words=False)


def _yaml_lines(cls: type, data: dict[str, Any], made: Any, indent: str) -> list[str]:
    """A section's keys as YAML, each after its description: values from `data` (the file), else the default."""
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise SystemExit(f"config_docs: {DEFAULT_CONF} has a key the code does not know: {unknown[0]}")
    hints = typing.get_type_hints(cls, include_extras=True)
    lines: list[str] = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            if not indent:
                lines.append("")
            lines += _comment(_section_doc(hint), indent)
            lines.append(f"{indent}{f.name}:")
            lines += _yaml_lines(hint, data.get(f.name) or {}, getattr(made, f.name), indent + "  ")
            continue
        lines += _comment(f.metadata.get("doc", ""), indent)
        value = data[f.name] if f.name in data else _default(f, made)
        if isinstance(value, dict) and value:
            lines.append(f"{indent}{f.name}:")
            lines += [f"{indent}  {_flow(k)}: {_flow(v)}" for k, v in value.items()]
        else:
            lines.append(f"{indent}{f.name}: {_flow(value)}")
    return lines


def local_yaml(current: str) -> str:
    """conf/local.yaml: the values of `current` (the file as it is), every key, each described."""
    data = yaml.safe_load(current) or {}
    return LOCAL_HEADER + "\n".join(_yaml_lines(Config, data, Config(), "")) + "\n"


def generated() -> dict[Path, str]:
    """Each generated file and what it should hold."""
    return {CONFIG_PAGE: config_page(), DEFAULT_CONF: local_yaml(DEFAULT_CONF.read_text())}


def main(argv: list[str]) -> int:
    check = argv == ["--check"]
    if argv and not check:
        print("usage: python -m kgwalk.config_docs [--check]", file=sys.stderr)
        return 2
    stale = [path for path, text in generated().items() if not path.exists() or path.read_text() != text]
    if check:
        for path in stale:
            print(f"{path.relative_to(ROOT)} is stale: run python -m kgwalk.config_docs", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(generated()[path])
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
