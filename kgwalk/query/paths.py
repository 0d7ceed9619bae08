"""A relation-path prior for reranking candidate walks, fitted from example questions.

Cosine similarity alone cannot tell "who directed [X]" from "which films share a director with
[X]": the 1-step walk X -directed_by-> D is closer to both than the 2-step walk that answers the
second. Questions of the same shape ask for the same relation path, though. Fitting: for each
example question (topic entity in brackets, gold answers), the relation paths (signatures) by
which BFS reaches a gold answer from the topic, next to the embedding of the question with its
topic masked. At query time the masked question's nearest examples vote for signatures, and a
candidate walk's score becomes cosine + weight x (its signature's share of the vote).

Stored as the Delta table `path_prior` (question, vector, signatures) next to the KG's tables.
This is supervised: fit on a tuning split (MetaQA dev), never on the questions you report.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.query.hits import WalkHit
from kgwalk.query.lexicon import EntityLexicon, Mention
from kgwalk.query.words import asked_part
from kgwalk.walks.graph import fold64
from kgwalk.walks.labels import signature

PRIOR_TABLE = "path_prior"
# the nearest examples that vote: MetaQA dev's shapes have tens of examples each (38,717 examples, 534 shapes), so a
# question's votes come from its own shape's examples and a few of the next; not a setting, as no KG has said otherwise yet
NEIGHBOURS = 32
_BRACKETED = re.compile(r"\[[^\[\]]+\]")


def masked_question(question: str, mentions: list[Mention]) -> str:
    """The question with its entity mentions replaced by 'E', so that only its shape is left; a typographic apostrophe
    as a plain one, the word heuristics' (kgwalk/query/words.py): "E’s spouse" is E's spouse, not E, "s" and spouse; and
    only the sentences that ask (`asked_part`)."""
    masked = _BRACKETED.sub("E", question)
    for m in mentions:
        if not m.bracketed:
            masked = re.sub(re.escape(m.text), "E", masked, count=1, flags=re.I)
    return asked_part(masked.replace("’", "'"))


@dataclass(frozen=True)
class Example:
    question: str
    topics: tuple[int, ...]
    answers: frozenset[int]


def read_examples(path: str, lexicon: EntityLexicon) -> tuple[list[Example], int]:
    """Example questions, one per line: `question with [topic]<TAB>answer|answer...` (MetaQA's
    format). Entities are looked up by label. Returns (examples, lines skipped: no topic or no
    answer found in the KG)."""
    examples, skipped = [], 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            question, _, answers = line.rstrip("\n").partition("\t")
            if not question.strip():
                continue
            topics = tuple(m.entity for m in lexicon.mentions(question))
            gold = frozenset(int(e) for a in answers.split("|") if a.strip() for e in lexicon.ids_of(a))
            if topics and gold:
                examples.append(Example(question, topics, gold))
            else:
                skipped += 1
    return examples, skipped


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return fold64(fold64(np.zeros(len(a), np.uint64), a), b)


def answer_signatures(cfg: Config, examples: list[Example]) -> list[list[str]]:
    """Per example, the signatures of BFS walks (no caps; the corpus's direction, depth, hub rule
    and bfs_mode, `maximal` read as `reached`) from a topic that end at a gold answer."""
    from kgwalk.storage import read_table
    from kgwalk.walks.engine import generate_walks
    from kgwalk.walks.graph import Graph
    from kgwalk.walks.spec import WalkSpec

    tables = {t: read_table(cfg.table(t), what="ingest") for t in ("edges", "entities", "relations")}
    graph = Graph.from_arrow(tables["edges"], tables["entities"], tables["relations"], cfg.walks.direction)
    spec = replace(WalkSpec.from_conf(cfg.walks), kinds=("bfs",), bfs_mode="paths" if cfg.walks.bfs_mode == "paths" else "reached", max_per_signature=None, max_per_root=None)
    rel_label = dict(zip(tables["relations"].column("id").to_pylist(), tables["relations"].column("label").to_pylist()))
    pairs = [(i, t, a) for i, ex in enumerate(examples) for t in ex.topics for a in ex.answers if a != t]
    example_of, topic, answer = (np.array(c, np.int64) for c in zip(*pairs)) if pairs else (np.empty(0, np.int64),) * 3
    keys = _pair_keys(topic, answer)
    order = np.argsort(keys)
    keys, example_of = keys[order], example_of[order]
    signatures: list[set[str]] = [set() for _ in examples]
    roots = np.unique(topic[np.isin(topic, graph.node_ids)])
    for walks in generate_walks(graph, roots, spec, cfg.walks.roots_per_batch, cfg.walks.max_paths_per_batch):
        nodes = walks.column("nodes").combine_chunks()
        ends = pc.list_flatten(nodes).to_numpy()[nodes.offsets.to_numpy()[1:] - nodes.offsets.to_numpy()[0] - 1]
        walk_keys = _pair_keys(walks.column("root").to_numpy(), ends)
        hit = np.flatnonzero(np.isin(walk_keys, keys))
        rels, inverse = walks.column("rels").to_pylist(), walks.column("inverse").to_pylist()
        for w in hit:
            sig = signature([rel_label[r] for r in rels[w]], inverse[w])
            lo, hi = np.searchsorted(keys, walk_keys[w], "left"), np.searchsorted(keys, walk_keys[w], "right")
            for e in example_of[lo:hi]:
                signatures[e].add(sig)
    return [sorted(s) for s in signatures]


def fit_path_prior(cfg: Config, examples: list[Example], embedder, lexicon: EntityLexicon, model: str) -> pa.Table:
    """The prior's table for these examples (examples whose answers no walk reaches are left out);
    `embedder` is `model`'s (query.prior_encoder's), named in the table for the query side's check."""
    signatures = answer_signatures(cfg, examples)
    keep = [i for i, s in enumerate(signatures) if s]
    masked = [masked_question(examples[i].question, lexicon.mentions(examples[i].question)) for i in keep]
    vectors = embedder.encode(masked) if masked else np.empty((0, 1), np.float32)
    dim = vectors.shape[1]
    return pa.table(
        {
            "question": pa.array(masked, pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.astype(np.float32).ravel()), dim),
            "signatures": pa.array([signatures[i] for i in keep], pa.list_(pa.string())),
            "encoder": pa.array([model] * len(keep), pa.string()),
        }
    )


def group_examples(table: pa.Table) -> dict[str, np.ndarray]:
    """A prior table's examples grouped by masked question, as the arrays PathPrior holds (and the
    table cache stores): templated questions repeat their shape thousands of times (MetaQA dev:
    38,717 examples, 534 shapes), so the vote scans distinct shapes with counts, not every example.
    `encoder` is the fitted prior encoder's name ("" for a table fitted before the column existed)."""
    if table.num_rows == 0:
        raise KgwalkError("the path prior holds no examples: fit it on questions whose answers the walks reach")
    questions = table.column("question").to_pylist()
    vectors = pc.list_flatten(table.column("vector")).to_numpy().reshape(table.num_rows, -1)
    group: dict[str, int] = {}
    first: list[int] = []  # per distinct shape: its first example's row
    votes: dict[tuple[int, str], float] = {}  # (shape, signature) -> summed 1/len(signatures) of its examples
    for i, (question, sigs) in enumerate(zip(questions, table.column("signatures").to_pylist())):
        g = group.setdefault(question, len(group))
        if g == len(first):
            first.append(i)
        for sig in sigs:
            votes[g, sig] = votes.get((g, sig), 0.0) + 1.0 / len(sigs)
    signatures = sorted({sig for _, sig in votes})
    sig_index = {sig: i for i, sig in enumerate(signatures)}
    shapes = vectors[first]
    encoder = table.column("encoder")[0].as_py() if "encoder" in table.column_names else ""
    return {
        "vectors": np.ascontiguousarray(shapes / np.linalg.norm(shapes, axis=1, keepdims=True), np.float32),
        "counts": np.bincount([group[q] for q in questions]).astype(np.float32),
        "vote_shape": np.array([g for g, _ in votes], np.int64),
        "vote_signature": np.array([sig_index[sig] for _, sig in votes], np.int64),
        "vote_value": np.array(list(votes.values()), np.float64),
        "signatures": np.array(signatures, str),
        "encoder": np.array(encoder or ""),
    }


class PathPrior:
    """The fitted examples grouped by masked question (group_examples)."""

    def __init__(self, shapes: dict[str, np.ndarray]) -> None:
        self.vectors = shapes["vectors"]
        self.counts = shapes["counts"]
        self.encoder = str(shapes["encoder"])
        signatures = shapes["signatures"].tolist()
        self.votes_of: list[dict[str, float]] = [{} for _ in range(len(self.counts))]  # per shape: signature -> vote
        for g, sig, value in zip(shapes["vote_shape"].tolist(), shapes["vote_signature"].tolist(), shapes["vote_value"].tolist()):
            self.votes_of[g][signatures[sig]] = value

    @classmethod
    def from_table(cls, table: pa.Table) -> PathPrior:
        return cls(group_examples(table))

    @classmethod
    def load(cls, cfg: Config, model: str) -> PathPrior:
        """The KG's fitted prior, whose example vectors must be `model`'s (query.prior_encoder's);
        grouped once per table version in the table cache (kgwalk/query/table_cache.py): reading
        MetaQA dev's 38,717 example vectors took 0.4 s of a CLI query, for 534 shapes."""
        import sys

        from kgwalk.query.table_cache import cached_arrays
        from kgwalk.storage import read_version, table_exists

        path = cfg.table(PRIOR_TABLE)
        if not table_exists(path):
            raise KgwalkError(f"query.rerank=paths needs a fitted prior at {path}: run `kgwalk fit-paths --questions FILE` "
                              "(or --set query.rerank=none)")
        prior = cls(cached_arrays("path-prior", [path], [sys.modules[__name__]],
                                  lambda versions: group_examples(read_version(path, versions[path]))))
        fitted = prior.encoder or cfg.embed.model  # a prior fitted before the column existed was fitted with the walks' model
        if fitted != model:
            raise KgwalkError(f"{path} was fitted with {fitted}'s question vectors, not {model}'s: run `kgwalk fit-paths` again "
                              f"(or --set query.prior_encoder={fitted})")
        return prior

    def votes(self, masked_vector: np.ndarray) -> dict[str, float]:
        """Signature -> share of the similarity-weighted vote of the NEIGHBOURS nearest examples
        (sums to 1). einsum, not BLAS: a BLAS call wakes OpenBLAS's thread pool, whose spinning
        threads then slow the next question's embedding (measured: 3x on 2 cores)."""
        sims = np.einsum("ij,j->i", self.vectors, (masked_vector / (np.linalg.norm(masked_vector) or 1.0)).astype(np.float32))
        near = np.argpartition(-sims, min(NEIGHBOURS, len(sims)) - 1)[:NEIGHBOURS]
        votes: dict[str, float] = {}
        left = float(NEIGHBOURS)
        for g in near[np.argsort(-sims[near], kind="stable")]:
            if left <= 0:
                break
            taken = min(float(self.counts[g]), left)  # the nearest examples, duplicates counted, up to NEIGHBOURS
            left -= taken
            weight = max(float(sims[g]), 0.0) * taken / float(self.counts[g])
            for sig, v in self.votes_of[g].items():
                votes[sig] = votes.get(sig, 0.0) + weight * v
        total = sum(votes.values()) or 1.0
        return {s: v / total for s, v in votes.items()}

    def question_texts(self, masked_question: str) -> list[str]:
        """What the retriever encodes for this prior: the masked question alone."""
        return [masked_question]

    def rerank(self, masked_question: str, masked_vectors: np.ndarray, walks: Sequence[WalkHit], weight: float) -> None:
        """`masked_vectors`: the vectors of question_texts(masked_question). (The masked question's text goes unread:
        its nearest examples' paths have their own lengths.)"""
        votes = self.votes(masked_vectors[0])
        for w in walks:
            w.score = w.cosine + weight * votes.get(w.signature, 0.0)
