"""Retriever: embed the question, take the top-k nodes, then each node's top-k walks (Eq. 3).

    from kgwalk.query import Retriever
    retriever = Retriever.from_config(name="metaqa", warehouse="warehouse")
    result = retriever.retrieve("who directed [Kismet]")
    for node in result.nodes:
        print(node.label, [w.text for w in node.walks])
    print(result.timings_ms)   # lexicon, embed, node_search, walk_search, walk_records, prior_embed, rerank, answer_sets

Beyond the paper, each off by a setting and measured in bench/results/query_ablations.md:
hybrid node search (query.node_search), a relation-path prior over candidate walks, fitted on
example questions (query.rerank=paths) or label-free from the corpus's own relation paths
(query.rerank=synthetic, the default without a fitted one; bench/results/zero_shot_ranking.md),
the walk places of top nodes the question does not name given to those it names (query.unnamed_walks),
and a budget of walks over all nodes (query.walk_budget).
"""

from __future__ import annotations

import copy
import functools
import gc
import os
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any

import numpy as np

from kgwalk.config import Config, QueryMode, load_config
from kgwalk.embed.model import Embedder, make_embedder
from kgwalk.embed.static import StaticEmbedder, is_static, is_static_folder, static_source
from kgwalk.errors import KgwalkError
from kgwalk.index.base import Hit
from kgwalk.index.records import RecordSource, WalkRecords
from kgwalk.index.store import VectorStore, collection_names, open_store
from kgwalk.query.built_with import check_embed_model
from kgwalk.query.answer_sets import name_answer_sets, walk_routes
from kgwalk.query.hits import EgoLine, NodeHit, RelationPath, Retrieval, WalkHit, best_first, walk_hits
from kgwalk.query.paths import masked_question
from kgwalk.query.prior import Prior, load_prior, resolve_rerank
from kgwalk.query.steps import (Laps, best_walks, check_request, choose_walks, ego_candidates, fetch_counts, joint_reach, names_an_entity, nearest_joint_ends, restrict_in_time, reward_joint_ends,
                                topic_nodes, weak_match)
from kgwalk.query.temporal import UNKNOWN_PENALTY
from kgwalk.query.walk_sums import walk_encoder
from kgwalk.query.words import answer_noun, predicate_noun
from kgwalk.state import table_folders
from kgwalk.storage import check_logs

if TYPE_CHECKING:
    from kgwalk.query.answer_sets import AnswerSets
    from kgwalk.query.hub_walks import HubWalks
    from kgwalk.query.lexicon import EntityLexicon, Mention
    from kgwalk.query.temporal import TemporalIndex, TimeConstraint
    from kgwalk.verbalize.template import TemplateVerbalizer

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
                 records: RecordSource | None = None, clock: Callable[[], float] = time.perf_counter) -> None:
        """`records`: where walk hits' records come from (kgwalk/index/records.py; None: query.records);
        `tables` reads each question's from the tables (one question, then exit: `kgwalk query`).
        `clock`: what the timings read (seconds)."""
        check_logs(table_folders(cfg.root))  # a damaged Delta log: one line, never an answer from a partial table
        check_embed_model(cfg)  # before any model loads: a question must be embedded as the KG's walks were
        if cfg.query.walk_search == "graph" and cfg.verbalize.verbalizer != "template":
            raise KgwalkError(f"query.walk_search=graph embeds the template's sentences of walks made again from the graph, but "
                              f"verbalize.verbalizer is {cfg.verbalize.verbalizer}: use index or auto")
        self.cfg = cfg  # query.*'s choices and counts were checked as it loaded (kgwalk/config.py)
        self.store = store or open_store(cfg)
        self._embedder = embedder
        self._prior_embedder: Embedder | None = None  # query.prior_encoder's, where it is not the walks' model
        self._prior_thread: ThreadPoolExecutor | None = None  # where that one encodes (see _encode)
        self._hub_thread: ThreadPoolExecutor | None = None  # where hub walks are cached (see hub_walks)
        self._lexicon: EntityLexicon | None = None
        self._prior: Prior | None = None
        self.clock = clock
        self._phrases: TemplateVerbalizer | None = None  # ego mode's relation phrases
        self._derived: dict[str, tuple[dict[str, int] | None, Any]] = {}  # see _current
        self.rerank = resolve_rerank(cfg)
        self.nodes_collection, self.walks_collection = collection_names(cfg)
        self.records = WalkRecords(cfg, records)  # what walk hits show: walk points carry ids only

    @property
    def embedder(self) -> Embedder:
        """Loaded on first use, so bad input fails fast without loading a model."""
        if self._embedder is None:
            self._embedder = self._question_encoder(self.cfg.embed.model)
        return self._embedder

    def _question_encoder(self, model: str, *, threads: int = 0, int8: bool = False) -> Embedder:
        """`threads`: ONNX Runtime's CPU threads (0: one a core; PyTorch's are the process's, left as they are); `int8`:
        int8 weights on ONNX Runtime (a prior's: query.prior_precision)."""
        e = self.cfg.embed
        # a static model is its own fast question encoder: no torch, no ONNX Runtime
        transformer = not (model.startswith("hashing-") or is_static(model))
        if self.cfg.query.encoder == "onnx" and e.device == "cpu" and transformer:
            from kgwalk.embed.onnx import OnnxEmbedder

            # int8: each text on its own, so a path's vector is the same whatever it is batched with (the table's
            # order, a refresh's new paths) and the question's are on its scale (bench/results/prior_int8_alone.md)
            return OnnxEmbedder(model, threads=threads, int8=int8, batch_size=1 if int8 else 64, spinning=False)
        # the corpus's int8 is a throughput trade; one question at a time gains nothing from it
        return make_embedder(model, e.device, precision="int8" if int8 else "float32" if e.precision == "int8" else e.precision)

    @functools.cached_property
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
            # it encodes on a thread of its own while the question's thread searches (see _encode): all cores but that
            # one, which it would otherwise slow (10M edges, 2 cores: p50 5% lower with one thread than two)
            self._prior_embedder = self._question_encoder(self.prior_model, threads=max(1, (os.cpu_count() or 1) - 1),
                                                          int8=self.cfg.query.prior_precision == "int8")
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
    def prior(self) -> Prior | None:
        """query.rerank's relation-path prior, loaded on first use; None for the paper's cosine order."""
        if self._prior is None and self.rerank != "none":
            self._prior = load_prior(self.rerank, self.cfg, self.prior_embedder, self.prior_model, words_embedder=self.embedder)
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
            entities, relations = read("entities", ["id", "label"]), read("relations", ["id", "label"])
            graph = self.records.graph  # the records' graph source holds this graph: not twice, unless a refresh came between
            if graph is not None and np.array_equal(np.sort(entities.column("id").to_numpy()), graph.node_ids):
                return AnswerSets(graph, entities, relations)
            return AnswerSets.from_tables(read("edges", ["src", "rel", "dst"]), entities, relations, self.cfg.walks.direction)

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
        labels = self.records.labels
        if self.walks_from_graph and labels is not None and isinstance(self.embedder, StaticEmbedder):
            # the words of every label, tokenized in one call: else each question's walks bring words the encoder has not
            # seen yet, a tokenizer call each (0.6 ms a question at 10M edges; 149K words, 6 s once)
            self.embedder.learn_words(labels.entity_labels(labels.entity_ids))
        if self.cfg.query.temporal:
            self.temporal  # noqa: B018 - built on first use
        pending = self.hub_walks
        if pending is not None:
            try:
                pending.result()
            except OSError as e:  # a full or unwritable cache folder: the hubs' walks are searched in the index
                print(f"[kgwalk] hub walks not cached ({e}): hubs are searched in the index", file=sys.stderr, flush=True)

    @classmethod
    def from_config(cls, conf: str | None = None, overrides: list[str] | None = None, **values: Any) -> Retriever:
        return cls(load_config(conf, overrides, **values))

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: QueryMode | None = None) -> Retrieval:
        """The top k_nodes nodes, each with its top k_walks walks; in ego `mode` (query.mode when
        None), each with the lines of its pruned ego-graph in as many characters instead."""
        conf = self.cfg.query
        request = check_request(question, k_nodes, k_walks, mode, conf, self.cfg.serve.max_k)
        self.store.follow_live()  # a long-lived retriever (kgwalk serve) sees each refresh once it lands
        lap = Laps(self.clock)
        when, mentions = self._parse(request.question)
        asked = when.question if when else request.question
        masked, prior = masked_question(asked, mentions), self.prior
        lap("lexicon")
        q, prior_vectors = self._encode(asked, prior.question_texts(masked) if prior else [])
        lap("embed")
        nodes = self._search_nodes(q, list(dict.fromkeys(self.aliases.get(m.entity, m.entity) for m in mentions)), request.k_nodes)
        lap("node_search")
        topics = topic_nodes(nodes)  # the prior models paths from the entity the question is about
        fetch = fetch_counts(nodes, topics, conf, request.k_walks, prior=prior is not None, timed=when is not None)
        ego = request.mode == "ego"  # each node's candidates become its ego-graph (kgwalk/query/ego.py)
        joint = self._joint(nodes, mentions, masked)  # what the entities a question names all reach
        candidates = self._candidates(nodes, q, dict.fromkeys(fetch, max(conf.candidates, request.k_walks)) if ego else fetch, lap,
                                      nearest_joint_ends(joint), {n.id for n in topics} if prior else set())
        if prior:
            vectors = prior_vectors.result() if isinstance(prior_vectors, Future) else prior_vectors
            lap("prior_embed")  # what is left of the prior's encoding once the walks are found
            prior.rerank(masked, vectors, [w for n in topics for w in candidates[n.id]], conf.rerank_weight)
        reward_joint_ends(candidates, joint, conf.joint_weight)
        if when:
            candidates = restrict_in_time(candidates, lambda walk: self.temporal.judge(walk, when.first, when.last), UNKNOWN_PENALTY)
        candidates = {node: sorted(walks, key=best_first) for node, walks in candidates.items()}
        places = choose_walks(nodes, [candidates[n.id][: fetch[n.id]] for n in nodes], request.k_walks, conf,
                              extensions=[candidates[n.id] for n in nodes])
        best = min((w for walks in candidates.values() for w in walks), key=best_first, default=None)
        lines = self._ego(nodes, ego_candidates(nodes, candidates, places, conf)) if ego else []
        lap("rerank")
        if conf.also_chars:  # the shown walks' (ego: lines') complete answer sets, from the KG
            name_answer_sets(lines if ego else walk_routes([w for n in nodes for w in n.walks]), self.answer_sets, conf.also_chars, joint)
            lap("answer_sets")
        return Retrieval(request.question, nodes, lap.ms, request.mode, best, weak_match(mentions, best, conf.weak_cosine))

    def _parse(self, question: str) -> tuple[TimeConstraint | None, list[Mention]]:
        """The question's time expression, a filter (query.temporal; the lexicon tells names from times, and it and the time
        index load only for a question with one), and the entities the rest names (query.node_search=hybrid)."""
        when = None
        if self.cfg.query.temporal:
            from kgwalk.query.temporal import constraint

            when = constraint(question, lambda text: self.lexicon.mentions(text), lambda entity: self.temporal.is_name(entity))
        asked = when.question if when else question
        return when, self.lexicon.mentions(asked) if self.cfg.query.node_search == "hybrid" else []

    def _joint(self, nodes: list[NodeHit], mentions: list[Mention], masked: str) -> dict[int, int]:
        """Where the question names several of the top nodes by name (`names_an_entity`: not one lowercase word, such as
        the film "Made" in "what genres has E's director also made"), the entities all of them reach within
        query.joint_hops steps (`joint_reach`); empty otherwise, or with query.joint_weight 0. A kind of answer that is
        itself an entity ("which chemist was born in B": the profession `chemist`; or said after a copula, "which people from
        A are judges", `predicate_noun`) counts as one more, its members one step from it: what the question asks for is
        one of them."""
        by_name = {self.aliases.get(m.entity, m.entity) for m in mentions if names_an_entity(m)}
        named = [n.id for n in nodes if n.matched and n.id in by_name]
        if not named or not self.cfg.query.joint_weight:
            return {}
        kind = None
        if self.cfg.query.node_search == "hybrid":
            kind = self.lexicon.kind(answer_noun(masked))
            if kind is None:
                kind = self.lexicon.kind(predicate_noun(masked))
        if kind is not None:
            kind = self.aliases.get(kind, kind)
            kind = None if kind in named else kind
        if len(named) < 2 and kind is None:
            return {}
        reaches = [self.answer_sets.reach(entity, self.cfg.query.joint_hops) for entity in named]
        # a kind the answers are not linked to (a tag "movies" beside the films asked for) narrows to nothing: left out
        with_kind = joint_reach([*reaches, self.answer_sets.reach(kind, 1)]) if kind is not None else {}
        return with_kind or joint_reach(reaches)

    def _encode(self, question: str, prior_texts: list[str]) -> tuple[np.ndarray, np.ndarray | Future[np.ndarray]]:
        """The question's vector (the walks' model) and the prior's texts' (query.prior_encoder's): in one batch where
        one model encodes both; else the prior's on a thread of their own while the nodes and walks are searched (a
        static model's question takes well under a millisecond, MiniLM's prior texts 7 ms of MetaQA's 21 ms p50)."""
        if not prior_texts or self.prior_model == self.cfg.embed.model:
            vectors = self.embedder.encode([question, *prior_texts])
            return vectors[0], vectors[1:]
        encoder = self.prior_embedder  # loaded here, not on the thread: a load's error is this call's
        if self._prior_thread is None:
            self._prior_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgwalk-prior-encoder")
        pending = self._prior_thread.submit(encoder.encode, prior_texts)
        return self.embedder.encode([question])[0], pending

    @functools.cached_property
    def walks_from_graph(self) -> bool:
        """Whether a top node's walks are scored as the graph makes them, not searched in the index (query.walk_search)."""
        chosen = self.cfg.query.walk_search
        if chosen == "auto":
            return self.records.source == "graph" and is_static(self.cfg.embed.model)
        return chosen == "graph"

    def _candidates(self, nodes: list[NodeHit], q: np.ndarray, fetch: dict[int, int], lap: Laps, joint_ends: np.ndarray,
                    every_path: set[int]) -> dict[int, list[WalkHit]]:
        """Per node, its `fetch` best walks by cosine with the question, from its own walks and its aliases' (an aligned
        entity's walks are its aliases' too): scored from the graph where `_from_graph` says, else searched in the index
        and their records looked up. Scored from the graph, the best walk of each relation path they lack joins them
        (of every one for the nodes in `every_path`, those the prior reranks: `with_every_path`), and the best walk to
        each of `joint_ends` (`with_joint_ends`); the index search has no such filters, so there the joint term reranks
        what it finds."""
        self.records.sync(self.store.reflects())
        roots = {n.id: [n.id, *self._alignment()[1].get(n.id, [])] for n in nodes}
        found: dict[int, list[WalkHit]] = {}
        scored = self._from_graph(roots)
        walks = self.records.made([r for n in scored for r in roots[n]]) if scored else None
        if walks is not None:
            lap("walk_records")
            encode = self._current("walk_encoder", lambda: walk_encoder(self.embedder, self.records, every_label=True))
            found = best_walks(walks, encode(walks) @ q, {n: roots[n] for n in scored}, fetch, self.records.shown, joint_ends, every_path=every_path)
            lap("walk_search")
        hubs, cached = self._cached_hubs([n for n in nodes if n.id not in found], roots)
        if hubs is not None and cached:
            walks, scores = hubs.best(q, {n: roots[n] for n in cached}, fetch, joint_ends, every_path=every_path)
            found |= best_walks(walks, scores, {n: roots[n] for n in cached}, fetch, self.records.shown, joint_ends, every_path=every_path)
            lap("walk_search")
        searched = [n for n in nodes if n.id not in found]
        if searched:
            hits = self._walk_hits(q, {n.id: roots[n.id] for n in searched}, fetch)
            lap("walk_search")
            found |= self._with_records(searched, hits)
            lap("walk_records")
        return {n.id: found[n.id] for n in nodes}

    @property
    def hub_walks(self) -> Future[HubWalks] | None:
        """The hubs' walks of the walks held (query.hub_walks=cache; kgwalk/query/hub_walks.py), loaded or made on a
        thread of their own, started on first use and again when a refresh moves the walks on; None where walks are not
        scored from the graph, there are no hubs or they are searched in the index."""
        conf = self.cfg.query
        if conf.hub_walks != "cache" or not self.walks_from_graph or self.records.made_from is None:
            return None

        def start() -> Future[HubWalks] | None:
            from kgwalk.query.hub_walks import cache_entry, load_or_make

            hubs = self.records.hubs(conf.walk_search_max_degree)
            if not len(hubs):
                return None
            if self._hub_thread is None:
                self._hub_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgwalk-hub-walks")
            entry = cache_entry(self.cfg, self.records, self.cfg.embed.model, conf.walk_search_max_degree)
            # its own encoder (a static one's word cache is not shared across threads), of a snapshot of the records (a
            # refresh's sync replaces the graph and labels the copy holds)
            records = copy.copy(self.records)
            encode = walk_encoder(self._question_encoder(self.cfg.embed.model), records)
            return self._hub_thread.submit(load_or_make, entry, records, hubs, encode)

        return self._current("hub_walks", start)

    def _cached_hubs(self, nodes: list[NodeHit], roots: dict[int, list[int]]) -> tuple[HubWalks | None, list[int]]:
        """The hub walks, where they are ready, and which of `nodes` they hold every root of."""
        pending = self.hub_walks
        if pending is None or not pending.done() or pending.exception() is not None:
            return None, []
        hubs = pending.result()
        return hubs, [n.id for n in nodes if hubs.covers(roots[n.id])]

    def _from_graph(self, roots: dict[int, list[int]]) -> list[int]:
        """The nodes whose walks are scored as the graph makes them (`walks_from_graph`): where the walks held are the
        graph's, those whose roots have at most query.walk_search_max_degree adjacency entries (a hub's thousands of
        walks are searched in the index)."""
        if not self.walks_from_graph:
            return []
        every = [r for rs in roots.values() for r in rs]
        degrees = self.records.degrees(every)
        if degrees is None:
            return []
        degree = dict(zip(every, degrees.tolist()))
        return [n for n, rs in roots.items() if max(degree[r] for r in rs) <= self.cfg.query.walk_search_max_degree]

    def _walk_hits(self, q: np.ndarray, roots: dict[int, list[int]], fetch: dict[int, int]) -> dict[int, list[tuple[Hit, int]]]:
        """Per node, its `fetch` best walk points among its `roots`', each with the root it was searched in."""
        hits_of = {}
        for node, searched in roots.items():
            count = fetch[node]
            found = ((h, root) for root in searched for h in self.store.search(self.walks_collection, q, count, root=root))
            hits_of[node] = sorted(found, key=lambda pair: (-pair[0].score, pair[0].id))[:count]
        return hits_of

    def _with_records(self, nodes: list[NodeHit], hits_of: dict[int, list[tuple[Hit, int]]]) -> dict[int, list[WalkHit]]:
        """The hits as walks: their records (kgwalk/index/records.py) at the versions the index searched reflects."""
        hits = [(h, root) for node in nodes for h, root in hits_of[node.id]]
        records = self.records.lookup([h.id for h, _ in hits], [root for _, root in hits])  # one lookup: each costs Arrow calls
        walks = iter(walk_hits([h.score for h, _ in hits], records))
        return {node.id: list(islice(walks, len(hits_of[node.id]))) for node in nodes}

    def _ego(self, nodes: list[NodeHit], candidates: dict[int, list[WalkHit]]) -> list[tuple[EgoLine, int, RelationPath]]:
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
        for thread in (self._prior_thread, self._hub_thread):
            if thread is not None:
                thread.shutdown()
        self.store.close()


def _cosine(vec: np.ndarray, q: np.ndarray) -> float:
    return float(np.dot(vec, q) / (np.linalg.norm(vec) * np.linalg.norm(q) or 1.0))
