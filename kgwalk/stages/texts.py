"""The texts table: one sentence per walk, by a Ray pipeline (build), or for the walks that are
new or mention a relabelled entity or relation, in this process (refresh)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.faults import crashpoint
from kgwalk.kg.ids import IdSet
from kgwalk.stages.base import Stage, Step
from kgwalk.stages.diff import isin, mentions, relabelled, remember_new_text_pairs, text_pairs, walks_diff
from kgwalk.state import record
from kgwalk.storage import read_version, scan, write_table

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
    from kgwalk.quality import gate_texts, summarize, text_checks
    from kgwalk.verbalize.pipeline import TEXTS_SCHEMA, WALK_COLUMNS

    reflects = step.pending()
    if reflects is None:
        return
    cfg = step.cfg
    done, base = step.state["texts"].reflects, step.state["texts"].version
    diff = walks_diff(cfg, done["walks"], step.shared)
    # The previous version's keys only (16 B a walk): its sentences are streamed into the new version, never held whole
    old = read_version(cfg.table("texts"), base, ["walk_id", "text_id"])
    if old.num_rows != diff.since_rows:
        raise KgwalkError(f"texts ({old.num_rows:,}) do not match walks ({diff.since_rows:,}): rerun `kgwalk verbalize`")
    # a walk id is a content hash: a walk kept has its sentence in `old`, a new one has none
    entities, relations = relabelled(cfg, "entities", done["entities"]), relabelled(cfg, "relations", done["relations"])
    added = diff.added.column("walk_id").to_numpy()
    if len(entities) or len(relations):  # a new label redoes every walk that mentions it
        new_walks, walks = IdSet(added), scan(cfg.table("walks"), columns=WALK_COLUMNS)
        todo = pa.Table.from_batches([batch.filter(pa.array(new_walks.mask(batch.column("walk_id")) | mentions(pa.table(batch), entities, relations)))
                                      for batch in walks], walks.schema)
    else:
        todo = diff.added.select(WALK_COLUMNS)
    parts = verbalize_here(cfg, todo)
    redone = isin(old.column("walk_id"), todo.column("walk_id").to_numpy())
    dropped = IdSet(np.concatenate([todo.column("walk_id").to_numpy(), diff.removed.column("walk_id").to_numpy()]))
    summaries = [summarize(text_checks(part), "walk_id") for part in parts] if cfg.quality.gates else []

    def rows() -> Iterator[pa.RecordBatch]:
        """The sentences kept, batch by batch, then the new ones; the gate sums their checks as they pass."""
        for batch in scan(cfg.table("texts"), version=base, columns=TEXTS_SCHEMA.names):
            kept = batch.filter(pa.array(~dropped.mask(batch.column("walk_id")))).cast(TEXTS_SCHEMA)
            if cfg.quality.gates:
                summaries.append(summarize(text_checks(kept), "walk_id"))
            yield kept
        for part in parts:
            yield from part.to_batches()

    def gate() -> None:  # before the commit, over every row written
        gate_texts(cfg, summaries)

    version = write_table(cfg.table("texts"), rows(), schema=TEXTS_SCHEMA, metadata=reflects, before_commit=gate if cfg.quality.gates else None)
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
