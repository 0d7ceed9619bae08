"""Static embedders: one vector per token, averaged over a sentence's tokens (model2vec).

No transformer runs at encode time, so a static model embeds walk sentences a hundred times faster
than MiniLM on a CPU and encodes a question without torch or ONNX Runtime; it ranks walks less
well (bench/results/embed_quality_static.md). Three ways to name one in `embed.model`:

- `static`: distilled from the bundled all-MiniLM-L6-v2 (256 dimensions), once;
- `static:<sentence-transformers model name or folder>`: distilled from that model, once;
- a folder holding a static model (model2vec's `save_pretrained`, or a sentence-transformers
  model whose first module is StaticEmbedding), with or without `static:`: loaded as it is.

Distillation (model2vec.distill: every vocabulary token through the model, then PCA; no data) takes
about a minute here and needs torch; its result is cached under the user's cache folder
(`$XDG_CACHE_HOME/kgwalk/static`, else `~/.cache/kgwalk/static`), keyed by the source model and
the library versions. One process distills at a time (a file lock per entry; the others wait and
load its result) and publishes by renaming a finished folder, so a killed distillation leaves no
entry; an entry that fails to load is distilled again.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import unicodedata
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kgwalk.embed.common import resolve_model, unit_rows
from kgwalk.errors import KgwalkError
from kgwalk.storage import user_cache

if TYPE_CHECKING:
    import pyarrow as pa

STATIC = "static"
DEFAULT_SOURCE = "all-MiniLM-L6-v2"
DISTILL_DIMS = 256  # PCA components of a distilled model (fewer if the source has fewer dimensions)
# Sentences per model2vec batch when `embed.batch_size` is 0 (model2vec's own default).
STATIC_BATCH = 1024
# Versions that change what a distillation produces: the cache key includes them.
_DISTILL_PACKAGES = ("model2vec", "transformers", "tokenizers", "torch")


def is_static_folder(path: str | Path) -> bool:
    """A saved model2vec model, or a sentence-transformers model whose first module is StaticEmbedding."""
    folder = Path(path)
    try:
        if json.loads((folder / "config.json").read_text()).get("model_type") == "model2vec":
            return True
    except (OSError, ValueError, AttributeError):
        pass
    try:
        modules = json.loads((folder / "modules.json").read_text())
        return str(modules[0].get("type", "")).endswith("StaticEmbedding")
    except (OSError, ValueError, AttributeError, IndexError, KeyError, TypeError):
        return False


def is_static(model: str) -> bool:
    """Whether `embed.model` names a static embedder (see the module docstring)."""
    return model == STATIC or model.startswith(STATIC + ":") or is_static_folder(model)


def static_source(model: str) -> str:
    """What a static `embed.model` names: a static model's folder, or the model to distill."""
    if model == STATIC:
        return DEFAULT_SOURCE
    source = model.removeprefix(STATIC + ":")
    if not source:
        raise KgwalkError("embed.model: expected static, static:<sentence-transformers model or folder>, "
                          "or a static model's folder; got 'static:'")
    return os.path.expanduser(source)


def _package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "-"


def source_fingerprint(resolved: str) -> str:
    """The source model's identity: its name, or for a folder its files' sizes and mtimes too
    (a model rewritten in place gets a new entry)."""
    folder = Path(resolved)
    if not folder.is_dir():
        return resolved
    files = sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file())
    return f"{folder.resolve()}|{files}"


def cache_entry(source: str, root: Path | None = None) -> Path:
    """Where the distillation of `source` is cached (whether or not it exists yet)."""
    resolved = resolve_model(source)
    versions = [f"{name}={_package_version(name)}" for name in _DISTILL_PACKAGES]
    key = hashlib.sha256("|".join([source_fingerprint(resolved), str(DISTILL_DIMS), *versions]).encode()).hexdigest()[:16]
    return (root or user_cache(STATIC)) / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', source)[-80:]}-{key}"


def _load(folder: Path):
    from model2vec import StaticModel

    return StaticModel.from_pretrained(folder, force_download=False)


def _load_saved(folder: Path):
    """A model this module saved (a cache entry: save_pretrained's files in model2vec's own layout),
    made from its files by StaticModel itself. from_pretrained reads the same three files, but
    first imports model2vec.persistence, whose Hugging Face Hub and model-card modules took 0.17 s
    of a 2 s CLI query."""
    from model2vec import StaticModel
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    config = json.loads((folder / "config.json").read_text())
    tensors = load_file(folder / "model.safetensors")
    length = {"max_length": config["max_length"]} if "max_length" in config else {}  # else StaticModel's default, as from_pretrained
    return StaticModel(vectors=tensors["embeddings"], tokenizer=Tokenizer.from_file(str(folder / "tokenizer.json")), config=config,
                       normalize=bool(config.get("normalize", False)), weights=tensors.get("weights"), token_mapping=tensors.get("mapping"),
                       **length)


def _load_entry(entry: Path):
    """The cached model, or None if the entry is missing or does not load (truncated, emptied)."""
    if not entry.is_dir():
        return None
    try:
        return _load_saved(entry)
    except Exception:  # noqa: BLE001 - whatever fails to read a cache entry, distilling again repairs it
        return None


def distill_into(source: str, folder: Path) -> None:
    """Distill `source` (a sentence-transformers model) into a model2vec folder at `folder`."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import transformers
        from model2vec.distill import distill
    except ImportError as e:
        raise KgwalkError(f"embed.model=static needs torch and transformers to distill a model once ({e})") from None
    from unittest import mock  # here: it imports asyncio, a CLI query's 15 ms for nothing

    from model2vec.distill import inference
    from tqdm import tqdm

    transformers.utils.logging.disable_progress_bar()
    transformers.utils.logging.set_verbosity_error()
    # model2vec has no switch for its per-token progress bar (a screenful on a non-terminal stderr)
    with mock.patch.object(inference, "tqdm", functools.partial(tqdm, disable=True)):
        try:
            model = distill(model_name=resolve_model(source), pca_dims=DISTILL_DIMS, quantize_to="float32")
        except (OSError, ValueError) as e:  # not found, offline, not a transformer model
            raise KgwalkError(f"embed.model: cannot distill {source!r}: {str(e).splitlines()[0]}") from None
    model.save_pretrained(folder)


def distilled_model(source: str, root: Path | None = None):
    """`source` distilled to a static model: from the cache, or distilled now and cached."""
    entry = cache_entry(source, root)
    model = _load_entry(entry)
    if model is not None:
        return model
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.with_name(entry.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
        model = _load_entry(entry)  # another process may have distilled it while we waited
        if model is not None:
            return model
        if entry.exists():  # there but unreadable: set it aside, then remove it
            broken = entry.with_name(f"{entry.name}.{os.getpid()}.broken")
            entry.rename(broken)
            shutil.rmtree(broken, ignore_errors=True)
        print(f"[kgwalk] distilling a static model from {source} (once; cached in {entry.parent})", file=sys.stderr, flush=True)
        tmp = Path(tempfile.mkdtemp(prefix=f"{entry.name}.", suffix=".tmp", dir=entry.parent))
        try:
            distill_into(source, tmp)
            tmp.rename(entry)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return _load_saved(entry)


def load_static_model(model: str, root: Path | None = None):
    """The model2vec StaticModel an `embed.model` names (see the module docstring)."""
    source = static_source(model)
    if is_static_folder(source):
        try:
            return _load(Path(source))
        except Exception as e:  # noqa: BLE001 - a broken user folder: one line, not model2vec's traceback
            raise KgwalkError(f"embed.model: cannot load the static model in {source}: {str(e).splitlines()[0]}") from None
    if source.startswith(("/", "./", "../", "~")) and not Path(source).expanduser().is_dir():
        raise KgwalkError(f"embed.model: no model folder at {source}")
    return distilled_model(source, root)


# ASCII text as BERT's normalizer and pre-tokenizer see it: control characters dropped (tab and
# newlines are whitespace), then words of letters and digits and single punctuation characters
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ASCII_PIECE = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")


class WordPieces:
    """A sentence's token ids as model2vec's tokenizer gives them, a word at a time from a cache.

    Tokenizing took 20-25 us a sentence here whatever the batch (the tokenizers library's cost per
    sentence), most of a static model's encoding. A BERT WordPiece tokenizer (lowercasing
    normalizer, BertPreTokenizer) splits a text at whitespace and punctuation and tokenizes each
    word on its own, so the ids of a sentence are its words' ids in order. Sentences of ASCII
    characters are split here and their words' ids cached; any other sentence, and one naming a
    special token ("[UNK]"), goes through the tokenizer as it is. `usable` says whether the
    model's tokenizer is such a one; tests/test_static_embed.py checks the ids are the
    tokenizer's."""

    def __init__(self, model: Any, max_words: int = 1_000_000) -> None:
        self.model = model
        self.max_words = max_words  # the cache is emptied when it holds more
        self._ids: dict[str, list[int]] = {}
        self._specials = [t.content for t in model.tokenizer.get_added_tokens_decoder().values()]
        self.chars = model.max_length * model.median_token_length if model.max_length else None  # model2vec's cut before tokenizing
        normalizer = json.loads(model.tokenizer.to_str()).get("normalizer") or {}
        self._strips_accents = normalizer.get("strip_accents") in (None, True)  # None: as lowercase says (usable: it does)

    @staticmethod
    def usable(model: Any) -> bool:
        t = json.loads(model.tokenizer.to_str())
        normalizer, pre = t.get("normalizer") or {}, t.get("pre_tokenizer") or {}
        return bool(t.get("model", {}).get("type") == "WordPiece" and normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase")
                and pre.get("type") == "BertPreTokenizer" and model.embedding.dtype in (np.float32, np.float16))

    def __call__(self, texts: list[str]) -> list[list[int]]:
        cut = self.model.max_length
        ids = self.uncut([t[: self.chars] for t in texts] if self.chars else list(texts))
        return [row[:cut] for row in ids] if cut else ids

    def uncut(self, texts: list[str]) -> list[list[int]]:
        """The texts' ids, with no cut of their characters; one of more tokens than the model's max_length may come
        back whole or cut to it (the tokenizer's own truncation), so a caller tells those by their count."""
        words: dict[int, list[str]] = {}
        other = []
        for i, text in enumerate(texts):
            plain = self._plain(text)
            if plain is not None:
                words[i] = _ASCII_PIECE.findall(_ASCII_CONTROL.sub("", plain).lower())
            else:
                other.append(i)
        self._learn({w for ws in words.values() for w in ws})
        out = dict(zip(other, self.model.tokenize([texts[i] for i in other]))) if other else {}
        for i, ws in words.items():
            out[i] = [t for w in ws for t in self._ids[w]]
        return [out[i] for i in range(len(texts))]

    def learn(self, texts: pa.Array) -> int:
        """Cache the words of these texts (those `uncut` splits here), up to half the cache's room; returns the words
        cached."""
        words: set[str] = set()
        room = self.max_words // 2
        for start in range(0, len(texts), 100_000):  # joined a chunk at a time: one regex pass over each
            chunk = [plain for plain in map(self._plain, texts.slice(start, 100_000).to_pylist()) if plain]
            words.update(_ASCII_PIECE.findall(_ASCII_CONTROL.sub("", "\n".join(chunk)).lower()))
            if len(words) > room:
                return 0
        self._learn(words)
        return len(words)

    def _plain(self, text: str | None) -> str | None:
        """The text whose words this cache splits as the tokenizer would: ASCII, or ASCII once its accents are stripped
        (`_unaccented`), with no special token's text in it (an ASCII special stays in the text without its accents);
        None where the tokenizer must see it."""
        plain = (text if text.isascii() else self._unaccented(text)) if text else text
        return None if plain is None or any(s in plain for s in self._specials) else plain

    def _unaccented(self, text: str) -> str | None:
        """A text as the normalizer sees it where that is ASCII: letters with accents only ("Olène" -> "Olene", 5% of
        the 10M-edge KG's labels, each question a tokenizer call without this); None otherwise."""
        if not self._strips_accents:
            return None
        plain = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
        return plain if plain.isascii() else None

    def _learn(self, words: set[str]) -> None:
        """Cache the ids of those of `words` not cached yet, tokenized in one call (emptying a full cache first)."""
        unknown = words.difference(self._ids)
        if not unknown:
            return
        if len(self._ids) + len(unknown) > self.max_words:
            self._ids.clear()
            unknown = words
        batch = sorted(unknown)
        self._ids.update(zip(batch, self.model.tokenize(batch)))


class StaticEmbedder:
    """Texts in, unit-norm float32 vectors out: the mean of their tokens' vectors, as model2vec's
    StaticModel.encode makes it, with the token ids from `WordPieces` where it applies."""

    def __init__(self, model: str = STATIC, batch_size: int = 0, cache: Path | None = None) -> None:
        self.model = load_static_model(model, cache)
        self.name = model
        self.dim = int(self.model.dim)
        self.batch_size = batch_size or STATIC_BATCH
        self._pieces = WordPieces(self.model) if WordPieces.usable(self.model) else None

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dim), np.float32)
        if self._pieces is None:
            # One thread, in order: the embed stage runs one actor per CPU, and a sentence's vector
            # must not depend on the batch it came in (a refresh re-embeds a subset).
            vectors = self.model.encode(texts, batch_size=self.batch_size, normalize=False, use_multiprocessing=False)
            return unit_rows(np.asarray(vectors, np.float32))
        return unit_rows(self._sums(self._pieces(texts)))

    @property
    def has_word_pieces(self) -> bool:
        """Whether its token ids come from `WordPieces` (what token_sums needs)."""
        return self._pieces is not None

    def learn_words(self, texts: pa.Array) -> int:
        """Tokenize the words of these texts now, in one call (`WordPieces.learn`): a question's words are then found
        in the cache. Returns the words cached (0: too many for it, or the ids do not come from WordPieces)."""
        return self._pieces.learn(texts) if self._pieces is not None else 0

    def token_sums(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """Each text's token vectors summed and its token count, before any cut to the model's length (see `limits`);
        None where the ids do not come from `WordPieces`. Texts that meet at whitespace or punctuation have the
        tokens of their concatenation: the sum of their sums is its vector's direction (kgwalk/query/walk_sums.py)."""
        if self._pieces is None:
            return None
        ids = self._pieces.uncut(texts)
        return self._sums(ids), np.fromiter(map(len, ids), np.int64, len(ids))

    @property
    def limits(self) -> tuple[int | None, int | None]:
        """(characters, tokens) past which the model cuts a text before encoding it: None, none."""
        return (self._pieces.chars if self._pieces else None), self.model.max_length

    def _sums(self, ids: list[list[int]]) -> np.ndarray:
        """Each sentence's token vectors summed (its mean's direction), a sentence's alone whatever the batch."""
        m = self.model
        lengths = np.fromiter(map(len, ids), np.int64, len(ids))
        flat = np.fromiter((i for row in ids for i in row), np.int64, int(lengths.sum()))
        starts = np.cumsum(lengths) - lengths
        sums = np.zeros((len(ids), self.dim), np.float32)
        for length in np.unique(lengths[lengths > 0]):  # sentences of one length at a time, as a (sentences, length) block
            rows = np.flatnonzero(lengths == length)
            block = flat[starts[rows][:, None] + np.arange(length)]
            vectors = np.asarray(m.embedding[block if m.token_mapping is None else m.token_mapping[block]], np.float32)
            if m.weights is not None:
                vectors = vectors * m.weights[block][..., None]
            sums[rows] = vectors.sum(axis=1)
        return sums
