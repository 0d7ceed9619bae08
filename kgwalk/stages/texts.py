"""The texts table: one sentence per walk, by a Ray pipeline (build), or for the walks that are
new or mention a relabelled entity or relation, in this process (refresh)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.faults import crashpoint
from kgwalk.stages.base import Stage, Step
from kgwalk.stages.diff import isin, mentions, relabelled, remember_new_text_pairs, text_pairs, walks_diff
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


def verbalize_here(cfg: Config, walks: pa.Table) -> list[pa.Table]:
    """These walks' texts rows, in this process, in batches of verbalize.batch_size through the
    sentence cache: a refresh's path (a build verbalizes on Ray), and small builds in one process."""
    from kgwalk.verbalize.pipeline import TEXTS_SCHEMA, Verbalization, open_cache
    from kgwalk.walks.labels import load_labels

    cache, sink = open_cache(cfg)
    parts: list[pa.Table] = []
    if walks.num_rows:  # a verbalizer (an LLM's: a model) is built only when there is work
        verbalization = Verbalization(cfg.verbalize, load_labels(cfg), cache)
        batch = cfg.verbalize.batch_size
        parts = [sink(verbalization(walks.slice(i, batch))).cast(TEXTS_SCHEMA) for i in range(0, walks.num_rows, batch)]
    sink.flush()
    return parts


def _update(step: Step) -> None:
    """Verbalize the walks that are new or mention a relabelled entity or relation."""
    from kgwalk.verbalize.pipeline import TEXTS_SCHEMA, WALK_COLUMNS

    reflects = step.pending()
    if reflects is None:
        return
    cfg = step.cfg
    done, base = step.state["texts"].reflects, step.state["texts"].version
    diff = walks_diff(cfg, done["walks"], step.shared)
    old = read_version(cfg.table("texts"), base)
    if old.num_rows != diff.since_rows:
        raise KgwalkError(f"texts ({old.num_rows:,}) do not match walks ({diff.since_rows:,}): rerun `kgwalk verbalize`")
    # a walk id is a content hash: a walk kept has its sentence in `old`, a new one has none
    entities, relations = relabelled(cfg, "entities", done["entities"]), relabelled(cfg, "relations", done["relations"])
    added = diff.added.column("walk_id").to_numpy()
    if len(entities) or len(relations):  # a new label redoes every walk that mentions it
        walks = read_table(cfg.table("walks"), WALK_COLUMNS)
        todo = walks.filter(pa.array(isin(walks.column("walk_id"), added) | mentions(walks, entities, relations)))
    else:
        todo = diff.added.select(WALK_COLUMNS)
    parts = verbalize_here(cfg, todo)
    redone = isin(old.column("walk_id"), todo.column("walk_id").to_numpy())
    keep = ~redone & ~isin(old.column("walk_id"), diff.removed.column("walk_id").to_numpy())

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
    # the sentences written that `old` lacks: the vectors and index steps' work
    written = pa.concat_tables(parts) if parts else TEXTS_SCHEMA.empty_table()
    had = old.filter(pa.array(redone))
    remember_new_text_pairs(cfg, step.shared, base, version, written.filter(pa.array(~isin(pa.array(text_pairs(written)), text_pairs(had)))))
    step.report.verbalized = todo.num_rows


TEXTS: Stage[SentenceSink] = Stage(
    name="texts", command="verbalize", help="Ray pipeline: one sentence per walk -> Delta `texts`",
    inputs=("walks", "entities", "relations"), build=_build, update=_update, settings=_settings, uses_ray=True,
    describe=lambda cfg, s: f"{sum(s.sources.values()):,} sentences ({cfg.verbalize.verbalizer}: {s.summary()})",
)
