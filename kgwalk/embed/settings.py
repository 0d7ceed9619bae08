"""What decides a KG's vectors (their settings fingerprint) and whether the vectors table keeps them."""

from __future__ import annotations

from typing import Any

from kgwalk.config import EmbedConf, IndexBackend
from kgwalk.embed.static import is_static


def stores_vectors(conf: EmbedConf, backend: IndexBackend) -> bool:
    """Whether the vectors table keeps walk vectors (embed.store_vectors). auto: a model that is
    costly to run again (a transformer), and any model where the index is a Qdrant server's (a
    cluster's build: its Ray workers embed, while the index stage runs in the driver alone); else a
    static or hashing model's vectors are made again from the texts wherever they are needed (the
    index build, a refresh's changed walks)."""
    if conf.store_vectors != "auto":
        return conf.store_vectors == "always"
    return backend == "server" or not (is_static(conf.model) or conf.model.startswith("hashing-"))


def vector_settings(conf: EmbedConf, backend: IndexBackend) -> dict[str, Any]:
    """The settings that decide what vectors the embed stage writes: the vectors table records
    their fingerprint, a refresh and a query check it. Vectors left unstored add a key (a KG
    whose table holds vectors keeps the fingerprint it was built with)."""
    settings: dict[str, Any] = {"model": conf.model, "precision": conf.precision}
    if not stores_vectors(conf, backend):
        settings["stored"] = False
    return settings
