"""The corpus's relation paths, read as questions: which distinct paths the walks table holds, each
path written as questions about its end, and those questions' vectors, cached on disk per encoder
(`$XDG_CACHE_HOME/kgwalk/synthetic`, else `~/.cache/kgwalk/synthetic`)."""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pyarrow as pa

from kgwalk.embed.model import Embedder
from kgwalk.storage import user_cache
from kgwalk.verbalize.template import TemplateVerbalizer
from kgwalk.walks.graph import fold64
from kgwalk.walks.labels import signature
from kgwalk.query.words import PLACEHOLDER, words_of

CACHE = "synthetic"


def phrase_words(relation: str, inverse: bool, verbalizer: TemplateVerbalizer) -> list[str]:
    """The content words of the relation's phrases both ways ("written by" and "wrote": one relation), in reading order
    from the step's answer."""
    return words_of(" ".join(path_questions([relation], [inverse], verbalizer)))


def path_readings(rel_labels: list[str], inverse: list[bool], verbalizers: list[TemplateVerbalizer]) -> tuple[str, ...]:
    """`path_questions` by each verbalizer in turn: from its end, from the topic, and so on."""
    return tuple(q for verbalizer in verbalizers for q in path_questions(rel_labels, inverse, verbalizer))


def path_questions(rel_labels: list[str], inverse: list[bool], verbalizer: TemplateVerbalizer) -> tuple[str, str]:
    """The relation path as two questions about its end, the topic masked as 'E': the walk
    reversed (each step's phrase inverted) and verbalized from 'what', and the walk as it is
    with 'what' at its end."""
    middle = [PLACEHOLDER] * (len(rel_labels) - 1)
    from_end = verbalizer.sentence(["what", *middle, "E"], rel_labels[::-1], [not i for i in inverse[::-1]])
    from_topic = verbalizer.sentence(["E", *middle, "what"], rel_labels, inverse)
    return from_end[:-1] + "?", from_topic[:-1] + "?"


def path_keys(walks: pa.Table, rel_ids: np.ndarray) -> np.ndarray:
    """Per walk of a walks table (columns rels, inverse), one hash of its relation path, without a
    Python loop per walk: each step is coded as (relation, direction), and the codes of a walk
    folded into one hash. `rel_ids`: every relation id, sorted."""
    rels, inverse = walks.column("rels").combine_chunks(), walks.column("inverse").combine_chunks()
    steps = rels.value_lengths().to_numpy(zero_copy_only=False)
    codes = np.searchsorted(rel_ids, rels.flatten().to_numpy()) * 2 + inverse.flatten().to_numpy(zero_copy_only=False)
    starts = np.concatenate([[0], np.cumsum(steps)[:-1]]).astype(np.int64)
    keys = fold64(np.zeros(len(steps), np.uint64), steps)
    for position in range(int(steps.max(initial=0))):
        longer = steps > position
        keys[longer] = fold64(keys[longer], codes[starts[longer] + position])
    return keys


def corpus_paths(walks: pa.Table, relations: pa.Table) -> list[tuple[list[str], list[bool]]]:
    """The distinct relation paths (relation labels, directions) of a walks table (columns rels,
    inverse), by their path_keys, in the order of their signatures. Not in the rows' order: a table
    read returns its rows in no fixed order (three reads of synth's walks, three orders), and the
    prior encodes its path questions in batches, whose make-up moves an int8 encoder's vectors (its
    activations are scaled per batch: up to 0.02 a component against one text at a time). Runs of
    one code on one corpus differed by 2 questions in 376 before."""
    label_of = dict(zip(relations.column("id").to_pylist(), relations.column("label").to_pylist()))
    rels, inverse = walks.column("rels").combine_chunks(), walks.column("inverse").combine_chunks()
    _, first = np.unique(path_keys(walks, np.sort(relations.column("id").to_numpy())), return_index=True)
    rows = pa.array(first)
    paths = [([label_of[r] for r in rs], inv) for rs, inv in zip(rels.take(rows).to_pylist(), inverse.take(rows).to_pylist())]
    return sorted(paths, key=lambda path: signature(*path))


def read_corpus_paths(walks: str, relations: str) -> list[tuple[list[str], list[bool]]]:
    """`corpus_paths` of these tables' current versions, from the table cache when found before
    (kgwalk/query/table_cache.py): reading every walk's relations took 0.25 s of a CLI query on
    MetaQA's 762K walks."""
    import sys

    from kgwalk.query.table_cache import cached_arrays
    from kgwalk.storage import read_version
    from kgwalk.walks import graph

    def build(versions: dict[str, int]) -> dict[str, np.ndarray]:
        paths = corpus_paths(read_version(walks, versions[walks], ["rels", "inverse"]), read_version(relations, versions[relations], ["id", "label"]))
        return {"steps": np.array([len(rels) for rels, _ in paths], np.int64),
                "labels": np.array([label for rels, _ in paths for label in rels], str),
                "inverse": np.array([step for _, inv in paths for step in inv], bool)}

    stored = cached_arrays("relation-paths", [walks, relations], [sys.modules[__name__], graph], build)
    labels, inverse = stored["labels"].tolist(), stored["inverse"].tolist()
    ends = np.cumsum(stored["steps"]).tolist()
    return [(labels[end - steps : end], inverse[end - steps : end]) for steps, end in zip(stored["steps"].tolist(), ends)]


MIRROR_SHARE = 0.9  # of each relation's edges the other's reversed: parents and children mirror exactly (1.0) where they do


def read_mirrored_relations(edges: str, relations: str) -> dict[str, set[str]]:
    """Per relation label, the labels of the relations that state it the other way round (`mirrored_relations`: parents
    and children), from the table cache when found before: a KG's edges are read once a version."""
    import sys

    from kgwalk.query.table_cache import cached_arrays
    from kgwalk.storage import read_version
    from kgwalk.walks import graph

    def build(versions: dict[str, int]) -> dict[str, np.ndarray]:
        pairs = graph.mirrored_relations(read_version(edges, versions[edges], ["src", "rel", "dst"]), min_share=MIRROR_SHARE)
        label_of = dict(zip(*(read_version(relations, versions[relations], ["id", "label"]).column(c).to_pylist() for c in ("id", "label"))))
        return {"labels": np.array([label_of[r] for pair in pairs for r in pair], str).reshape(-1, 2)}

    mirrors: dict[str, set[str]] = {}
    for a, b in cached_arrays("mirrored-relations", [edges, relations], [sys.modules[__name__], graph], build)["labels"].tolist():
        mirrors.setdefault(a, set()).add(b)
        mirrors.setdefault(b, set()).add(a)
    return mirrors


COVER_SHARE = 0.75  # of a step's ends a category's relation reaches too: what it reaches is of the category's kind
CATEGORY_FAN_IN = 3.0  # subjects per object on average: a relation naming a kind (country), not a role (spouse)


def read_covering_steps(edges: str, relations: str) -> dict[str, set[str]]:
    """Per step (`relation>` or `<relation`), the category relations' steps (`relation>`) that reach most of what it
    reaches (`graph.covered_ends`): a club's `located_in>` reaches countries `plays_for_country>` reaches, so its ends
    are countries whatever its name says. From the table cache when found before."""
    import sys

    from kgwalk.query.table_cache import cached_arrays
    from kgwalk.storage import read_version
    from kgwalk.walks import graph

    def build(versions: dict[str, int]) -> dict[str, np.ndarray]:
        found = graph.covered_ends(read_version(edges, versions[edges], ["src", "rel", "dst"]), min_share=COVER_SHARE,
                                   min_fan_in=CATEGORY_FAN_IN)
        label_of = dict(zip(*(read_version(relations, versions[relations], ["id", "label"]).column(c).to_pylist() for c in ("id", "label"))))
        pairs = [(signature([label_of[r]], [backward]), signature([label_of[s]], [False])) for r, backward, s in found]
        return {"steps": np.array(pairs, str).reshape(-1, 2)}

    covers: dict[str, set[str]] = {}
    for step, other in cached_arrays("covering-steps", [edges, relations], [sys.modules[__name__], graph], build)["steps"].tolist():
        covers.setdefault(step, set()).add(other)
    return covers


def read_category_objects(edges: str, relations: str) -> dict[str, np.ndarray]:
    """Per category relation's label, its objects' node ids, sorted (`graph.category_objects`: the countries citizen_of
    reaches). From the table cache when found before."""
    import sys

    from kgwalk.query.table_cache import cached_arrays
    from kgwalk.storage import read_version
    from kgwalk.walks import graph

    def build(versions: dict[str, int]) -> dict[str, np.ndarray]:
        rels, nodes = graph.category_objects(read_version(edges, versions[edges], ["rel", "dst"]), min_fan_in=CATEGORY_FAN_IN)
        label_of = dict(zip(*(read_version(relations, versions[relations], ["id", "label"]).column(c).to_pylist() for c in ("id", "label"))))
        return {"labels": np.array([label_of[r] for r in rels.tolist()], str), "nodes": nodes.astype(np.int64)}

    found = cached_arrays("category-objects", [edges, relations], [sys.modules[__name__], graph], build)
    labels, nodes = found["labels"], found["nodes"]
    return {label: np.sort(nodes[labels == label]) for label in np.unique(labels).tolist()}


def parse_signature(sig: str) -> tuple[list[str], list[bool]]:
    """(relation labels, directions) of a signature string (kgwalk.walks.labels.signature)."""
    steps = sig.split("|")
    return [s[1:] if s.startswith("<") else s[:-1] for s in steps], [s.startswith("<") for s in steps]


def encoder_identity(embedder: Embedder, model: str) -> str:
    """What decides the vectors `embedder` gives `model`'s texts: the model, and the code and precision that run it
    (ONNX Runtime and torch, float32 and bfloat16 differ in the last bits, enough to flip a near-tie)."""
    return f"{model}|{type(embedder).__name__}|{getattr(embedder, 'precision', '')}"


def embed_cached(embedder: Embedder, model: str, texts: list[str]) -> np.ndarray:
    """The unit vectors of `texts`, from the cache when this encoder embedded these texts before: a cached and an
    uncached run score alike only if the cache never hands one encoder's vectors to another."""
    key = hashlib.sha256("\n".join([encoder_identity(embedder, model), *texts]).encode()).hexdigest()[:24]
    path = user_cache(CACHE) / f"{key}.npy"
    if path.exists():
        vectors = np.load(path)
        if vectors.shape[0] == len(texts):
            return vectors
    vectors = unit_vectors(embedder.encode(texts)) if texts else np.empty((0, 1), np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    np.save(partial, vectors)
    os.replace(partial, path)  # readers see a whole file or none
    return vectors


def unit_vectors(vectors: np.ndarray) -> np.ndarray:
    """Unit vectors along the last axis, as float32 (the prior's path and word vectors)."""
    vectors = np.asarray(vectors, np.float32)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=-1, keepdims=True), 1e-12)
