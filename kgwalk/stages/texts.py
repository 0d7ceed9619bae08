"""The texts table: one sentence per walk, by a Ray pipeline (build), or for the walks that are
new or mention a relabelled entity or relation, in this process (refresh)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kgwalk.config import Config
from kgwalk.faults import crashpoint
from kgwalk.stages.base import Stage, Step
from kgwalk.stages.diff import isin, matched, mentions, relabelled
from kgwalk.state import record
from kgwalk.storage import read_table, read_version, write_table

if TYPE_CHECKING:
    from kgwalk.verbalize.pipeline import SentenceSink


def _settings(cfg: Config) -> dict[str, Any]:
    """The verbalizer and its phrases; an LLM's sentences also follow its model, prompt and sampling."""
    from kgwalk.verbalize.llm import verbalizer_key

    llm = {} if cfg.verbalize.verbalizer == "template" else {"llm": verbalizer_key(cfg.verbalize)}
    return {"verbalizer": cfg.verbalize.verbalizer, "phrases": cfg.verbalize.phrases, **llm}


def _build(step: Step) -> SentenceSink:
    from kgwalk.verbalize.pipeline import verbalize_walks

    return verbalize_walks(step.cfg)


def _update(step: Step) -> None:
    """Verbalize the walks that are new or mention a relabelled entity or relation."""
    from kgwalk.verbalize.pipeline import TEXTS_SCHEMA, WALK_COLUMNS, Verbalization, open_cache
    from kgwalk.walks.labels import load_labels

    reflects = step.pending()
    if reflects is None:
        return
    cfg = step.cfg
    done, base = step.state["texts"].reflects, step.state["texts"].version
    walks = read_table(cfg.table("walks"), WALK_COLUMNS)
    old = read_version(cfg.table("texts"), base)
    # a walk id is a content hash: a walk with a sentence in `old` is unchanged
    has_walk, has_text = matched(old.column("walk_id"), walks.column("walk_id"))
    redo = ~has_text | mentions(walks, relabelled(cfg, "entities", done["entities"]), relabelled(cfg, "relations", done["relations"]))
    todo = walks.filter(pa.array(redo))
    cache, sink = open_cache(cfg)
    parts: list[pa.Table] = []
    if todo.num_rows:  # a verbalizer (an LLM's: a model) is built only when there is work
        verbalization = Verbalization(cfg.verbalize, load_labels(cfg), cache)
        batch = cfg.verbalize.batch_size
        parts = [sink(verbalization(todo.slice(i, batch))) for i in range(0, todo.num_rows, batch)]
    sink.flush()
    keep = has_walk & ~isin(old.column("walk_id"), todo.column("walk_id").to_numpy())

    # Batch by batch, never the whole table at once: a copy of the 7M kept sentences of the
    # 1M-edge KG costs seconds of fresh memory; a batch's copy is freed before the next.
    def batches_with_keep() -> Iterator[tuple[pa.RecordBatch, pa.Array]]:
        at = 0
        for batch in old.to_batches():
            yield batch, pa.array(keep[at : at + batch.num_rows])
            at += batch.num_rows

    if cfg.quality.gates:
        from kgwalk.quality import gate_texts, summarize, text_checks

        kept = [summarize(text_checks(batch).filter(mask), "walk_id") for batch, mask in batches_with_keep()]
        gate_texts(cfg, kept + [summarize(text_checks(part), "walk_id") for part in parts])
    rows = (b.cast(TEXTS_SCHEMA) for b in chain((batch.filter(mask) for batch, mask in batches_with_keep()), *(part.to_batches() for part in parts)))
    version = write_table(cfg.table("texts"), rows, schema=TEXTS_SCHEMA, metadata=reflects)
    crashpoint("texts.written")
    record(cfg, "texts", version, reflects)
    step.report.verbalized = todo.num_rows


TEXTS: Stage[SentenceSink] = Stage(
    name="texts", command="verbalize", help="Ray pipeline: one sentence per walk -> Delta `texts`",
    inputs=("walks", "entities", "relations"), build=_build, update=_update, settings=_settings,
    describe=lambda cfg, s: f"{sum(s.sources.values()):,} sentences ({cfg.verbalize.verbalizer}: {s.summary()})",
)
