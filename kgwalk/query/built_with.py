"""A KG is queried with the embed model its vectors were made with, or not at all.

The vectors stage records the fingerprint of the settings that decide its vectors
(kgwalk.embed.settings.vector_settings: model and precision) in the state table. A question
embedded by another model lands in another vector space: where the dimensions differ the index
refuses it once the model has loaded (seconds of ONNX export and load for nothing), where they
agree every ranking is silently meaningless. So a retriever checks first, before any model
loads, and refuses in one line, naming the model the KG was built with where it is one it knows.

It refuses rather than switching to the recorded model: the state holds a fingerprint, not the
model's name (in every KG built so far), so the model can be checked but not read back; and
settings keep one source, the configuration, as a refresh refuses a corpus built with others.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, get_args

from kgwalk.config import Config, EmbedConf, EmbedPrecision
from kgwalk.embed.settings import vector_settings
from kgwalk.embed.static import DEFAULT_SOURCE, STATIC
from kgwalk.errors import KgwalkError
from kgwalk.state import fingerprint
from kgwalk.storage import read_rows, table_exists, table_version

# the models a refusal can name: what a recorded fingerprint is compared with besides the configured one
KNOWN_MODELS = (STATIC, DEFAULT_SOURCE)


def recorded_fingerprint(cfg: Config) -> str | None:
    """The settings fingerprint the KG's vectors were made with; None where none is recorded."""
    path = cfg.table("state")
    if not table_exists(path):
        return None
    # read_rows, not read_state: delta-rs' own reader spares a CLI query pyarrow.dataset's pandas import
    rows = read_rows(path, table_version(path), ["table", "reflects"]).to_pylist()
    vectors: dict[str, Any] = next((json.loads(r["reflects"]) for r in rows if r["table"] == "vectors"), {})
    return vectors.get("settings")


def model_fingerprints(conf: EmbedConf) -> set[str]:
    """The fingerprints of vectors `conf.model` makes, at any embed.precision, stored or not: the
    precision only rounds a model's vectors (and a question is always embedded at full precision)."""
    return {fingerprint(vector_settings(replace(conf, precision=p, store_vectors=s), "edge"))  # explicit: the backend is not asked
            for p in get_args(EmbedPrecision) for s in ("always", "never")}


def check_embed_model(cfg: Config) -> None:
    """Refuse (KgwalkError) a configured embed.model other than the one the KG's vectors were made with."""
    recorded = recorded_fingerprint(cfg)
    if recorded is None or recorded in model_fingerprints(cfg.embed):
        return
    again = "or embed and index it again with this model (kgwalk embed, then kgwalk index)"
    built = next((m for m in KNOWN_MODELS if recorded in model_fingerprints(replace(cfg.embed, model=m))), None)
    if built is not None:
        raise KgwalkError(f"{cfg.root}'s vectors were made with embed.model={built}, not {cfg.embed.model}: "
                          f"query with --set embed.model={built} (conf: embed.model), {again}")
    raise KgwalkError(f"{cfg.root}'s vectors were made with another embed.model than {cfg.embed.model} (settings fingerprint "
                      f"{recorded}): query with the model it was built with (--set embed.model=..., conf: embed.model), {again}")
