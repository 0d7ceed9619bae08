"""The verbalize stage as a Ray Data pipeline: walks (Delta) -> one sentence per walk -> `texts` (Delta)."""

from __future__ import annotations

import pyarrow as pa

from kgwalk.config import Config
from kgwalk.ray_runtime import init_ray, read_delta, write_dataset
from kgwalk.storage import open_table, read_table
from kgwalk.verbalize.base import make_verbalizer
from kgwalk.walks.labels import LabelLookup

TEXTS_SCHEMA = pa.schema([("walk_id", pa.int64()), ("root", pa.int64()), ("text", pa.string())])
_WALK_COLUMNS = ["walk_id", "root", "nodes", "rels", "inverse"]


def _verbalize_batch(batch: pa.Table, name: str, phrases: dict[str, list[str]], labels: LabelLookup) -> pa.Table:
    # the template verbalizer costs nothing to build
    texts = make_verbalizer(name, phrases).verbalize(labels.attach(batch))
    return pa.table({"walk_id": batch["walk_id"], "root": batch["root"], "text": texts}, schema=TEXTS_SCHEMA)


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
    ds = read_delta(cfg.table("walks"), _WALK_COLUMNS, cfg.verbalize.batch_size, "walks").map_batches(
        _verbalize_batch,
        fn_kwargs={"name": cfg.verbalize.verbalizer, "phrases": cfg.verbalize.phrases, "labels": labels},
        batch_format="pyarrow",
        batch_size=cfg.verbalize.batch_size,
    )
    return write_dataset(ds, cfg.table("texts"), TEXTS_SCHEMA)
