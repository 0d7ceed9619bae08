"""GGUF model files for the transformers backend (`llm.model: path/to/model.gguf`).

transformers reads a GGUF file by dequantizing every tensor, which takes half a minute even for a
135M model on 2 cores. The dequantized model is therefore kept in the user cache
(`$XDG_CACHE_HOME/kgwalk/gguf`, else `~/.cache/kgwalk/gguf`) as a safetensors folder, keyed by the
file (path, size, mtime) and the library versions that produced it; later loads read that folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from importlib.metadata import version
from pathlib import Path

from kgwalk.errors import KgwalkError
from kgwalk.storage import user_cache


def is_gguf(model: str) -> bool:
    return model.lower().endswith(".gguf")


def check_gguf_file(model: str, setting: str) -> Path:
    path = Path(model).expanduser()
    if not path.is_file():
        raise KgwalkError(f"{setting}.model: no GGUF file at {model!r}")
    return path.resolve()


def cache_folder(file: Path, cache_dir: Path) -> Path:
    """Where `file`'s dequantized model lives: a new file, or new libraries, get a new folder."""
    stat = file.stat()
    versions = "|".join(version(p) for p in ("transformers", "gguf", "torch"))
    identity = f"{file}|{stat.st_size}|{stat.st_mtime_ns}|{versions}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    return cache_dir / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', file.stem)}-{key}"


def dequantized(model: str, setting: str, cache_dir: Path | None = None) -> str:
    """The folder holding `model`'s (a .gguf file) dequantized weights and tokenizer, made on
    first use. Written to a temporary folder and renamed into place, so a reader never sees a
    partial one and two processes dequantizing at once (e.g. two Ray actors) both end up fine."""
    file = check_gguf_file(model, setting)
    target = cache_folder(file, cache_dir or user_cache("gguf"))
    if target.is_dir():
        return str(target)
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    try:
        tokenizer = AutoTokenizer.from_pretrained(file.parent, gguf_file=file.name)
        weights = AutoModelForCausalLM.from_pretrained(
            file.parent, gguf_file=file.name, quantization_config=GgufConfig(dequantize=True))
    except (OSError, ValueError, KeyError, RuntimeError) as e:
        raise KgwalkError(f"{setting}.model: cannot read GGUF file {model!r}: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    # Dequantized, the weights are plain tensors; transformers still marks the model as GGUF-quantized
    # and refuses to save it, so the mark goes.
    weights.hf_quantizer = None
    weights.config.quantization_config = None
    del weights.config.quantization_config
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}-"))
    try:
        weights.save_pretrained(partial)  # safetensors
        tokenizer.save_pretrained(partial)
        os.rename(partial, target)
    except OSError as e:
        if not target.is_dir():  # not another process's rename winning the race: a real failure
            raise KgwalkError(f"{setting}.model: cannot cache the dequantized {model!r} in {target.parent}: {e}") from None
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return str(target)
