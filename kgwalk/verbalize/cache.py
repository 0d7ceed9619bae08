"""Content-addressed sentence cache for LLM verbalizers, shared by every KG of a warehouse.

A row maps a cache key (the verbalizer's key and the walk's exact prompt, see LLMVerbalizer) to
the sentence the model produced. Changing the model, prompt or sampling changes every key, so
nothing stale is served; the same walk content in another build, a refresh or another KG is a hit.
Every walk asked of the model is cached: its sentence, or null where the reply was unusable (the
template sentence is then made anew, so a phrase change applies to it). Rows are appended as the
stage goes, so an interrupted LLM run resumes from what it had produced.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.config import Config
from kgwalk.kg.ids import positions
from kgwalk.storage import scan, table_exists, warehouse_cache, write_table

CACHE_SCHEMA = pa.schema([("verbalizer_key", pa.int64()), ("key", pa.int64()), ("text", pa.string())])


def cache_path(cfg: Config) -> str:
    return str(warehouse_cache(cfg.warehouse) / "verbalize")


class SentenceCache:
    """The cached sentences of one verbalizer, looked up by key (a sorted array; binary search)."""

    def __init__(self, keys: np.ndarray, texts: pa.Array) -> None:
        self.keys = keys
        self.texts = texts

    @classmethod
    def load(cls, path: str, verbalizer_key: int) -> SentenceCache:
        if not table_exists(path):
            return cls(np.empty(0, np.int64), pa.array([], pa.string()))
        rows = scan(path, columns=["key", "text"], predicate=f"verbalizer_key = {int(verbalizer_key)}").read_all()
        keys, first = np.unique(rows.column("key").to_numpy(), return_index=True)  # a key written twice: same text
        return cls(keys, rows.column("text").combine_chunks().take(pa.array(first)) if len(keys) else pa.array([], pa.string()))

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, keys: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """(found mask, the found keys' texts in order)."""
        pos, found = positions(keys, self.keys)
        return found, self.texts.take(pa.array(pos[found]))


def append_sentences(path: str, verbalizer_key: int, keys: pa.Array, texts: pa.Array) -> None:
    if len(keys) == 0:
        return
    rows = pa.table({"verbalizer_key": pc.cast(pa.repeat(pa.scalar(verbalizer_key), len(keys)), pa.int64()), "key": keys, "text": texts})
    write_table(path, rows.cast(CACHE_SCHEMA), mode="append" if table_exists(path) else "overwrite")
