"""Retriever: embed the question, take the top-k nodes, then each node's top-k walks (Eq. 3).

    from kgwalk.query import Retriever
    retriever = Retriever.from_config(name="metaqa", warehouse="warehouse")
    result = retriever.retrieve("who directed [Kismet]")
    for node in result.nodes:
        print(node.label, [w.text for w in node.walks])
    print(result.timings_ms)   # embed, node_search, walk_search, rerank

Beyond the paper, each off by a setting and measured in bench/results/query_ablations.md:
hybrid node search (query.node_search), a relation-path prior over candidate walks, fitted on
example questions (query.rerank=paths) or label-free from the corpus's own relation paths
(query.rerank=synthetic, the default without a fitted one; bench/results/zero_shot_ranking.md),
the walk places of top nodes the question does not name given to those it names (query.unnamed_walks),
and a budget of walks over all nodes (query.walk_budget).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from kgwalk.config import Config, QueryMode, load_config
from kgwalk.embed.model import Embedder, make_embedder
from kgwalk.embed.static import is_static, is_static_folder, static_source
from kgwalk.errors import KgwalkError
from kgwalk.index.records import WalkRecords
from kgwalk.index.store import VectorStore, collection_names, open_store
from kgwalk.query.built_with import check_embed_model
from kgwalk.query.diversity import select_walks, walks_per_node
from kgwalk.query.hits import NodeHit, RelationPath, Retrieval, WalkHit, best_first, walk_hit
from kgwalk.state import table_folders
from kgwalk.storage import check_logs

if TYPE_CHECKING:
    from kgwalk.query.answer_sets import AnswerSets
    from kgwalk.query.lexicon import EntityLexicon
    from kgwalk.query.temporal import TemporalIndex
    from kgwalk.verbalize.template import TemplateVerbalizer

PRIORS = ("paths", "synthetic")  # the reranks that score the masked question against relation paths


def resolve_rerank(cfg: Config) -> str:
    """query.rerank as it applies: `auto` is the path prior where `kgwalk fit-paths` has fitted
    one for this KG, else the label-free synthetic prior; a hashing-* embedder (tests) has no
    meaning to compare paths with, so it keeps the paper's cosine order."""
    if cfg.query.rerank != "auto":
        return cfg.query.rerank
    from kgwalk.query.paths import PRIOR_TABLE
    from kgwalk.storage import table_exists

    if table_exists(cfg.table(PRIOR_TABLE)):
        return "paths"
    return "none" if cfg.embed.model.startswith("hashing-") else "synthetic"


@contextmanager
def long_lived_frozen() -> Iterator[int]:
    """While a process answers questions (`kgwalk serve`, `kgwalk eval`), once its retriever is
    warmed up: collect, then keep every object alive now (the index handles, lexicon, walk
    records, models) out of the cyclic garbage collector's scans. Its full collections otherwise
    walk all of them every few hundred questions, 33-58 ms each on MetaQA: the slowest 1% of
    questions (bench/results/first_queries_ego.md). Reference counting still frees them inside;
    on leaving, everything frozen (by anyone) is handed back to the collector. Yields the number
    of objects frozen."""
    gc.collect()
    gc.freeze()
    try:
        yield gc.get_freeze_count()
    finally:
        gc.unfreeze()


class Retriever:
    def __init__(self, cfg: Config, embedder: Embedder | None = None, store: VectorStore | None = None, *,
                 records_on_demand: bool = False) -> None:
        """`records_on_demand`: read each question's walk records from the tables rather than
        holding them all in memory (one question, then exit: `kgwalk query`)."""
        check_logs(table_folders(cfg.root))  # a damaged Delta log: one line, never an answer from a partial table
        check_embed_model(cfg)  # before any model loads: a question must be embedded as the KG's walks were
        self.cfg = cfg  # query.*'s choices and counts were checked as it loaded (kgwalk/config.py)
        self.store = store or open_store(cfg)
        self._embedder = embedder
        self._prior_embedder: Embedder | None = None  # query.prior_encoder's, where it is not the walks' model
        self._lexicon: EntityLexicon | None = None
        self._prior = None
        self._phrases: TemplateVerbalizer | None = None  # ego mode's relation phrases
        self._derived: dict[str, tuple[dict[str, int] | None, Any]] = {}  # see _current
        self.rerank = resolve_rerank(cfg)
        self.nodes_collection, self.walks_collection = collection_names(cfg)
        self.records = WalkRecords(cfg, records_on_demand)  # what walk hits show: walk points carry ids only

    @property
    def embedder(self) -> Embedder:
        """Loaded on first use, so bad input fails fast without loading a model."""
        if self._embedder is None:
            self._embedder = self._question_encoder(self.cfg.embed.model)
        return self._embedder

    def _question_encoder(self, model: str) -> Embedder:
        e = self.cfg.embed
        # a static model is its own fast question encoder: no torch, no ONNX Runtime
        transformer = not (model.startswith("hashing-") or is_static(model))
        if self.cfg.query.encoder == "onnx" and e.device == "cpu" and transformer:
            from kgwalk.embed.onnx import OnnxEmbedder

            return OnnxEmbedder(model, spinning=False)
        # int8 is a throughput trade for the corpus; one question at a time gains nothing from it
        return make_embedder(model, e.device, precision="float32" if e.precision == "int8" else e.precision)

    @property
    def prior_model(self) -> str:
        """The model that encodes what the prior compares (query.prior_encoder): `embed` is the walks' model; `auto` a
        static model's source transformer where it has one (the distilled one: static is all-MiniLM-L6-v2), else the
        walks' model. A static model averages its tokens: matching a question to relation paths is where a transformer
        pays (bench/results/embed_quality_static.md), and it encodes a few short texts a question."""
        chosen, model = self.cfg.query.prior_encoder, self.cfg.embed.model
        if chosen == "auto":
            return static_source(model) if is_static(model) and not is_static_folder(static_source(model)) else model
        return model if chosen == "embed" else chosen

    @property
    def prior_embedder(self) -> Embedder:
        if self.prior_model == self.cfg.embed.model:
            return self.embedder
        if self._prior_embedder is None:
            self._prior_embedder = self._question_encoder(self.prior_model)
        return self._prior_embedder

    @property
    def lexicon(self) -> EntityLexicon:
        if self._lexicon is None:
            from kgwalk.query.lexicon import read_lexicon
            from kgwalk.storage import table_exists

            path = self.cfg.table("entities")
            if not table_exists(path):
                raise KgwalkError(f"query.node_search=hybrid reads entity labels from {path}, which does not exist "
                                  "(run `kgwalk ingest`, or --set query.node_search=dense)")
            relations = self.cfg.table("relations")  # its words tell entities named like common words
            self._lexicon = read_lexicon(path, relations if table_exists(relations) else None)
        return self._lexicon

    @property
    def prior(self):
        if self._prior is None:
            from kgwalk.query.paths import PathPrior
            from kgwalk.query.synthetic import SyntheticPrior

            if self.rerank == "synthetic":
                self._prior = SyntheticPrior.load(self.cfg, self.prior_embedder, self.prior_model, words_embedder=self.embedder)
            else:
                self._prior = PathPrior.load(self.cfg, self.prior_model)
        return self._prior

    def _current(self, name: str, build: Callable[[], Any]) -> Any:
        """`build()`'s result for the walk records' versions, rebuilt when a refresh moves them on;
        one built before the first sync (from the same tables) is adopted, not rebuilt."""
        versions = self.records.versions
        held = self._derived.get(name)
        if held is not None and held[0] is None:
            held = self._derived[name] = (versions, held[1])
        if held is None or held[0] != versions:
            held = self._derived[name] = (versions, build())
        return held[1]

    @property
    def temporal(self) -> TemporalIndex:
        """Which entities carry which years."""

        def build() -> TemporalIndex:
            from kgwalk.query.temporal import TemporalIndex
            from kgwalk.storage import read_table

            read = lambda t, cols: read_table(self.cfg.table(t), cols)  # noqa: E731
            return TemporalIndex(read("entities", ["id", "label"]), read("relations", ["id", "label"]), read("edges", ["src", "rel", "dst"]))

        return self._current("temporal", build)

    @property
    def answer_sets(self) -> AnswerSets:
        """The KG's edges as the walks traverse them, to complete a walk's answer set."""

        def build() -> AnswerSets:
            from kgwalk.query.answer_sets import AnswerSets
            from kgwalk.storage import read_table

            read = lambda t, cols: read_table(self.cfg.table(t), cols)  # noqa: E731
            return AnswerSets.from_tables(read("edges", ["src", "rel", "dst"]), read("entities", ["id", "label"]),
                                          read("relations", ["id", "label"]), self.cfg.walks.direction)

        return self._current("answer_sets", build)

    @property
    def aliases(self) -> dict[int, int]:
        """alias -> canonical entity, where ingest.align links them (kgwalk/kg/align.py); empty otherwise."""
        return self._alignment()[0]

    def _alignment(self) -> tuple[dict[int, int], dict[int, list[int]]]:
        """(alias -> canonical, canonical -> aliases), computed from the KG tables."""

        def build() -> tuple[dict[int, int], dict[int, list[int]]]:
            links: dict[int, int] = {}
            if self.cfg.ingest.align:
                from kgwalk.kg.align import align, links as linked, read_overrides
                from kgwalk.storage import read_table

                i = self.cfg.ingest
                alignment = align(read_table(self.cfg.table("entities"), ["id", "label"]), read_table(self.cfg.table("edges"), ["src", "dst"]),
                                  i.align_threshold, read_overrides(i.align_overrides))
                links = linked(alignment)
            members: dict[int, list[int]] = {}
            for alias, canonical in links.items():
                members.setdefault(canonical, []).append(alias)
            return links, members

        return self._current("alignment", build)

    def warm_up(self) -> None:
        """Load the model, the label lexicon, the path prior and the time index now rather than on
        the first question (the time index cost the first question with a year 70 ms on MetaQA)."""
        self.retrieve("warm up")
        if self.cfg.query.temporal:
            self.temporal  # noqa: B018 - built on first use

    @classmethod
    def from_config(cls, conf: str | None = None, overrides: list[str] | None = None, **values: Any) -> Retriever:
        return cls(load_config(conf, overrides, **values))

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: QueryMode | None = None) -> Retrieval:
        """The top k_nodes nodes, each with its top k_walks walks; in ego `mode` (query.mode when
        None), each with the lines of its pruned ego-graph in as many characters instead."""
        q_conf = self.cfg.query
        mode = mode or q_conf.mode
        if not question.strip():
            raise KgwalkError("the question is empty")
        if len(question) > q_conf.max_question_chars:
            raise KgwalkError(f"the question has {len(question):,} characters; the limit is query.max_question_chars={q_conf.max_question_chars:,}")
        k_nodes = q_conf.k_nodes if k_nodes is None else k_nodes  # 0 is an error, not "the default"
        k_walks = q_conf.k_walks if k_walks is None else k_walks
        if k_nodes < 1 or k_walks < 1:
            raise KgwalkError("k_nodes and k_walks must be >= 1")
        self.store.follow_live()  # a long-lived retriever (kgwalk serve) sees each refresh once it lands
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(phase: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[phase] = timings.get(phase, 0.0) + (now - clock) * 1000
            clock = now

        when = None
        if q_conf.temporal:  # the time expression is a filter: node search and embedding see the rest
            from kgwalk.query.temporal import constraint

            # (dense search too: the lexicon tells names from times; the lexicon and the time index
            # load only for a question with a time expression)
            when = constraint(question, lambda text: self.lexicon.mentions(text), lambda entity: self.temporal.is_name(entity))
        asked = when.question if when else question
        mentions = self.lexicon.mentions(asked) if q_conf.node_search == "hybrid" else []
        texts = [asked]
        if self.rerank in PRIORS:
            from kgwalk.query.paths import PathPrior, masked_question
            from kgwalk.query.synthetic import SyntheticPrior

            prior_type = SyntheticPrior if self.rerank == "synthetic" else PathPrior
            texts += prior_type.question_texts(masked_question(asked, mentions), q_conf.synthetic_content_mix)
        lap("lexicon")
        if len(texts) == 1 or self.prior_model == self.cfg.embed.model:  # one batch
            vectors = self.embedder.encode(texts)
            q, prior_vectors = vectors[0], vectors[1:]
        else:
            q, prior_vectors = self.embedder.encode(texts[:1])[0], self.prior_embedder.encode(texts[1:])
        lap("embed")
        nodes = self._search_nodes(q, list(dict.fromkeys(self.aliases.get(m.entity, m.entity) for m in mentions)), k_nodes)
        lap("node_search")
        # The prior models paths from the entity the question is about: where the question names
        # entities, only their walks get it (and only they need candidates beyond k_walks).
        named = [n for n in nodes if n.matched] or nodes
        topics = named if self.rerank in PRIORS else []
        # their walks are chosen among candidates with a prior or without: by a diversity rule, and for the places the
        # nodes the question does not name leave them (query.unnamed_walks)
        choosing = named if topics or q_conf.diversity != "none" or q_conf.unnamed_walks is not None else []
        self.records.sync(self.store.reflects())  # the walk records of the index version searched
        ego = mode == "ego"  # each node's candidates become its ego-graph (kgwalk/query/ego.py)
        wide = max(q_conf.candidates, k_walks)
        walk_mode_fetch = {}  # per node, the candidates walk mode fetches: ego mode's budget is what it would show
        hits_of = {}
        for node in nodes:
            walk_mode_fetch[node.id] = wide if when or any(node is t for t in choosing) else k_walks
            fetch = wide if ego else walk_mode_fetch[node.id]
            roots = [node.id, *self._alignment()[1].get(node.id, [])]  # an aligned entity's walks are its aliases' too
            hits_of[node.id] = sorted((h for root in roots for h in self.store.search(self.walks_collection, q, fetch, root=root)), key=lambda h: (-h.score, h.id))[:fetch]
        records = iter(self.records.lookup([h.id for node in nodes for h in hits_of[node.id]]))  # one lookup: each costs Arrow calls
        for node in nodes:
            node.walks = [walk_hit(h.score, next(records)) for h in hits_of[node.id]]
        lap("walk_search")
        if topics:
            self.prior.rerank(texts[1], prior_vectors, [w for n in topics for w in n.walks], q_conf.rerank_weight)
        if when:
            self._restrict_in_time(nodes, when.first, when.last)
        candidates = {node.id: sorted(node.walks, key=best_first) for node in nodes}
        fetched = [candidates[node.id][: walk_mode_fetch[node.id]] for node in nodes]
        # kgwalk/query/diversity.py: a repeated relation path is no repeat without the answer-set list naming its other ends
        diversity = "ends" if q_conf.diversity == "paths" and not q_conf.also_chars else q_conf.diversity
        places = walks_per_node([n.matched for n in nodes], [len(f) for f in fetched], k_walks, q_conf.unnamed_walks)
        for node, walks, k in zip(nodes, fetched, places):
            node.walks = select_walks(walks, k, diversity)
        if q_conf.walk_budget is not None:
            keep = {id(w) for w in sorted((w for n in nodes for w in n.walks), key=best_first)[: q_conf.walk_budget]}
            for node in nodes:
                node.walks = [w for w in node.walks if id(w) in keep]
        best = min((w for walks in candidates.values() for w in walks), key=best_first, default=None)
        if ego and q_conf.unnamed_walks is not None and any(n.matched for n in nodes):
            # a node the question does not name builds its ego-graph from the walks walk mode shows of it
            candidates = {node.id: candidates[node.id] if node.matched else candidates[node.id][:k] for node, k in zip(nodes, places)}
        lines = self._ego(nodes, candidates) if ego else []
        lap("rerank")
        if q_conf.also_chars:  # the shown walks' (ego: lines') complete answer sets, from the KG
            from kgwalk.query.answer_sets import name_answer_sets, walk_routes

            routes = lines if ego else walk_routes([w for n in nodes for w in n.walks])
            name_answer_sets(routes, self.answer_sets, q_conf.also_chars)
            lap("answer_sets")
        return Retrieval(question, nodes, {k: round(v, 3) for k, v in timings.items()}, mode, best)

    def _ego(self, nodes: list[NodeHit], candidates: dict[int, list[WalkHit]]) -> list[tuple[WalkHit, int, RelationPath]]:
        """Each node's walks become the lines of its pruned ego-graph, in as many characters as
        walk mode's walks take (query.ego_chars to set it): both modes compare at equal length.
        Returns each line with the root and relation path that reach it."""
        from kgwalk.query.ego import context_chars, ego_contexts
        from kgwalk.verbalize.template import around

        if self._phrases is None:
            from kgwalk.verbalize.template import TemplateVerbalizer

            self._phrases = TemplateVerbalizer(self.cfg.verbalize.phrases)
        phrases = self._phrases
        budget = self.cfg.query.ego_chars or context_chars([w for n in nodes for w in n.walks])
        return ego_contexts(nodes, candidates, budget, lambda relation, inverse: around(phrases.phrase(relation, inverse)))

    def _restrict_in_time(self, nodes: list[NodeHit], first: int, last: int) -> None:
        """Drop walks whose times all fall outside [first, last]; walks with no time rank after
        those with one in range (kgwalk/query/temporal.py)."""
        from kgwalk.query.temporal import UNKNOWN_PENALTY

        index = self.temporal
        for node in nodes:
            kept = []
            for walk in node.walks:
                verdict = index.judge(walk.nodes, first, last)
                if verdict == 0:
                    walk.score -= UNKNOWN_PENALTY
                if verdict >= 0:
                    kept.append(walk)
            node.walks = kept

    def _search_nodes(self, q: np.ndarray, named: list[int], k: int) -> list[NodeHit]:
        """The paper's top-k nodes by cosine; with entities named in the question, the two rankings
        fused by reciprocal rank (named entities ranked in the order the lexicon found them)."""
        dense = [(int(h.payload["id"]), h.payload["label"], h.score) for h in self.store.search(self.nodes_collection, q, k if not named else max(k, 10))]
        if self.aliases:
            dense = self._canonical_hits(dense, q)
        hits = {node: NodeHit(node, label, score) for node, label, score in dense}
        if not named:
            return list(hits.values())[:k]
        dense_rank = {node: rank for rank, node in enumerate(hits, 1)}
        ids, vecs, payloads = self.store.retrieve(self.nodes_collection, np.array(named, np.int64))
        rrf: dict[int, float] = {}  # named entities first, so that they win ties
        for rank, (node, vec, p) in enumerate(zip(ids, vecs, payloads), 1):
            node = int(node)
            if node not in hits:
                hits[node] = NodeHit(node, p["label"], _cosine(vec, q))
            hits[node].matched = True
            rrf[node] = 1.0 / (self.cfg.query.rrf_k + rank)
        for node, rank in dense_rank.items():
            rrf[node] = rrf.get(node, 0.0) + 1.0 / (self.cfg.query.rrf_k + rank)
        return [hits[n] for n in sorted(rrf, key=lambda n: -rrf[n])[:k]]

    def _canonical_hits(self, dense: list[tuple[int, str, float]], q: np.ndarray) -> list[tuple[int, str, float]]:
        """Dense hits with each aligned alias replaced by its canonical entity at the alias's rank
        (once): an alias no longer takes a slot of the top k beside the entity it names."""
        wanted = sorted({self.aliases[n] for n, _, _ in dense if n in self.aliases})
        ids, vecs, payloads = self.store.retrieve(self.nodes_collection, np.array(wanted, np.int64))
        canonical = {int(i): (p["label"], _cosine(v, q)) for i, v, p in zip(ids, vecs, payloads)}
        out: dict[int, tuple[int, str, float]] = {}
        for node, label, score in dense:
            c = self.aliases.get(node, node)
            if c != node and c in canonical:  # (a canonical without walks has no point: the alias stays)
                node, (label, score) = c, canonical[c]
            out.setdefault(node, (node, label, score))
        return list(out.values())

    def close(self) -> None:
        self.store.close()


def _cosine(vec: np.ndarray, q: np.ndarray) -> float:
    return float(np.dot(vec, q) / (np.linalg.norm(vec) * np.linalg.norm(q) or 1.0))
