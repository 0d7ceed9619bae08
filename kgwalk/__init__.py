"""kgwalk: turn knowledge graphs into Walk&Retrieve retrieval corpora.

Stages: ingest -> walks -> verbalize -> embed -> index; then query.

The names below are the public API: what users import (`from kgwalk import Retriever`), stable
across the modules that define them. Each is imported on first use, so `import kgwalk` (and the
CLI, which imports it first) stays cheap: retrieval brings models and the index, the builds Spark
and Ray, the client only httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it
_HOMES = {
    "Config": "kgwalk.config",
    "load_config": "kgwalk.config",
    "KgwalkError": "kgwalk.errors",
    "QualityGateFailed": "kgwalk.errors",
    "BusyError": "kgwalk.errors",
    "Retriever": "kgwalk.query.retriever",
    "Retrieves": "kgwalk.query.hits",
    "Retrieval": "kgwalk.query.hits",
    "NodeHit": "kgwalk.query.hits",
    "WalkHit": "kgwalk.query.hits",
    "EgoLine": "kgwalk.query.hits",
    "Answerer": "kgwalk.query.answer",
    "Answer": "kgwalk.query.answer",
    "KgwalkClient": "kgwalk.client",
    "KgwalkClientError": "kgwalk.client",
    "run_build": "kgwalk.stages",
    "run_refresh": "kgwalk.refresh.job",
    "status_data": "kgwalk.refresh.status",
}

__all__ = [
    "Answer", "Answerer", "BusyError", "Config", "EgoLine", "KgwalkClient", "KgwalkClientError", "KgwalkError", "NodeHit",
    "QualityGateFailed", "Retrieval", "Retriever", "Retrieves", "WalkHit", "load_config", "run_build", "run_refresh", "status_data",
]  # the keys of _HOMES (tests/test_public_api.py)

if TYPE_CHECKING:
    from kgwalk.client import KgwalkClient, KgwalkClientError
    from kgwalk.config import Config, load_config
    from kgwalk.errors import BusyError, KgwalkError, QualityGateFailed
    from kgwalk.query.answer import Answer, Answerer
    from kgwalk.query.hits import EgoLine, NodeHit, Retrieval, Retrieves, WalkHit
    from kgwalk.query.retriever import Retriever
    from kgwalk.refresh.job import run_refresh
    from kgwalk.refresh.status import status_data
    from kgwalk.stages import run_build


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'kgwalk' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # imported once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
