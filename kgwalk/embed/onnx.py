"""Sentence-transformers models on ONNX Runtime (CPU), exported once.

Two uses:
- the query encoder (float32): one question at a time, PyTorch's per-operator overhead is most of
  MiniLM's cost on a CPU; ONNX Runtime runs the fused graph in a fraction of it (`bench/query.py`
  measures both), with vectors equal to PyTorch's float32 ones within rounding (cosine > 0.99999,
  tested). Walk vectors stay whatever the embed stage made; only the question side changes.
- the embed stage with `embed.precision: int8`: the fused graph with int8 weights (dynamic
  quantization, per channel). On CPUs without bfloat16 units it is the only way past float32's
  arithmetic rate; `bench/embed.py` measures speed and cosine, `bench/embed_quality.py` retrieval.

The export (mean pooling and normalization included) is cached under the user's cache folder
(`$XDG_CACHE_HOME/kgwalk/onnx`, else `~/.cache/kgwalk/onnx`), keyed by the model and the library
versions, and written atomically so concurrent first queries do not collide.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path

import numpy as np

from kgwalk.embed.common import resolve_model
from kgwalk.errors import KgwalkError
from kgwalk.storage import user_cache


def quantize_int8(fused: Path, path: Path) -> None:
    """Int8 weights (per output channel) with int8 activations quantized per batch at run time:
    per-tensor weights lose too much (cosine 0.965 to float32 against 0.992 on MetaQA walks)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    quantize_dynamic(str(fused), str(tmp), weight_type=QuantType.QInt8, per_channel=True, extra_options={"DefaultTensorType": 1})
    os.replace(tmp, path)


def export_onnx(st, path: Path) -> None:
    """A SentenceTransformer (Transformer -> mean pooling -> Normalize) as one fused ONNX graph at `path`."""
    import torch
    from onnxruntime.transformers import optimizer

    class Pooled(torch.nn.Module):  # Transformer -> mean pooling -> Normalize, as the model's own modules do
        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            hidden = self.bert(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            return torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1)

    bert = st[0].auto_model.eval()
    sample = st.tokenizer(["a b", "c"], return_tensors="pt", padding=True)
    raw = path.with_suffix(f".{os.getpid()}.raw.onnx")
    fused = path.with_suffix(f".{os.getpid()}.tmp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Pooled(bert), (sample["input_ids"], sample["attention_mask"]), str(raw), input_names=["ids", "mask"],
            output_names=["vector"], dynamic_axes={"ids": {0: "batch", 1: "seq"}, "mask": {0: "batch", 1: "seq"}},
            opset_version=17, dynamo=False,
        )
        config = bert.config
        optimizer.optimize_model(str(raw), model_type="bert", num_heads=config.num_attention_heads,
                                 hidden_size=config.hidden_size).save_model_to_file(str(fused))
    raw.unlink()
    os.replace(fused, path)


def _export_path(model: str, cache_dir: str | Path | None) -> Path:
    """Where `model`'s fused export is cached: keyed by the model's folder and the versions of torch (which exports) and ONNX
    Runtime (which fuses), read from package metadata so that a cached export loads without importing torch."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        versions = f"{version('torch')}|{version('onnxruntime')}"
    except PackageNotFoundError as e:
        raise KgwalkError(f"ONNX Runtime or torch is missing ({e}): install onnxruntime, or use PyTorch "
                          "(--set query.encoder=torch / embed.precision=float32)") from None
    key = hashlib.sha256(f"{resolve_model(model)}|{versions}".encode()).hexdigest()[:16]
    return Path(cache_dir or user_cache("onnx")) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', model)}-{key}.onnx"


def _fast_tokenizer(folder: Path, max_length: int):
    """The model's own tokenizer.json (what its fast tokenizer runs), truncating and padding as sentence-transformers does."""
    import json

    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    pad = json.loads((folder / "tokenizer_config.json").read_text()).get("pad_token", "[PAD]")
    tokenizer.enable_truncation(max_length)
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id(pad), pad_token=pad)
    return tokenizer


class OnnxEmbedder:
    """A mean-pooled sentence-transformers model on ONNX Runtime (CPU): float32, or int8 weights.

    Exporting needs torch and sentence-transformers once; a cached export loads with ONNX Runtime and the tokenizers
    library alone (a CLI question's encoder in well under a second, where importing torch took seconds)."""

    def __init__(
        self, model: str, cache_dir: str | Path | None = None, threads: int = 0, batch_size: int = 64, int8: bool = False,
        *, spinning: bool = True,
    ) -> None:
        """`spinning=False` for a question encoder: ONNX Runtime's threads otherwise spin on the cores after each run and
        slow the search that follows (2 cores, MetaQA dev: retrieval p99 30-34 ms spinning, 14-22 ms not; p50 0.3-1 ms lower)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise KgwalkError(f"ONNX Runtime is missing ({e}): install onnxruntime, or use PyTorch "
                              "(--set query.encoder=torch / embed.precision=float32)") from None
        folder = Path(resolve_model(model))
        path = _export_path(model, cache_dir)
        if not path.exists():
            self._export(model, path)
        if int8:
            fused, path = path, path.with_name(path.stem + "-int8.onnx")
            if not path.exists():
                quantize_int8(fused, path)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or os.cpu_count() or 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
        self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        import json

        self.max_length = int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
        self.tokenizer = _fast_tokenizer(folder, self.max_length)
        self.batch_size = batch_size
        self.name = model
        # part of what names its cached vectors (encoder_identity). int8 activations are scaled per run: a text batched with
        # others gets a vector that moves with its batch mates (up to 0.04 a component), one run alone always the same
        self.precision = ("int8" if batch_size > 1 else "int8, one text a run") if int8 else "float32"
        width = self.session.get_outputs()[0].shape[-1]  # the export's vector width; the model's hidden size where left symbolic
        self.dim = width if isinstance(width, int) else int(json.loads((folder / "config.json").read_text())["hidden_size"])

    @staticmethod
    def _export(model: str, path: Path) -> None:
        try:
            import transformers
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise KgwalkError(f"exporting {model} to ONNX needs torch and sentence-transformers ({e})") from None
        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        try:
            st = SentenceTransformer(resolve_model(model), device="cpu")
        except OSError as e:
            raise KgwalkError(f"embed.model: cannot load {model!r}: {str(e).splitlines()[0]}") from None
        modules = [type(m).__name__ for m in st]
        if modules[:2] != ["Transformer", "Pooling"] or getattr(st[1], "pooling_mode", None) != "mean" or set(modules[2:]) - {"Normalize"}:
            raise KgwalkError(f"ONNX Runtime runs mean-pooled models only; {model!r} is {' -> '.join(modules)} "
                              "(--set query.encoder=torch / embed.precision=float32)")
        path.parent.mkdir(parents=True, exist_ok=True)
        export_onnx(st, path)

    def encode(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, unit-norm rows."""
        out = np.zeros((len(texts), self.dim), np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")  # batches of similar length pad little
        for start in range(0, len(texts), self.batch_size):
            rows = order[start:start + self.batch_size]
            batch = self.tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in batch], np.int64)
            mask = np.array([e.attention_mask for e in batch], np.int64)
            out[rows] = self.session.run(None, {"ids": ids, "mask": mask})[0]
        return out
