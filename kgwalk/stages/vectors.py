"""The vectors table: every text embedded by a Ray actor pool (build), or the texts that are
new, embedded in this process and appended (refresh)."""

from __future__ import annotations

import pyarrow as pa

from kgwalk.embed.common import vector_settings
from kgwalk.faults import crashpoint
from kgwalk.stages.base import Stage, Step
from kgwalk.stages.diff import new_text_pairs
from kgwalk.state import record
from kgwalk.storage import table_version, write_table


def _build(step: Step) -> int:
    from kgwalk.embed.pipeline import embed_texts

    return embed_texts(step.cfg)


def _update(step: Step) -> None:
    """Embed texts that are new (a new walk, or a walk whose text changed) and append their
    vectors. Vectors of walks that are gone stay until compaction (vectors are matched to texts
    by walk_id and text_id, so they are never used)."""
    from kgwalk.embed.pipeline import VECTORS_SCHEMA, block_rows, embed_batch, embedder_from_conf

    reflects = step.pending()
    if reflects is None:
        return
    cfg = step.cfg
    done = step.state["vectors"].reflects
    todo = new_text_pairs(cfg, done["texts"], step.shared)
    if todo.num_rows:
        embedder = embedder_from_conf(cfg.embed)
        rows = block_rows(cfg.embed)
        vectors = pa.concat_tables([embed_batch(embedder, todo.slice(i, rows)) for i in range(0, todo.num_rows, rows)])
        crashpoint("vectors.embedded")
        version = write_table(cfg.table("vectors"), vectors.cast(VECTORS_SCHEMA), mode="append", metadata=reflects)
    else:
        version = table_version(cfg.table("vectors"))
    crashpoint("vectors.written")
    record(cfg, "vectors", version, reflects)
    step.report.embedded = todo.num_rows


VECTORS: Stage[int] = Stage(
    name="vectors", command="embed", help="Ray actor pool: sentence vectors -> Delta `vectors`",
    inputs=("texts",), build=_build, update=_update, settings=lambda cfg: vector_settings(cfg.embed),
    describe=lambda cfg, n: f"{n:,} vectors ({cfg.embed.model})",
)
