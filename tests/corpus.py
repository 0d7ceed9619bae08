"""Helpers for refresh tests: a small-graph build in this process, and a corpus's full content.

`build_in_process` builds every table through the stages' own in-process paths, the ones a
refresh runs (kgwalk.stages: walks.walk_roots, texts.verbalize_here, vectors.embed_here; ingest
and index run in process anyway), without starting Spark or Ray, and records state as the stages
do, so a property test can afford two builds per seed. One test (test_refresh_cli) uses the real
Spark/Ray build.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kgwalk import stages
from kgwalk.config import Config, load_config
from kgwalk.embed.model import make_embedder
from kgwalk.embed.pipeline import VECTORS_SCHEMA
from kgwalk.embed.settings import stores_vectors
from kgwalk.index.store import collection_names, open_store, walk_datatype
from kgwalk.stages.texts import verbalize_here
from kgwalk.stages.vectors import embed_here
from kgwalk.stages.walks import walk_roots
from kgwalk.storage import read_table, write_table
from kgwalk.verbalize.pipeline import TEXTS_SCHEMA, WALK_COLUMNS
from kgwalk.walks import WalkSpec
from kgwalk.walks.spark_job import load_graph
from kgwalk.walks.table import WALKS_SCHEMA

MODEL = "hashing-64"


def config(warehouse: Path, kg: Path | None = None, overrides: list[str] | None = None) -> Config:
    """The refresh tests' config. Their small change sets remove missing edges on purpose, a high
    share of the set: the rejected-ratio gate allows half (tests/test_quality.py goes beyond)."""
    values = {"kg.path": str(kg)} if kg else {}
    base = [f"embed.model={MODEL}", "quality.max_rejected_ratio=0.5"]
    return load_config(None, base + list(overrides or []), name="t", warehouse=str(warehouse), **values)


def walks_in_process(cfg: Config) -> None:
    """Ingest and walks (every root's, by the walks stage's in-process engine), recorded as the stages do, without Spark."""
    stages.run_ingest(cfg)
    graph = load_graph(cfg)
    walks = walk_roots(cfg, graph, graph.node_ids, WalkSpec.from_conf(cfg.walks))
    stages.recorded(cfg, stages.WALKS, lambda: write_table(cfg.table("walks"), walks.cast(WALKS_SCHEMA)))


def build_in_process(cfg: Config) -> None:
    walks_in_process(cfg)
    texts = verbalize_here(cfg, read_table(cfg.table("walks"), WALK_COLUMNS))
    stages.recorded(cfg, stages.TEXTS, lambda: write_table(cfg.table("texts"), (b for part in texts for b in part.to_batches()), schema=TEXTS_SCHEMA))
    vectors = embed_here(cfg, read_table(cfg.table("texts"))) if stores_vectors(cfg.embed, cfg.index.backend) else VECTORS_SCHEMA.empty_table()
    stages.recorded(cfg, stages.VECTORS, lambda: write_table(cfg.table("vectors"), vectors))
    stages.run_index(cfg)


def built_kg(folder: Path, triples: list[tuple[str, str, str]]) -> tuple[Path, Path]:
    """(folder, KG file): these (head, relation, tail) triples as a pipe-separated file in
    `folder`, built there in this process with the test config."""
    kg = folder / "kg.txt"
    kg.write_text("".join(f"{h}|{r}|{t}\n" for h, r, t in triples))
    build_in_process(config(folder, kg))
    return folder, kg


def _rows(cfg: Config, table: str) -> list[str]:
    return sorted(map(str, read_table(cfg.table(table)).to_pylist()))


def index_points(cfg: Config, walk_ids: np.ndarray, entity_ids: np.ndarray) -> dict[str, object]:
    """The live index's points (id, payload, vector bytes) for these walk and entity ids."""
    out: dict[str, object] = {}
    store = open_store(cfg)
    nodes_c, walks_c = collection_names(cfg)
    for name, collection, ids in (("walk points", walks_c, walk_ids), ("node points", nodes_c, entity_ids)):
        got, vectors, payloads = store.retrieve(collection, np.sort(ids))
        out[name] = (got.tolist(), [str(sorted(p.items())) for p in payloads], store.count(collection))
        out[name + " vectors"] = vectors.tobytes()
    store.close()
    return out


def corpus_ids(cfg: Config) -> tuple[np.ndarray, np.ndarray]:
    return (read_table(cfg.table("walks"), ["walk_id"]).column("walk_id").to_numpy(),
            read_table(cfg.table("entities"), ["id"]).column("id").to_numpy())


def corpus(cfg: Config) -> dict[str, object]:
    """Everything a refresh must reproduce: KG and corpus tables as row sets, and every index
    point (id, payload, vector bytes), read back from the live index."""
    out: dict[str, object] = {t: _rows(cfg, t) for t in ("edges", "entities", "relations", "walks", "texts")}
    return out | index_points(cfg, *corpus_ids(cfg))


def embedder_output_matches(cfg: Config) -> bool:
    """Walk vectors in the index equal the embedder's output for the walk's text, bit for bit as
    the index stores it (index.vector_datatype=float16 rounds it); TurboQuant codes, which only
    Qdrant decodes, within their rounding (a cosine of .999 with turbo8, .98 with turbo4 at the tests' 64 dimensions: every
    other text's vector lies far further off)."""
    texts = read_table(cfg.table("texts")).sort_by("walk_id")
    store = open_store(cfg)
    walks_c = collection_names(cfg)[1]
    got, vectors, _ = store.retrieve(walks_c, texts.column("walk_id").to_numpy())
    expected = store.stored(walks_c, make_embedder(cfg.embed.model, precision=cfg.embed.precision).encode(texts.column("text").to_pylist()))
    exact = store.keeps_exactly(walks_c)
    store.close()
    if len(got) != texts.num_rows:
        return False
    if exact:
        return np.array_equal(vectors, expected)
    cosines = (vectors * expected).sum(axis=1) / np.linalg.norm(vectors, axis=1)
    return bool(cosines.min() >= (0.999 if walk_datatype(cfg.index) == "turbo8" else 0.98))


class EchoModel:
    """A chat model (kgwalk.llm's interface) that records the prompts it is given and answers nothing."""

    def __init__(self) -> None:
        self.prompts: list = []

    def chat(self, conversations: list) -> list[str]:
        self.prompts += conversations
        return ["" for _ in conversations]
