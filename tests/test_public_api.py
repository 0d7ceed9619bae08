"""The public API: what `kgwalk/__init__.py` names is what users import, `import kgwalk` stays cheap,
and the README's Python examples use nothing else."""

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kgwalk

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "pyspark", "ray", "qdrant_edge", "qdrant_client", "sentence_transformers", "onnxruntime", "great_expectations",
         "deltalake", "kgwalk.query", "kgwalk.stages", "yaml")


@pytest.mark.parametrize("name", kgwalk.__all__)
def test_each_public_name_is_its_defining_modules(name):
    value = getattr(kgwalk, name)
    assert value.__name__ == name
    assert name in dir(kgwalk)


def test_all_is_every_public_name():
    assert sorted(kgwalk.__all__) == sorted(kgwalk._HOMES)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Retreiver'"):
        kgwalk.Retreiver  # noqa: B018


def test_importing_kgwalk_loads_nothing_heavy():
    """The CLI imports the package first; retrieval, builds and the client bring their own weight when used."""
    code = "import sys, json, kgwalk; print(json.dumps(sorted(m for m in sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout))
    assert not {m for m in loaded for heavy in HEAVY if m == heavy or m.startswith(heavy + ".")}


def test_the_readme_python_imports_only_the_public_api():
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert blocks
    imports = [line for block in blocks for line in block.splitlines() if re.match(r"\s*(from|import)\s", line)]
    assert imports
    for line in imports:
        # the package's names, or an adapter's (the integrations sit above the core, behind extras)
        m = re.fullmatch(r"\s*from (kgwalk|kgwalk\.integrations(?:\.langchain|\.llamaindex)?) import ([\w, ]+?)(?: as \w+)?\s*(#.*)?", line)
        assert m, f"README imports outside the public API: {line}"
        module = importlib.import_module(m.group(1))
        assert set(map(str.strip, m.group(2).split(","))) <= set(getattr(module, "__all__", dir(module))), line
