"""The verbalize stage as a Ray Data pipeline: walks (Delta) -> one sentence per walk -> `texts` (Delta)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from kgwalk.config import Config
from kgwalk.kg.ids import hash64
from kgwalk.ray_runtime import init_ray, read_delta, write_dataset
from kgwalk.storage import open_table, read_table
from kgwalk.verbalize.base import make_verbalizer
from kgwalk.walks.labels import LabelLookup

# text_id: a content hash of the text, so vectors can be matched to the text they embed.
TEXTS_SCHEMA = pa.schema([("walk_id", pa.int64()), ("root", pa.int64()), ("text", pa.string()), ("text_id", pa.int64())])
WALK_COLUMNS = ["walk_id", "root", "nodes", "rels", "inverse"]


def text_ids(texts: pa.Array | list[str]) -> np.ndarray:
    values = texts.to_pylist() if isinstance(texts, (pa.Array, pa.ChunkedArray)) else texts
    return np.fromiter((hash64(t) for t in values), np.int64, count=len(values))


def verbalize_batch(batch: pa.Table, name: str, phrases: dict[str, list[str]], labels: LabelLookup) -> pa.Table:
    """Walks (id columns) -> texts rows; the core both the Ray pipeline and refresh run."""
    # the template verbalizer costs nothing to build
    texts = make_verbalizer(name, phrases).verbalize(labels.attach(batch))
    return pa.table(
        {"walk_id": batch["walk_id"], "root": batch["root"], "text": texts, "text_id": text_ids(texts)}, schema=TEXTS_SCHEMA
    )


def load_labels(cfg: Config) -> LabelLookup:
    """Every entity and relation label (Ray ships it to each task once, via the object store)."""
    return LabelLookup(
        read_table(cfg.table("entities"), ["id", "label"], what="ingest"),
        read_table(cfg.table("relations"), ["id", "label"], what="ingest"),
    )


def verbalize_walks(cfg: Config) -> int:
    """Verbalize every walk; returns the number of sentences written."""
    make_verbalizer(cfg.verbalize.verbalizer, cfg.verbalize.phrases)  # fail fast on a bad name
    open_table(cfg.table("walks"), what="walks")  # and on a missing input, before Ray starts
    labels = load_labels(cfg)
    init_ray(cfg.ray)
    ds = read_delta(cfg.table("walks"), WALK_COLUMNS, cfg.verbalize.batch_size, "walks").map_batches(
        verbalize_batch,
        fn_kwargs={"name": cfg.verbalize.verbalizer, "phrases": cfg.verbalize.phrases, "labels": labels},
        batch_format="pyarrow",
        batch_size=cfg.verbalize.batch_size,
    )
    return write_dataset(ds, cfg.table("texts"), TEXTS_SCHEMA)
