"""The vectors table: every text embedded by a Ray actor pool (build), or the texts that are
new, embedded in this process and appended (refresh). Where vectors are not stored
(embed.store_vectors; a static model's by default) the table stays empty: its versions and
settings are still recorded, and the index embeds the texts itself (kgwalk.index.walk_vectors)."""

from __future__ import annotations

import pyarrow as pa

from kgwalk.config import Config
from kgwalk.embed.settings import stores_vectors, vector_settings
from kgwalk.faults import crashpoint
from kgwalk.stages.base import Stage, Step
from kgwalk.stages.diff import new_text_pairs
from kgwalk.state import record
from kgwalk.storage import open_table, table_version, write_table


def _build(step: Step) -> int:
    from kgwalk.embed.pipeline import VECTORS_SCHEMA, embed_texts

    if not stores_vectors(step.cfg.embed, step.cfg.index.backend):
        open_table(step.cfg.table("texts"), what="verbalize")  # its input must exist all the same
        write_table(step.cfg.table("vectors"), VECTORS_SCHEMA.empty_table())
        return 0
    return embed_texts(step.cfg)


def _describe(cfg: Config, vectors: int) -> str:
    if not stores_vectors(cfg.embed, cfg.index.backend):
        return f"vectors not stored ({cfg.embed.model}: the index embeds the texts; embed.store_vectors)"
    return f"{vectors:,} vectors ({cfg.embed.model})"


def embed_here(cfg: Config, texts: pa.Table) -> pa.Table:
    """Vectors rows of these texts rows, in this process, block by block: a refresh's path (a build
    embeds on a Ray actor pool), and small builds in one process."""
    from kgwalk.embed.pipeline import VECTORS_SCHEMA, block_rows, embed_batch, embedder_from_conf

    if not texts.num_rows:  # no embedder (a model) is built without work
        return VECTORS_SCHEMA.empty_table()
    embedder = embedder_from_conf(cfg.embed)
    rows = block_rows(cfg.embed)
    return pa.concat_tables([embed_batch(embedder, texts.slice(i, rows)) for i in range(0, texts.num_rows, rows)]).cast(VECTORS_SCHEMA)


def _update(step: Step) -> None:
    """Embed texts that are new (a new walk, or a walk whose text changed) and append their
    vectors. Vectors of walks that are gone stay until compaction (vectors are matched to texts
    by walk_id and text_id, so they are never used)."""
    reflects = step.pending()
    if reflects is None:
        return
    cfg = step.cfg
    done = step.state["vectors"].reflects
    todo = new_text_pairs(cfg, done["texts"], step.shared)
    if not stores_vectors(cfg.embed, cfg.index.backend):  # the index embeds them
        todo = todo.slice(0, 0)
    vectors = embed_here(cfg, todo)
    crashpoint("vectors.embedded")
    version = write_table(cfg.table("vectors"), vectors, mode="append", metadata=reflects) if todo.num_rows else table_version(cfg.table("vectors"))
    crashpoint("vectors.written")
    record(cfg, "vectors", version, reflects)
    step.report.embedded = todo.num_rows


VECTORS: Stage[int] = Stage(
    name="vectors", command="embed", help="Ray actor pool: sentence vectors -> Delta `vectors`",
    inputs=("texts",), build=_build, update=_update, settings=lambda cfg: vector_settings(cfg.embed, cfg.index.backend), uses_ray=True,
    describe=_describe,
)
