"""The embed stage: a Ray Data actor pool embeds walk texts -> `vectors` (Delta)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kgwalk.config import Config, EmbedConf
from kgwalk.embed.model import Embedder, make_embedder, resolve_batch_size, resolve_precision
from kgwalk.embed.static import STATIC_BATCH, is_static
from kgwalk.errors import KgwalkError
from kgwalk.ray_runtime import actor_cpus, cluster_cpus, init_ray, pool_size, ray_address, read_delta, write_dataset
from kgwalk.storage import open_table, row_count

# A static model's blocks: a few seconds of its work each, so the vectors table gets a few large
# files rather than hundreds. Speed hardly depends on it once Ray runs (bench/results/embed_static.md:
# 36 s at 4,096 rows, 40 s at 131,072 for MetaQA's 762,712 sentences).
STATIC_BLOCK_ROWS = 131072
VECTORS_SCHEMA = pa.schema([("walk_id", pa.int64()), ("text_id", pa.int64()), ("vector", pa.list_(pa.float32()))])


def vectors_to_arrow(vectors: np.ndarray) -> pa.ListArray:
    flat = pa.array(np.ascontiguousarray(vectors, np.float32).ravel())
    offsets = pa.array(np.arange(0, vectors.size + 1, vectors.shape[1], dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, flat)


def arrow_to_vectors(column: pa.ChunkedArray | pa.ListArray) -> np.ndarray:
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if len(arr) == 0:
        return np.empty((0, 0), np.float32)
    values = arr.flatten().to_numpy(zero_copy_only=False)
    return values.reshape(len(arr), -1).astype(np.float32, copy=False)


def embedder_from_conf(conf: EmbedConf, threads: int = 0) -> Embedder:
    return make_embedder(conf.model, conf.device, threads or conf.threads_per_actor, conf.batch_size, conf.precision)


def block_rows(conf: EmbedConf) -> int:
    """Rows handed to an embedder at once: several forward passes, so per-block costs (Ray
    scheduling, Arrow conversion, the length sort) stay small beside the model. A static model
    embeds ~20,000 sentences/s, so its blocks are larger."""
    if is_static(conf.model):
        return max(STATIC_BLOCK_ROWS, 8 * (conf.batch_size or STATIC_BATCH))
    return max(4096, 8 * resolve_batch_size(conf.batch_size, conf.device))


class _EmbedActor:
    def __init__(self, conf: EmbedConf, threads: int, embedder: Embedder | None = None) -> None:
        self.embedder = embedder or embedder_from_conf(conf, threads)

    def __call__(self, batch: pa.Table) -> pa.Table:
        return embed_batch(self.embedder, batch)


def embed_batch(embedder: Embedder, texts: pa.Table) -> pa.Table:
    """Texts rows -> vectors rows; the core both the Ray actor pool and refresh run.

    Each distinct text (by `text_id`) is embedded once: random walks repeat BFS walks' sentences.
    """
    unique_ids, first, inverse = np.unique(texts["text_id"].to_numpy(), return_index=True, return_inverse=True)
    unique_texts = texts["text"].take(pa.array(first)).to_pylist()
    vectors = embedder.encode(unique_texts)[inverse] if len(unique_ids) else np.empty((0, embedder.dim), np.float32)
    return pa.table(
        {"walk_id": texts["walk_id"], "text_id": texts["text_id"], "vector": vectors_to_arrow(vectors)}, schema=VECTORS_SCHEMA
    )


def embed_texts(cfg: Config) -> int:
    """Embed every walk text; returns the number of vectors written."""
    resolve_precision(cfg.embed.precision, cfg.embed.device)  # bad settings fail here, not inside an actor
    open_table(cfg.table("texts"), what="verbalize")  # fail fast, before Ray starts
    # A static model is built here (distilled once, or read from the cache) and shipped to the
    # actors: ~30 MB, and no worker needs the cache or torch.
    shipped = embedder_from_conf(cfg.embed) if is_static(cfg.embed.model) else None
    ray = init_ray(cfg.ray)
    gpus = 1 if cfg.embed.device.startswith("cuda") else 0
    if gpus and not ray.cluster_resources().get("GPU") and not ray_address(cfg.ray):
        # a local Ray never gains a GPU, so the actors would wait for one forever (a cluster may add GPU nodes)
        raise KgwalkError("embed.device=cuda, but this machine's Ray has no GPU: use embed.device=cpu or a Ray cluster with GPU workers")
    actors = pool_size(cfg.embed.actors)
    threads = cfg.embed.threads_per_actor or max(1, cluster_cpus() // actors)
    rows = block_rows(cfg.embed)
    ds = read_delta(cfg.table("texts"), ["walk_id", "text", "text_id"], rows, "verbalize").map_batches(
        _EmbedActor,
        fn_constructor_kwargs={"conf": cfg.embed, "threads": threads, "embedder": shipped},
        batch_format="pyarrow",
        batch_size=rows,
        compute=ray.data.ActorPoolStrategy(size=actors),
        num_cpus=actor_cpus(actors),
        num_gpus=gpus,
    )
    return write_dataset(ds, cfg.table("vectors"), VECTORS_SCHEMA, progress="embed", total=row_count(cfg.table("texts")))
