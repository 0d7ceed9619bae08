"""Embedders: texts in, L2-normalized float32 vectors out."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Protocol, get_args

import numpy as np

from kgwalk.config import EmbedPrecision
from kgwalk.embed.common import resolve_model, unit_rows
from kgwalk.errors import KgwalkError

_WORD = re.compile(r"\w+")


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, unit-norm rows."""
        ...


# Sentences per forward pass when `embed.batch_size` is 0: on a CPU small batches keep the
# activations in cache (32 ran 10-25% faster than 256 here); a GPU wants large ones.
AUTO_BATCH = {"cpu": 32, "cuda": 1024}


def resolve_batch_size(batch_size: int, device: str) -> int:
    return batch_size or AUTO_BATCH["cuda" if device.startswith("cuda") else "cpu"]


def cpu_has_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 natively (AMX or AVX512-BF16), where torch's oneDNN
    kernels run MiniLM about 2.6x faster than float32 at a cosine of 0.99998 to it."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return bool(re.search(r"\b(amx_bf16|avx512_bf16)\b", flags))


def resolve_precision(precision: str, device: str) -> str:
    """`auto`: float16 on CUDA, bfloat16 on CPUs that have it, else float32. `int8` is CPU only."""
    if precision not in get_args(EmbedPrecision):  # conf's was checked as it loaded; this guards callers in code
        raise KgwalkError(f"embed.precision: expected one of {', '.join(get_args(EmbedPrecision))}, got {precision!r}")
    if precision == "int8" and device != "cpu":
        raise KgwalkError(f"embed.precision=int8 runs on ONNX Runtime's CPU kernels; embed.device is {device!r}")
    if precision != "auto":
        return precision
    if device.startswith("cuda"):
        return "float16"
    return "bfloat16" if device == "cpu" and cpu_has_bf16() else "float32"


class SentenceTransformerEmbedder:
    def __init__(
        self, model: str = "all-MiniLM-L6-v2", device: str = "cpu", threads: int = 0, batch_size: int = 0, precision: str = "auto"
    ) -> None:
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
        self.precision = resolve_precision(precision, device)
        if self.precision != "float32":
            self.model.to(getattr(torch, self.precision))
        self.name = model
        self.dim = int(self.model.get_embedding_dimension())
        self.batch_size = resolve_batch_size(batch_size, device)

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(texts, batch_size=self.batch_size, convert_to_tensor=True, show_progress_bar=False)
        vectors = vectors.float().cpu().numpy()
        # normalized in float32 here: a half-precision norm leaves rows ~1e-3 off unit length
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)


class HashingEmbedder:
    """`hashing-<dim>`: signed feature hashing of lowercase word unigrams and bigrams, L2-normalized.

    No model, no semantics beyond shared words: a deterministic, ~100x faster stand-in for tests,
    benchmarks of everything but the model, and smoke runs. Not for retrieval quality.
    """

    def __init__(self, dim: int) -> None:
        if dim < 8:
            raise KgwalkError(f"embed.model: hashing-<dim> needs dim >= 8, got {dim}")
        self.name = f"hashing-{dim}"
        self.dim = dim

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for feature in words + [a + " " + b for a, b in zip(words, words[1:])]:
                h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if h >> 63 else -1.0
        return unit_rows(out)


def make_embedder(model: str, device: str = "cpu", threads: int = 0, batch_size: int = 0, precision: str = "auto") -> Embedder:
    """The embedder `embed.*` describes: hashing-<dim>, a static model (kgwalk/embed/static.py), the
    model on ONNX Runtime with int8 weights (precision int8), else the model on PyTorch
    (sentence-transformers)."""
    from kgwalk.embed.static import StaticEmbedder, is_static

    if is_static(model):
        if device != "cpu":
            raise KgwalkError(f"embed.model={model} runs on the CPU (numpy, no transformer); embed.device is {device!r}: "
                              "use embed.device=cpu, or a transformer model such as all-MiniLM-L6-v2 on a GPU")
        if precision not in ("auto", "float32"):
            raise KgwalkError(f"embed.precision={precision} applies to transformer models; a static model computes in float32")
        return StaticEmbedder(model, batch_size)
    if model.startswith("hashing-"):
        dim = model.removeprefix("hashing-")
        if not dim.isdigit():
            raise KgwalkError(f"embed.model: expected hashing-<dim>, e.g. hashing-384, got {model!r}")
        return HashingEmbedder(int(dim))
    if resolve_precision(precision, device) == "int8":
        from kgwalk.embed.onnx import OnnxEmbedder

        return OnnxEmbedder(model, threads=threads, batch_size=resolve_batch_size(batch_size, device), int8=True)
    return SentenceTransformerEmbedder(model, device, threads, batch_size, precision)
