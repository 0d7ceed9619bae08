"""Where the index takes walk vectors from: the vectors table, or, where that keeps none
(embed.store_vectors: a static or hashing model's by default), the texts embedded again here.

A static model embeds ~30,000 sentences a second on one core, which is less than reading its
1 KB vectors back from Parquet costs, and the table's copy of every vector was half of a
warehouse's bytes (bench/results/bytes_per_walk.md). A transformer's vectors stay stored: making
them again would cost the embed stage once more.

Every function returns rows of vectors aligned with the walks it was given."""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.embed.settings import stores_vectors
from kgwalk.embed.pipeline import arrow_to_vectors, block_rows, embed_batch, embedder_from_conf
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import IdSet
from kgwalk.storage import open_table, scan, table_files, table_version

TEXT_COLUMNS = ["walk_id", "text_id", "text"]


def all_vectors(cfg: Config, walk_ids: np.ndarray | None = None) -> Iterator[pa.RecordBatch | pa.Table]:
    """Every (walk_id, text_id, vector) row, batch by batch: the vectors table's, or each text
    embedded (a build's index stage); with `walk_ids`, only those walks' rows, a text
    embedded only when its walk is one of them."""
    only = None if walk_ids is None else IdSet(walk_ids)
    if stores_vectors(cfg.embed, cfg.index.backend):
        yield from (_only(batch, only) for batch in scan(cfg.table("vectors"), what="embed"))
        return
    embedder = embedder_from_conf(cfg.embed)
    rows = block_rows(cfg.embed)
    texts = (_only(batch, only) for batch in scan(cfg.table("texts"), columns=TEXT_COLUMNS, what="verbalize"))
    blocks = (pa.Table.from_batches([batch.slice(at, rows)]) for batch in texts for at in range(0, batch.num_rows, rows))
    # The next block is embedded on a thread of its own while the caller writes this one: the model
    # (tokenizer and NumPy) and Qdrant's writer release the GIL, and in turn they took 113 s of
    # MetaQA's index stage against 36 s for the writes alone
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgwalk-embed") as ahead:
        pending: Future[pa.Table] | None = None
        for block in blocks:
            following = ahead.submit(embed_batch, embedder, block)
            if pending is not None:
                yield pending.result()
            pending = following
        if pending is not None:
            yield pending.result()


def vector_dim(cfg: Config) -> int:
    """The walk vectors' dimensions: the vectors table's rows', or the model's where it keeps none."""
    if not stores_vectors(cfg.embed, cfg.index.backend):
        return int(embedder_from_conf(cfg.embed).dim)
    for batch in scan(cfg.table("vectors"), columns=["vector"], what="embed"):
        if batch.num_rows:
            return len(batch.column("vector")[0])
    raise KgwalkError("the vectors table is empty: rerun `kgwalk embed`")


def _only(batch: pa.RecordBatch, walk_ids: IdSet | None) -> pa.RecordBatch:
    """The rows of `batch` whose walk is among `walk_ids` (None: every row)."""
    if walk_ids is None:
        return batch
    keep = walk_ids.mask(batch.column("walk_id"))
    return batch if keep.all() else batch.filter(pa.array(keep))


def texts_vectors(cfg: Config, texts: pa.Table, since: int) -> np.ndarray:
    """Vectors of these texts rows (walk_id, text_id, text), in their order: embedded here, or
    from the vectors table (the files added since its version `since` first: a refresh appends
    there; the whole table only for walks still missing)."""
    if not texts.num_rows:
        return np.zeros((0, 0), np.float32)
    if not stores_vectors(cfg.embed, cfg.index.backend):
        return _embedded(cfg, texts)
    return _table_vectors(cfg, texts.column("walk_id").to_numpy(), texts.column("text_id").to_numpy(), since)


def vectors_at(cfg: Config, ids: np.ndarray, texts_version: int) -> np.ndarray:
    """Vectors these walks had at version `texts_version` of the texts table (walks since removed,
    or given a new text since), in the order of `ids` (each once)."""
    if not len(ids):
        return np.zeros((0, 0), np.float32)
    wanted = IdSet(ids)  # a 0.1% refresh of the 10M-edge KG takes millions of walks out: is_in hashed them again per batch
    parts = [_only(b, wanted) for b in scan(cfg.table("texts"), version=texts_version, columns=TEXT_COLUMNS)]
    texts = pa.Table.from_batches(parts) if parts else None
    if texts is None or texts.num_rows != len(ids):
        found = 0 if texts is None else texts.num_rows
        raise KgwalkError(f"texts version {texts_version} holds {found:,} of the {len(ids):,} walks a refresh takes out: run `kgwalk build` again")
    order = np.argsort(texts.column("walk_id").to_numpy())
    texts = texts.take(pa.array(order[np.argsort(np.argsort(np.asarray(ids, np.int64)))]))  # rows in the order of `ids`
    return texts_vectors(cfg, texts, table_version(cfg.table("vectors")))


def matching_vectors(meta_ids: np.ndarray, meta_text_ids: np.ndarray, batch: pa.RecordBatch, taken: np.ndarray):
    """(meta rows, vectors) of a vectors batch's rows that belong to current walks with their
    current text, each walk once: after a refresh the vectors table may also hold vectors of
    walks that are gone or whose text changed (see kgwalk.refresh)."""
    ids = batch.column("walk_id").to_numpy()
    order = np.argsort(ids)  # sorted needles: numpy's binary search starts from the last one found (2x on 6M walks)
    rows = np.empty(len(ids), np.int64)
    rows[order] = np.minimum(np.searchsorted(meta_ids, ids[order]), max(len(meta_ids) - 1, 0))
    ok = (meta_ids[rows] == ids) & (meta_text_ids[rows] == batch.column("text_id").to_numpy()) & ~taken[rows]
    keep = np.flatnonzero(ok)
    _, first = np.unique(rows[keep], return_index=True)
    keep = keep[np.sort(first)]
    taken[rows[keep]] = True
    vectors = batch.column("vector")
    # a full build keeps every row: copying them through take() cost a 1M-edge build 9 s
    return rows[keep], arrow_to_vectors(vectors if len(keep) == len(ids) else vectors.take(pa.array(keep)))


def _embedded(cfg: Config, texts: pa.Table) -> np.ndarray:
    """A refresh's texts embedded on every core: nothing else runs meanwhile, the model's tokenizer and NumPy release
    the GIL, and a sentence's vector does not depend on the block it is in."""
    embedder = embedder_from_conf(cfg.embed)
    threads = os.cpu_count() or 1
    rows = max(1, min(block_rows(cfg.embed), -(-texts.num_rows // threads)))
    blocks = [texts.slice(at, rows) for at in range(0, texts.num_rows, rows)]
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kgwalk-embed") as pool:
        return np.concatenate([arrow_to_vectors(t.column("vector")) for t in pool.map(lambda block: embed_batch(embedder, block), blocks)])


def _table_vectors(cfg: Config, ids: np.ndarray, text_ids: np.ndarray, since: int) -> np.ndarray:
    import pyarrow.dataset as ds  # not at the top: it imports pandas, which the CLI (a query) would load for nothing

    order = np.argsort(ids)
    ids, text_ids = ids[order], text_ids[order]
    taken = np.zeros(len(ids), bool)
    found: dict[int, np.ndarray] = {}
    table = open_table(cfg.table("vectors"))
    now_files = table_files(table)
    table.load_as_version(since)
    new_files = sorted(set(now_files) - set(table_files(table)))
    for files in (new_files, now_files):
        if taken.all():
            break
        if not files:  # nothing appended since `since`
            continue
        wanted = pa.array(ids[~taken])
        for batch in ds.dataset(files, format="parquet").to_batches(filter=ds.field("walk_id").isin(wanted)):
            got, vecs = matching_vectors(ids, text_ids, batch, taken)
            found.update(zip(got.tolist(), vecs))
    if not taken.all():
        raise KgwalkError(f"vectors are missing for {int((~taken).sum()):,} walks: rerun `kgwalk embed` and `kgwalk index`")
    result = np.stack([found[i] for i in range(len(ids))])
    return result[np.argsort(order)]
