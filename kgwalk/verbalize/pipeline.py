"""The verbalize stage as a Ray Data pipeline: walks (Delta) -> one sentence per walk -> `texts` (Delta).

The template verbalizer runs as plain Ray tasks. LLM verbalizers run in an actor pool
(`verbalize.actors`, each asking Ray for `verbalize.num_gpus`), each actor holding one model or
endpoint client; sentences already in the warehouse's cache are not asked for again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.config import Config, VerbalizeConf
from kgwalk.kg.ids import hash64
from kgwalk.quality import gate_texts, summarize, text_checks
from kgwalk.ray_runtime import init_ray, pool_size, read_delta, write_dataset
from kgwalk.storage import open_table, refuse_links, row_count, warehouse_cache
from kgwalk.verbalize.base import check_verbalize_conf, make_verbalizer
from kgwalk.verbalize.cache import SentenceCache, append_sentences, cache_path
from kgwalk.verbalize.llm import LLMVerbalizer, verbalizer_key
from kgwalk.walks.labels import LabelLookup, load_labels

# text_id: a content hash of the text, so vectors can be matched to the text they embed.
# source: template | llm (the model's sentence) | cache (the model's, from an earlier run) | fallback
TEXTS_SCHEMA = pa.schema(
    [("walk_id", pa.int64()), ("root", pa.int64()), ("text", pa.string()), ("text_id", pa.int64()), ("source", pa.string())]
)
WALK_COLUMNS = ["walk_id", "root", "nodes", "rels", "inverse"]
CACHE_KEY = "cache_key"  # travels with an LLM batch's output to the cache writer, never into `texts`
CACHE_FLUSH_ROWS = 20_000  # new model sentences appended to the cache at a time (what a crash can lose)


def text_ids(texts: pa.Array | list[str]) -> np.ndarray:
    values = texts.to_pylist() if isinstance(texts, (pa.Array, pa.ChunkedArray)) else texts
    return np.fromiter((hash64(t) for t in values), np.int64, count=len(values))


class Verbalization:
    """Walks (id columns) -> texts rows (plus each row's cache key): the core both the Ray
    pipeline (one per actor) and refresh run."""

    def __init__(self, conf: VerbalizeConf, labels: LabelLookup, cache: SentenceCache | None = None) -> None:
        self.verbalizer = make_verbalizer(conf)
        self.labels = labels
        self.cache = cache

    def __call__(self, batch: pa.Table) -> pa.Table:
        walks = self.labels.attach(batch)
        n = walks.num_rows
        if isinstance(self.verbalizer, LLMVerbalizer):
            triples = self.verbalizer.triples(walks)
            keys = self.verbalizer.content_keys(triples)
            found, cached = self.cache.get(keys) if self.cache is not None else (np.zeros(n, bool), pa.array([], pa.string()))
            # a cached null: the model's reply was unusable last time too, so the template's is used
            text, source = np.empty(n, object), np.full(n, "cache", object)
            text[found] = cached.to_pylist()
            misses = np.flatnonzero(~found)
            if len(misses):
                text[misses] = self.verbalizer.ask([triples[i] for i in misses])
                source[misses] = "llm"
            text, source = self.verbalizer.finish(walks, text, source)
            key = pa.array(keys, pa.int64())
        else:
            text, source = self.verbalizer.verbalize(walks)
            key = pa.nulls(n, pa.int64())
        return pa.table(
            {"walk_id": batch["walk_id"], "root": batch["root"], "text": text, "text_id": text_ids(text), "source": source, CACHE_KEY: key}
        )


def _verbalize_task(batch: pa.Table, conf: VerbalizeConf, labels: LabelLookup) -> pa.Table:
    return Verbalization(conf, labels)(batch)  # the template verbalizer costs nothing to build


@dataclass
class SentenceSink:
    """Takes the stage's output batches: counts sources, appends new model sentences to the cache
    every CACHE_FLUSH_ROWS, and hands on the `texts` rows."""

    cache: str | None
    verbalizer_key: int = 0
    sources: Counter = field(default_factory=Counter)
    checks: list[pa.Table] | None = None  # the quality gate's summaries of the batches, when gates are on
    _keys: list[pa.Array] = field(default_factory=list)
    _texts: list[pa.Array] = field(default_factory=list)

    def __call__(self, batch: pa.Table) -> pa.Table:
        source = batch.column("source")
        if self.checks is not None:
            self.checks.append(summarize(text_checks(batch), "walk_id"))
        self.sources.update(dict(zip(*np.unique(source.to_numpy(zero_copy_only=False), return_counts=True))))
        if self.cache:
            # asked of the model in this run: its sentence, or null where its reply was unusable
            # (a deterministic model would fail again; the template sentence is made anew each time)
            made = batch.filter(pc.is_in(source, pa.array(["llm", "fallback"])))
            self._keys.append(made.column(CACHE_KEY).combine_chunks())
            fallback = pc.equal(made.column("source"), "fallback").combine_chunks()
            self._texts.append(pc.if_else(fallback, pa.nulls(len(fallback), pa.string()), made.column("text").combine_chunks()))
            if sum(len(k) for k in self._keys) >= CACHE_FLUSH_ROWS:
                self.flush()
        return batch.drop_columns([CACHE_KEY])

    def flush(self) -> None:
        if self.cache and self._keys:
            append_sentences(self.cache, self.verbalizer_key, pa.concat_arrays(self._keys), pa.concat_arrays(self._texts))
        self._keys, self._texts = [], []

    def summary(self) -> str:
        return ", ".join(f"{count:,} {source}" for source, count in sorted(self.sources.items()))


def open_cache(cfg: Config) -> tuple[SentenceCache | None, SentenceSink]:
    """The cache view and the sink for a stage or a refresh with the configured verbalizer."""
    if cfg.verbalize.verbalizer == "template" or not cfg.verbalize.cache:
        return None, SentenceSink(None)
    path, key = cache_path(cfg), verbalizer_key(cfg.verbalize)
    refuse_links(warehouse_cache(cfg.warehouse))  # as every writer checks at its start (kgwalk.state), again just before writing
    return SentenceCache.load(path, key), SentenceSink(path, key)


def verbalize_walks(cfg: Config) -> SentenceSink:
    """Verbalize every walk into `texts`; the returned sink counts sentences by source."""
    conf = cfg.verbalize
    check_verbalize_conf(conf)  # fail fast on bad settings, without loading a model on the driver
    open_table(cfg.table("walks"), what="walks")  # and on a missing input, before Ray starts
    labels = load_labels(cfg)  # Ray ships it to each task once, via the object store
    cache, sink = open_cache(cfg)
    ray = init_ray(cfg.ray)
    ds = read_delta(cfg.table("walks"), WALK_COLUMNS, conf.batch_size, "walks")
    if conf.verbalizer == "template":
        ds = ds.map_batches(_verbalize_task, fn_kwargs={"conf": conf, "labels": labels}, batch_format="pyarrow", batch_size=conf.batch_size)
    else:
        ds = ds.map_batches(
            Verbalization,
            fn_constructor_kwargs={"conf": conf, "labels": labels, "cache": cache},
            batch_format="pyarrow",
            batch_size=conf.batch_size,
            compute=ray.data.ActorPoolStrategy(size=conf.actors if conf.num_gpus else min(conf.actors, pool_size(0))),
            num_cpus=0 if conf.num_gpus else 1,
            num_gpus=conf.num_gpus,
        )
    before_commit = None
    if cfg.quality.gates:
        sink.checks = []
        before_commit = lambda: gate_texts(cfg, sink.checks)  # noqa: E731
    try:
        write_dataset(ds, cfg.table("texts"), TEXTS_SCHEMA, sink, before_commit, progress="verbalize", total=row_count(cfg.table("walks")))
    finally:
        sink.flush()  # sentences the model made are kept even when the gate stops the commit
    return sink
