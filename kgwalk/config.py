"""The typed config tree: YAML in, dataclasses out, with `section.key=value` overrides.

Unknown keys, wrong types and choices outside their set are errors that name the key, so a typo
never passes silently. A setting with a closed set of values is typed as a `Literal` alias below
(one per concept), a count as `Count` (at least 1); `load_config` checks both (typing.get_args, the
AtLeast bound) for YAML, `--set` overrides and keyword values alike, so code reading a loaded
Config need not check again.
A YAML file may start from another (`base: local.yaml`) and take values from the environment
(`${QDRANT_URL}`, `${RAY_ADDRESS:-auto}`), so cluster settings and secrets stay out of conf.
"""

from __future__ import annotations

import dataclasses
import os
import re
import types
import typing
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml

from kgwalk.errors import KgwalkError

DEFAULT_CONF = Path(__file__).resolve().parent.parent / "conf" / "local.yaml"

# The closed sets of choices. Open ones stay `str`: embed.model (a name, a folder, static,
# hashing-<dim>), devices (cuda:N), hosts and URLs.
KgFileFormat = Literal["pipe", "tsv", "csv", "nt", "parquet"]
KgFormat = Literal["auto", KgFileFormat]  # auto: by the file's suffix
WalkKind = Literal["bfs", "random"]
WalkDirection = Literal["out", "in", "both"]
BfsMode = Literal["reached", "maximal", "paths"]
WalkEngine = Literal["auto", "memory", "join"]
LLMBackend = Literal["vllm", "transformers", "openai"]
VerbalizerName = Literal["template", LLMBackend]
LLMDtype = Literal["auto", "float32", "bfloat16", "float16"]
EmbedPrecision = Literal["auto", "float32", "bfloat16", "float16", "int8"]
IndexBackend = Literal["edge", "server"]
VectorDatatype = Literal["auto", "float32", "float16", "turbo8", "turbo4"]
VectorStorage = Literal["auto", "always", "never"]
NodeSearch = Literal["dense", "hybrid"]
Rerank = Literal["auto", "none", "paths", "synthetic"]
QuestionEncoder = Literal["onnx", "torch"]
PriorPrecision = Literal["float32", "int8"]
QueryMode = Literal["walks", "ego"]
WalkRecordSource = Literal["auto", "memory", "graph", "tables"]
WalkSearch = Literal["auto", "index", "graph"]
HubWalks = Literal["cache", "index"]
WalkDiversity = Literal["none", "ends", "facts", "paths"]


@dataclass(frozen=True)
class AtLeast:
    """A number setting's least value, checked as the config loads (Annotated[int, AtLeast(1)])."""

    least: float


@dataclass(frozen=True)
class Above:
    """A number setting's exclusive lower bound (Annotated[float, Above(0)]: a temperature, a divisor)."""

    bound: float


@dataclass(frozen=True)
class AtMost:
    """A number setting's greatest value (Annotated[float, AtLeast(0), AtMost(1)]: a share)."""

    most: float


Count = Annotated[int, AtLeast(1)]  # how many of something a setting asks for: at least one
Weight = Annotated[float, AtLeast(0)]  # a score term's weight: 0 turns the term off
Share = Annotated[float, AtLeast(0), AtMost(1)]


def setting(default: Any = dataclasses.MISSING, doc: str = "", *, factory: Callable[[], Any] | None = None) -> Any:
    """A config field and its description: the one place a setting is explained. docs/config.md and
    the comments of conf/local.yaml are generated from it (`python -m kgwalk.config_docs`); its
    range is its type's (a Literal's values, the Annotated bounds above)."""
    if factory is not None:
        return field(default_factory=factory, metadata={"doc": doc})
    return field(default=default, metadata={"doc": doc})


@dataclass
class KgConf:
    """The knowledge graph a build reads (`kgwalk build --kg`, `--format`)."""

    path: str | None = setting(None, "The KG file: one triple a line or row (docs/input-formats.md).")
    format: KgFormat = setting("auto", "The file's format; auto: by its suffix (.txt pipe, .tsv, .csv, .nt, .parquet).")


@dataclass
class IngestConf:
    """Reading the KG into the entities, relations, edges and rejected tables."""

    max_label_length: int = setting(1000, "Longer labels are rejected (the line lands in `rejected`), not truncated.")
    align: bool = setting(False, "Entity alignment: link entities whose labels name the same thing and whose neighbours overlap "
                                 "(\"Emir Kusturica\" and the tag \"emir kusturica\"); kgwalk/kg/align.py, docs/query-and-answer.md.")
    align_threshold: float = setting(0.5, "The neighbour overlap |N(a) ∩ N(b)| / min(|N(a)|, |N(b)|) a candidate pair needs to be linked.")
    align_overrides: str | None = setting(None, "A reviewed copy of `_alignment.csv` whose accept/reject decisions the next ingest and "
                                                "every query honour.")


@dataclass
class QualityConf:
    """Data-quality gates: each stage validates its output before committing it (docs/quality-gates.md)."""

    gates: bool = setting(True, "Validate each stage's output before its commit; false: commit unchecked.")
    max_rejected_ratio: float = setting(0.05, "Of the records ingest reads, the share that may be rejected; above it ingest fails and "
                                              "writes nothing.")
    relations: list[str] = setting(doc="The known relation vocabulary (labels); empty: any.", factory=list)
    max_text_length: int = setting(10_000, "Characters of a sentence.")
    max_fallback_ratio: float = setting(0.2, "LLM verbalizers: the share of sentences that may fall back to the template.")


@dataclass
class SparkConf:
    """The Spark session of the walks and refresh jobs."""

    master: str = setting("local[*]", "Spark's master URL; spark-submit's --master wins over it.")
    app_name: str = setting("kgwalk", "The Spark application's name.")
    partitions: int = setting(0, "Root partitions of the walk job; 0: 2 x Spark's default parallelism.")
    settings: dict[str, str] = setting(doc="Spark settings (`spark.driver.memory: 4g`); an empty value is dropped. With "
                                           "`spark.jars.packages` naming delta-spark, Delta's SQL extension and catalog are set too.",
                                       factory=dict)


@dataclass
class RandomWalkConf:
    """Random walks (walks.kinds: random): the paper's n_w and l (Eq. 1)."""

    walks_per_root: int = setting(60, "Walks started from every root (n_w); duplicates collapse into one row with a count.")
    length: int = setting(3, "Steps of a random walk (l).")


@dataclass
class WalksConf:
    """Which walks are made from every root (docs/walks.md). `WalkSpec` (kgwalk/walks/spec.py) is built from these."""

    kinds: list[WalkKind] = setting(doc="bfs (walks of up to `depth` steps, chosen by `bfs_mode`) and/or random.",
                                    factory=lambda: ["bfs"])
    direction: WalkDirection = setting("both", "out: edges head to tail (the paper) | in: backwards only | both: either way, a backward "
                                               "step recorded as the inverse relation (on MetaQA, where every head is a film, only both "
                                               "reaches actor-to-film questions).")
    depth: int = setting(3, "BFS depth (the longest shortest path); also how far the hub rule reaches.")
    hub_degree: int | None = setting(50, "A walk may end at a node with more adjacency entries than this, never pass through it (the "
                                         "root itself always expands); null: no hubs.")
    bfs_mode: BfsMode = setting("paths", "paths: a walk per relation path a walk that revisits no node can follow (up to "
                                         "max_per_signature), so a path whose ends other paths reached first still has a walk, and "
                                         "every fact of the root as a 1-step walk | reached: a walk per reached node, its shortest "
                                         "path (the paper's code) | maximal: the reached walks no other kept walk of the root "
                                         "extends, applied after the caps (no fact is lost, none is said twice).")
    max_per_signature: int | None = setting(1, "BFS walks of 2+ steps kept per root and relation path (its relations and directions), "
                                               "the first in canonical order; 1-step walks are all kept; null: all.")
    max_per_root: int | None = setting(None, "At most this many walks per root and kind (BFS shortest first, random most frequent "
                                             "first); null: all.")
    seed: int = setting(42, "The random walks' seed: a step is a hash of (seed, root, walk, step, node), so walks do not depend on "
                            "partitioning.")
    engine: WalkEngine = setting("auto", "memory: a CSR broadcast to the executors | join: DataFrame joins, for graphs beyond an "
                                         "executor's memory | auto: memory while the CSR fits `max_graph_bytes`. Both write the "
                                         "same table.")
    max_graph_bytes: int = setting(4 * 2**30, "auto picks the memory engine while the CSR is at most this big (9 bytes an adjacency "
                                              "entry, 16 a node).")
    roots_per_batch: int = setting(1024, "Roots walked together in one vectorised batch (working memory, not the walks).")
    max_paths_per_batch: int = setting(4_000_000, "Rows of a batch's working arrays, a BFS level expanded in chunks past it (working "
                                                  "memory, not the walks).")
    processes: int | None = setting(None, "Processes a refresh walks its affected roots in when it runs without Spark, each with a "
                                          "copy of the graph, where there is more than one batch of roots; null: one a CPU.")
    random: RandomWalkConf = field(default_factory=RandomWalkConf)


@dataclass
class LLMConf:
    """One LLM, reached one of three ways (the verbalizer or answerer names which)."""

    model: str | None = setting(None, "vllm, transformers: a Hugging Face name or folder (transformers: or a .gguf file) | openai: "
                                      "the served model's name.")
    max_tokens: int = setting(64, "Tokens a reply may have.")
    temperature: float = setting(0.0, "Sampling temperature; 0: greedy.")
    batch_size: int = setting(64, "transformers: prompts per generate call (vLLM schedules its own batches).")
    device: str = setting("auto", "transformers: auto (cuda if present) | cpu | cuda | cuda:N.")
    dtype: LLMDtype = setting("auto", "transformers: the weights' dtype.")
    engine_args: dict[str, Any] = setting(doc="vllm: keyword arguments of vllm.LLM(...) (tensor_parallel_size, ...).", factory=dict)
    base_url: str | None = setting(None, "openai: the endpoint, http://host:8000/v1 (e.g. `vllm serve`).")
    api_key_env: str = setting("OPENAI_API_KEY", "openai: the environment variable holding the key (keys never go in conf).")
    concurrency: int = setting(8, "openai: requests in flight per actor.")
    requests_per_second: float | None = setting(None, "openai: requests a second per actor; null: unlimited.")
    max_retries: int = setting(5, "openai: retries on 408/409/429/5xx, timeouts and dropped connections, with backoff and jitter.")
    timeout_s: float = setting(60.0, "openai: seconds a request may take.")


@dataclass
class PromptConf:
    """Empty fields: the paper's prompt (Fig. 2a for verbalizing, Fig. 2b for answering)."""

    system: str = setting("", "The system prompt; empty: the paper's.")
    user: str = setting("", "The user prompt; empty: the paper's. verbalize: must hold {triples}; answer: {question} and {context}.")


@dataclass
class VerbalizeConf:
    """One sentence per walk (docs/verbalize-and-embed.md)."""

    verbalizer: VerbalizerName = setting("template", "template: relation phrases | openai (any OpenAI-compatible endpoint) | "
                                                     "transformers | vllm: the paper's LLM prompt.")
    batch_size: int = setting(8192, "Walks per batch of the Ray pipeline.")
    phrases: dict[str, list[str]] = setting(doc="relation label -> [forward phrase, inverse phrase] of the template verbalizer; a "
                                                "relation not here gets an automatic phrase from its name. A phrase may hold {} where "
                                                "the next entity goes.", factory=dict)
    llm: LLMConf = field(default_factory=LLMConf)
    prompt: PromptConf = field(default_factory=PromptConf)
    actors: int = setting(1, "LLM verbalizers: Ray actors, each holding one model or client.")
    num_gpus: float = setting(0, "LLM verbalizers: GPUs per actor (1 for vllm or transformers on GPU workers).")
    cache: bool = setting(True, "LLM verbalizers: reuse sentences from <warehouse>/_cache/verbalize, keyed by the model, prompt "
                                "and walk.")


@dataclass
class EmbedConf:
    """Walk vectors (docs/verbalize-and-embed.md)."""

    model: str = setting("auto", "auto: static on a CPU, all-MiniLM-L6-v2 with device cuda (bench/results/embed_quality_static.md) | "
                                 "a sentence-transformers model by name or folder (all-MiniLM-L6-v2 is bundled) | static: "
                                 "all-MiniLM-L6-v2 distilled to a static model (model2vec; ~100x faster to build) | "
                                 "static:<sentence-transformers model> | a static model's folder | hashing-<dim> (tests only).")
    batch_size: int = setting(0, "Sentences per forward pass; 0: 32 on a CPU, 1,024 on CUDA.")
    actors: int = setting(0, "Ray actors; 0: one less than the CPUs Ray sees (at least 1): Ray Data's read tasks need a CPU too.")
    threads_per_actor: int = setting(0, "Threads of each actor; 0: CPUs / actors.")
    device: str = setting("cpu", "cpu | cuda (each actor asks Ray for one GPU) | cuda:N.")
    precision: EmbedPrecision = setting("auto", "A transformer's: auto: bfloat16 on CPUs with AMX/AVX512-BF16, float16 on CUDA, else "
                                                "float32 | int8: ONNX Runtime, CPU only.")
    store_vectors: VectorStorage = setting("auto", "Keep walk vectors in the Delta `vectors` table. auto: a transformer's yes; a static or "
                                                   "hashing model's no: the index embeds the texts again where it needs vectors (a static "
                                                   "model embeds ~30,000 sentences/s), and the table's 1 KB a walk is saved "
                                                   "(bench/results/bytes_per_walk.md); yes with index.backend=server, a cluster's build, "
                                                   "whose Ray workers embed while the index stage runs in the driver alone | always | never.")

    def __post_init__(self) -> None:
        if self.model == "auto":  # resolved here, so that fingerprints, checks and caches see the model itself
            self.model = "all-MiniLM-L6-v2" if self.device.startswith("cuda") else "static"


@dataclass
class IndexConf:
    """The vector index (docs/vector-index.md)."""

    backend: IndexBackend = setting("edge", "edge: Qdrant's in-process engine (qdrant-edge-py) | server: a Qdrant server via "
                                            "qdrant-client.")
    url: str | None = setting(None, "server: http://host:6333 (\":memory:\" or a folder: qdrant-client's local mode, for small tests).")
    api_key_env: str = setting("QDRANT_API_KEY", "server: the environment variable holding the API key.")
    hnsw_m: int = setting(16, "The node collection's HNSW graph (the walks collection has none: walk search filters by root).")
    upsert_batch: int = setting(2048, "Points written per request.")
    vector_datatype: VectorDatatype = setting("auto", "How walk vectors are stored. auto: turbo8 with the edge backend, float16 with a "
                                                      "server | float32 | float16: half float32's bytes | turbo8, turbo4 (edge only): "
                                                      "Qdrant's TurboQuant codes, a quarter and an eighth of float32's. Node vectors are "
                                                      "stored the same way, made from the unrounded walk vectors "
                                                      "(bench/results/bytes_per_walk.md).")
    node_sums_min_walks: Count = setting(
        32, "edge: a root with at least this many walks keeps its node vector's exact sum beside the index (2 KB at 256 "
            "dimensions), so a refresh adds and takes away its changed walks; a root with fewer has its walks summed again. "
            "At 32, 6% of the 1M-edge KG's roots keep one, 8 B a walk, and a refresh embeds the walks of the other roots it "
            "touches again: a 0.1% refresh costs 0.076 of the build against 0.052 at 1, where every root keeps one at 116 B a "
            "walk (bench/results/bytes_per_walk_synth1m_nodes.md, refresh_node_sums.md).")
    sums_memory_mib: Count = setting(
        4096, "The node sums the index stage holds at once (2 KiB a root at 256 dimensions: 2M roots): a KG with more roots is "
              "indexed in one pass over its texts (or vectors) per range of roots that fits, each embedding only its own walks' "
              "texts; each pass rereads every text. The 10M-edge KG's 3.7M roots take 7.7 GB at once, two passes here "
              "(bench/results/scale_build_10m_memory.md).")
    seal_points: Count = setting(
        4_000_000, "edge: the walks' base (a build's, a compaction's) is sealed into a segment on disk every this many points as "
                   "it is written. Until sealed, Qdrant holds about 290 B a point in memory at 256 dimensions: 1.2 GB at this "
                   "value, 19 GB for the 10M-edge KG's 64M walks written whole (bench/results/scale_build_10m_memory.md).")
    compact_ratio: float = setting(0.2, "edge: a refresh merges the walks' delta into a new base once delta and masked points pass "
                                        "this fraction of the base (one copy of the base, amortised over refreshes).")
    max_retries: int = setting(5, "server: retries of a failed request (connection errors, 429, 5xx), then a one-line failure.")
    retry_backoff_s: float = setting(0.5, "server: the first wait; doubles per retry, with jitter.")


@dataclass
class SyntheticConf:
    """query.rerank=synthetic: the label-free prior, the corpus's relation paths read as questions
    (kgwalk/query/synthetic.py; docs/synthetic-prior.md). Each term scores a path against the
    question with its topic masked; where each value comes from: docs/synthetic-prior.md."""

    temperature: Annotated[float, Above(0)] = setting(0.03, "Softmax temperature over the paths' scores; lower gives the best path more "
                                                            "of the share.")
    words_per_hop: Annotated[float, Above(0)] = setting(1.75, "The relation steps a question asks for are its content words (topic and "
                                                              "function words left out) / this. MetaQA's questions spend about 1.75 "
                                                              "a step (bench/results/zero_shot_ranking.md).")
    hop_weight: Weight = setting(0.16, "A path scores this much less per step it differs from that count; 0: off.")
    mention_hops: Weight = setting(0.9, "Or, where more, this many steps per relation the question names by a word of the KG's "
                                        "relation phrases; 0: words only (bench/results/relation_mentions.md).")
    link_hops: Weight = setting(1.0, "Or, where more, this many steps per link the question makes from a phrase to the next by \"of\", a "
                                     "possessive or a relative pronoun (\"the country of the birthplace of the director of E\": 3 links, 3 "
                                     "steps); 0: off. Chosen on the development sets, MetaQA dev unchanged "
                                     "(bench/results/zero_shot_dev_sweep_synthetic_link_hops.md, hop_estimate.md).")
    center: bool = setting(True, "Compare with each path question less the mean path question (what every path of this KG shares); "
                                 "false: raw cosines.")
    content_mix: Share = setting(0.5, "The share of the match read from content words alone (function words and placeholders left out), "
                                      "the rest from whole questions: a static embedder averages its tokens, so shared function words "
                                      "swamp the relation words (bench/results/embed_quality_static.md).")
    coverage: Weight = setting(0.4, "A path gains this x the mean over its question's content words of the best match among the "
                                    "question's (word vectors of embed.model; 1 for one stem); 0: off (bench/results/path_words.md).")
    focus: Weight = setting(0.3, "A path gains this x how much better its last step matches the words nearest the question's wh-word "
                                 "than its steps on average; 0: off (bench/results/answer_focus.md).")
    answer_type: Weight = setting(0.5, "A path gains this x how much more its walks' end labels match the words naming what the question "
                                       "asks for (\"which country\", \"what genres\": word vectors of embed.model; \"when\": a year or "
                                       "a date) than the paths' ends on average; 0: off "
                                       "(bench/results/zero_shot_dev_ablation_answer_type.md).")
    answer_type_margin: Weight = setting(0.05, "Differences in that match within this of the paths' mean count as none: where every path ends in "
                                               "the same kind of thing (persons whose names say nothing of their role), what is left is noise.")
    kind_step: Weight = setting(0.2, "Where the question asks for a kind of thing that names no relation (\"in which country was the "
                                     "CEO of E born\"), a path one step past another among the candidates, whose ends read as that kind "
                                     "(answer_type's match) at least this much more than the other's and more than the paths' mean, may be "
                                     "that step longer than the question's words ask for at no cost, and scores at least as the other does "
                                     "with its own ends' match: the birthplace's country is one step past the birthplace; 0: off "
                                     "(bench/results/rerank_offline_kind_step.md, rerank_offline_kind_prefix.md).")
    order: Weight = setting(0.1, "A path gains this x how far it takes the relations the question names in the order its words give: "
                                 "nested and possessive questions name them from the answer in (\"the nationality of the spouse of the "
                                 "parent of E\": parents, then spouse, then nationality; \"where were the parents of E's spouse born\": "
                                 "spouse, parents, birthplace); 0: off (bench/results/rerank_offline_order.md).")
    named: Weight = setting(0.2, "A path gains this x the share of the question's words naming a relation (a form of a word of its "
                                 "phrases: \"screenwriter\" of written_by) whose relation it takes, none where it is more than "
                                 "focus_slack steps longer than the question asks for; 0: off "
                                 "(bench/results/zero_shot_dev_ablation_named.md).")
    peer: Weight = setting(0.2, "Where the question asks for the topic's peers (\"other\", \"share\", \"same\", \"else\", \"also\", "
                                "\"together\", \"co-...\": \"which other films did the director of E make\"), a path that takes a relation "
                                "and comes straight back by it (to a film sharing E's director) gains this, less the paths' mean; 0: off "
                                "(bench/results/zero_shot_dev_ablation_peer.md).")
    peer_unasked: Weight = setting(0.03, "Where it does not, a path whose last two steps are such a pair (its answer a peer: the other "
                                         "artists of E's label for \"which label was E signed to\") loses this, less the paths' mean; 0: off.")
    focus_decay: Annotated[float, Above(0), AtMost(1)] = setting(0.3, "The weight of the question's n-th content word nearest its "
                                                                      "wh-word: focus_decay ** n.")
    focus_slack: Weight = setting(1.0, "A path more than this many steps longer than the question asks for gains nothing from the "
                                       "focus (\"what was the release year of E\": E's director's other films' years end in that "
                                       "relation too).")
    synonyms: list[str] = setting(doc="More groups of words that name one relation concept, each a space-separated string (\"drug "
                                      "drugs medication medications\"): a question's word names the relations whose phrases have a "
                                      "word of its group. Added to the built-in groups (SYNONYMS in kgwalk/query/words.py: kind and "
                                      "genre, actors and starring, ...); a word listed here leaves its built-in group. At least two "
                                      "words a group.", factory=list)

    def __post_init__(self) -> None:
        short = next((group for group in self.synonyms if len(group.split()) < 2), None)
        if short is not None:
            raise KgwalkError(f"config: 'query.synthetic.synonyms': each group needs two words or more, got {short!r}")


@dataclass
class QueryConf:
    """Retrieval: the top nodes, then each one's walks (the paper's Eq. 3), and the options beyond it (docs/query-and-answer.md)."""

    k_nodes: Count = setting(3, "Top nodes (the paper's k).")
    k_walks: Count = setting(3, "Walks per top node.")
    node_search: NodeSearch = setting("hybrid", "dense: the paper's node search | hybrid: dense fused (RRF) with the entities whose "
                                                "labels the question names.")
    rrf_k: int = setting(60, "Reciprocal rank fusion's k in hybrid search.")
    rerank: Rerank = setting("auto", "auto: paths once `kgwalk fit-paths` has fitted a prior, else synthetic (none with a hashing-* "
                                     "test embedder) | none: the paper's walk order | paths: the relation-path prior fitted from "
                                     "example questions | synthetic: the label-free prior (docs/synthetic-prior.md).")
    rerank_weight: Weight = setting(2.0, "paths, synthetic: a walk scores cosine + this x its path's share of the prior's vote (chosen "
                                         "on MetaQA dev; bench/results/rerank_weight.md).")
    synthetic: SyntheticConf = field(default_factory=lambda: SyntheticConf())
    candidates: Count = setting(50, "Walks fetched per node by cosine before reranking; a topic the prior reranks also takes the best walk of "
                                    "every other relation path it has (docs/query-and-answer.md).")
    joint_weight: Weight = setting(4.0, "Where a question names several entities (\"which films did A direct that B starred in\"), a walk "
                                        "ending where every one of them reaches within joint_hops steps gains this / those steps, and "
                                        "answer-set lists name such entities first; 0: off (kgwalk/query/steps.py; "
                                        "bench/results/joint_questions.md).")
    joint_hops: Count = setting(2, "How many steps each named entity may be from a joint walk's end.")
    walk_budget: Count | None = setting(None, "At most this many walks over all nodes, best first; null: k_nodes x k_walks.")
    unnamed_walks: Annotated[int, AtLeast(0)] | None = setting(
        1, "Where the question names some of the top nodes, each other one shows this many walks and the named ones share the places "
           "freed (ego: such a node's ego-graph is built from those walks); null: k_walks each, the paper's "
           "(kgwalk/query/diversity.py; bench/results/walk_places.md).")
    max_question_chars: Count = setting(2000, "Longer questions are refused.")
    weak_cosine: float = setting(0.55, "Where the question names no entity of the KG and its best walk's cosine is below this, the "
                                       "retrieval says it found no good match (API: no_good_match; bench/results/no_good_match.md).")
    encoder: QuestionEncoder = setting("onnx", "The question encoder: onnx (ONNX Runtime on a CPU, exported once; a few times faster one "
                                               "question at a time, the same vectors within rounding) | torch: the embed stage's code. A "
                                               "static embed.model encodes its own questions.")
    prior_encoder: str = setting("auto", "What encodes the texts a prior compares (the masked question, the synthetic prior's path "
                                         "questions, the examples `kgwalk fit-paths` fits): auto (a static embed.model's source "
                                         "transformer, all-MiniLM-L6-v2 for static; else the embed model) | embed | a "
                                         "sentence-transformers model, run as `encoder` says.")
    prior_precision: PriorPrecision = setting("int8", "The prior encoder's weights, where it is a transformer of its own (not "
                                                      "embed.model): int8 (ONNX Runtime's int8 weights and activations, CPU: a "
                                                      "question's prior texts in 6 ms against 11 on one core, ranking as well on the "
                                                      "dev sets; bench/results/zero_shot_dev_ablation_prior_int8.md; one text a run, "
                                                      "so a text's vector never depends on its batch mates) | float32.")
    temporal: bool = setting(True, "A time expression in the question (\"in 1994\", \"before 2000\", \"the 90s\") keeps the walks whose "
                                   "year-valued nodes are in range (kgwalk/query/temporal.py; bench/results/temporal.md); false: the "
                                   "question as it is.")
    diversity: WalkDiversity = setting("paths", "How a node's k walks are chosen among its candidates, best first: paths: not one whose "
                                                "end is on a chosen walk nor, while answer-set lists are on, whose relation path from "
                                                "its root a chosen walk has | ends: the end rule only | facts: ends, nor one extending "
                                                "a chosen walk | none: the k best (bench/results/diversity.md).")
    extend_best: bool = setting(True, "Where a node shows 4 or more walks (one the question names: 7 by default), its last place "
                                       "goes to the best walk one step past its best walk's end, a step along an edge first: the "
                                       "answer is often the next fact (the country of a birthplace city); not with diversity facts. "
                                       "Hits@1 is unchanged (bench/results/zero_shot_dev_sets_extend.md).")
    also_chars: int = setting(1000, "Answer sets: each shown walk (ego: line), best first, followed by the other ends of its relation "
                                    "path from its root in the KG (\"Also: X, Y.\"), in at most this many characters over the "
                                    "context; 0: off (bench/results/answer_sets.md).")
    mode: QueryMode = setting("walks", "walks: each top node's top walks (the paper) | ego: each top node's ego-graph, its candidate "
                                       "walks pruned to the edges most relevant to the question, root first (GRAG; "
                                       "kgwalk/query/ego.py).")
    ego_chars: Count | None = setting(None, "ego: the context's length in characters; null: what the k_nodes x k_walks walks take.")
    records: WalkRecordSource = setting("auto", "Where a walk hit's record (its sentence, nodes, relations) comes from: graph (the "
                                                "hits' roots' walks made again from the KG's edges, sentences by the template verbalizer) "
                                                "| memory (every walk's, read once: ~160 B a walk) | tables (each question's rows read "
                                                "from Delta: `kgwalk query`'s) | auto: graph where the sentences are the template's, else "
                                                "memory where it fits records_memory_mib, else tables (kgwalk/index/records.py; "
                                                "bench/results/query_records_metaqa.md).")
    walk_search: WalkSearch = setting("auto", "Where each top node's walks are scored against the question: index (its walk points in "
                                              "the vector index) | graph (its walks made again from the KG, as records=graph makes them, "
                                              "their sentences embedded now: exact vectors, no index pages read) | auto: graph where "
                                              "records come from the graph and the model is static (a few hundred sentences a millisecond), "
                                              "else index (bench/results/query_scale_10m_walk_search.md).")
    walk_search_max_degree: Annotated[int, AtLeast(0)] = setting(1000, "walk_search graph: a node whose root has more adjacency "
                                                                       "entries than this (a hub: as many walks and more) is "
                                                                       "searched in the index, or in hub_walks' cache.")
    hub_walks: HubWalks = setting("cache", "walk_search graph: where the walks of hubs (roots past walk_search_max_degree) are scored: "
                                           "cache (made once per walks version from the graph with their vectors, kept in the user's "
                                           "cache and scored exactly: 1 KB a hub walk; a refresh makes them again in the background "
                                           "while the index answers) | index (their walk points searched: seconds for a hub of 50K "
                                           "walks; kgwalk/query/hub_walks.py).")
    records_memory_mib: Annotated[int, AtLeast(0)] = setting(2048, "auto, where the sentences are a model's: the most walk records "
                                                                   "held in memory (2 GiB: ~13M walks); 0: never.")


@dataclass
class AnswerConf:
    """The one LLM call per question (Fig. 2b)."""

    backend: LLMBackend | None = setting(None, "openai (any OpenAI-compatible endpoint) | transformers | vllm; null: no LLM (answering "
                                               "is an error).")
    context: QueryMode = setting("ego", "What the prompt reads: ego: the top nodes' pruned ego-graphs in the characters walk mode's "
                                        "walks would take (more of the answers: bench/results/ego.md) | walks: the k x k walks.")
    llm: LLMConf = field(default_factory=lambda: LLMConf(max_tokens=128))
    prompt: PromptConf = field(default_factory=PromptConf)


@dataclass
class ServeConf:
    """`kgwalk serve` (docs/service.md)."""

    host: str = setting("127.0.0.1", "The address to bind; loopback unless an API key is set.")
    port: int = setting(8321, "The port to listen on.")
    api_key_env: str = setting("KGWALK_API_KEY", "The environment variable holding the service's key (keys never go in conf).")
    max_k: Count = setting(20, "The most nodes or walks a retrieval may ask for: the Python API, the CLI and the service alike.")
    allowed_hosts: list[str] = setting(doc="Without an API key, requests must name a loopback host or serve.host in their Host header "
                                           "(against DNS rebinding: a web page whose name resolves to 127.0.0.1); more names here, e.g. "
                                           "a reverse proxy's \"kg.internal\" or \"kg.internal:8080\".", factory=list)


@dataclass
class RayConf:
    """The Ray cluster of the verbalize and embed stages."""

    address: str | None = setting(None, "null: RAY_ADDRESS if set, else a local Ray | auto | head:6379 (ray:// is refused: Ray Data "
                                        "cannot run through Ray Client).")
    num_cpus: int | None = setting(None, "CPUs of a local Ray; null: all.")
    runtime_env: dict[str, Any] = setting(doc="Declared for every Ray worker when joining a cluster, next to the kgwalk package itself "
                                              "(shipped as a py_module): pip, env_vars, ... in Ray's runtime_env format.", factory=dict)


@dataclass
class Config:
    """A KG's settings: the sections below, each a YAML mapping of its own."""

    name: str = setting("kg", "The KG's name: one path segment (1-128 letters, digits, '_', '.', '-'), its folder under the warehouse "
                              "and its collections' prefix.")
    warehouse: str = setting("warehouse", "The folder holding every KG's tables and index; on a cluster a filesystem every node "
                                          "mounts at the same path (file:// URIs are accepted).")
    kg: KgConf = field(default_factory=KgConf)
    ingest: IngestConf = field(default_factory=IngestConf)
    quality: QualityConf = field(default_factory=QualityConf)
    spark: SparkConf = field(default_factory=SparkConf)
    walks: WalksConf = field(default_factory=WalksConf)
    verbalize: VerbalizeConf = field(default_factory=VerbalizeConf)
    embed: EmbedConf = field(default_factory=EmbedConf)
    index: IndexConf = field(default_factory=IndexConf)
    query: QueryConf = field(default_factory=QueryConf)
    answer: AnswerConf = field(default_factory=AnswerConf)
    serve: ServeConf = field(default_factory=ServeConf)
    ray: RayConf = field(default_factory=RayConf)

    def __post_init__(self) -> None:
        self.name = kg_name(self.name)
        self.warehouse = warehouse_path(self.warehouse)

    @property
    def root(self) -> Path:
        """The folder holding this KG's Delta tables and its embedded Qdrant shards."""
        return Path(self.warehouse) / self.name

    def table(self, name: str) -> str:
        return str(self.root / name)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# One path segment: letters (any script), digits, '_', '.', '-', not starting with '.' or '-'. The
# name is a folder under the warehouse and the prefix of the index's collection names, so '/',
# '..', spaces and control characters would escape the warehouse or break a collection name.
_KG_NAME = re.compile(r"\w[\w.-]{0,127}")


def kg_name(name: Any) -> str:
    """`name`, checked to be one safe path segment (see _KG_NAME)."""
    if not isinstance(name, str) or not _KG_NAME.fullmatch(name):
        raise KgwalkError(
            f"config: 'name' {name!r} is not a KG name: use 1-128 letters, digits, '_', '.' or '-', "
            "starting with a letter, digit or '_' (it names a folder under the warehouse)"
        )
    return name


def warehouse_path(warehouse: str) -> str:
    """The warehouse as an absolute path: Spark executors and Ray workers run in folders of their
    own, so a relative path would land their output somewhere else. On a cluster it must be a
    filesystem every node mounts at the same path (file:// URIs are accepted)."""
    if warehouse.startswith("file://"):
        warehouse = urllib.parse.unquote(warehouse[len("file://"):])
    elif re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", warehouse):
        raise KgwalkError(
            f"config: 'warehouse' {warehouse!r}: object-store URIs are not supported yet; mount the "
            "bucket on every node (s3fs, gcsfuse, blobfuse) or use a shared filesystem path"
        )
    return os.path.abspath(os.path.expanduser(warehouse))


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*?))?\}")


def _expand_env(value: Any, key: str) -> Any:
    """`${VAR}`, `${VAR:-default}` (unset or empty) and `${VAR-default}` (unset) inside YAML
    strings, from the environment, as in the shell."""
    if isinstance(value, dict):
        return {k: _expand_env(v, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, f"{key}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def lookup(m: re.Match) -> str:
        name, form, default = m.groups()
        got = os.environ.get(name)
        if got or (got is not None and form == "-"):
            return got
        if default is not None:
            return default
        raise KgwalkError(f"config: '{key}' needs the environment variable {name}: export it, or pass --set {key}=...")

    expanded = _ENV_REF.sub(lookup, value)
    # a value that is exactly one reference takes the variable's YAML type (a port, a flag)
    return yaml.safe_load(expanded) if _ENV_REF.fullmatch(value) and expanded else expanded


def _read_yaml(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """One conf file, with the file named by its `base:` key underneath (merged key by key)."""
    if not path.exists():
        raise KgwalkError(f"config: file not found: {path}")
    if path.resolve() in seen:
        raise KgwalkError(f"config: {path} is its own base")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise KgwalkError(f"config: {path} is not valid YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise KgwalkError(f"config: {path} must hold a mapping at top level")
    base = data.pop("base", None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise KgwalkError(f"config: 'base' in {path} must be a file name")
    return _merge(_read_yaml(path.parent / base, (*seen, path.resolve())), data)


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _choice(value: Any, tp: Any, key: str, nullable: bool) -> Any:
    """`value`, checked to be one of the Literal `tp`'s values; the error names the key, the
    value and the choices (`nullable`: None is one too)."""
    allowed = typing.get_args(tp)
    if any(type(value) is type(a) and value == a for a in allowed):
        return value
    noun = re.sub(r"s?\[\d+\]$", "", key.rsplit(".", 1)[-1]).replace("_", " ")  # walks.kinds[1]: kind
    choices = ", ".join(map(str, allowed)) + (" or null" if nullable else "")
    raise KgwalkError(f"config: '{key}': unknown {noun} {value!r} (one of: {choices})")


def _check(value: Any, tp: Any, key: str, nullable: bool = False) -> Any:
    """Coerce/validate one value against a type annotation; raise naming the key."""
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin is Literal:
        return _choice(value, tp, key, nullable)
    if origin is Annotated:
        inner, *bounds = typing.get_args(tp)
        value = _check(value, inner, key, nullable)
        got = f"{value:g}" if isinstance(value, float) else repr(value)
        for bound in bounds:
            if value is None:
                continue
            if isinstance(bound, AtLeast) and value < bound.least:
                raise KgwalkError(f"config: '{key}' must be >= {bound.least:g}, got {got}")
            if isinstance(bound, Above) and value <= bound.bound:
                raise KgwalkError(f"config: '{key}' must be > {bound.bound:g}, got {got}")
            if isinstance(bound, AtMost) and value > bound.most:
                raise KgwalkError(f"config: '{key}' must be <= {bound.most:g}, got {got}")
        return value
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a class, not an instance
        if not isinstance(value, dict):
            raise KgwalkError(f"config: '{key}' must be a mapping, got {type(value).__name__}")
        return _build(tp, value, key + ".")
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors: list[KgwalkError] = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _check(value, a, key, nullable=type(None) in args)
            except KgwalkError as e:
                errors.append(e)
        raise errors[0] if errors else KgwalkError(f"config: bad value for '{key}'")
    if origin is list:
        if not isinstance(value, list):
            raise KgwalkError(f"config: '{key}' must be a list, got {value!r}")
        (item,) = typing.get_args(tp)
        return [_check(v, item, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict):
            raise KgwalkError(f"config: '{key}' must be a mapping, got {value!r}")
        _, vt = typing.get_args(tp)
        return {str(k): _check(v, vt, f"{key}.{k}") for k, v in value.items()}
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is str and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, tp) or (tp is int and isinstance(value, bool)):
        raise KgwalkError(f"config: '{key}' must be {tp.__name__}, got {value!r}")
    return value


# Keys that moved, old -> new: a conf or --set that still names the old one gets the new name in one line.
MOVED_KEYS = {f"query.{old}": f"query.synthetic.{new}" for old, new in (
    ("synthetic_temperature", "temperature"), ("words_per_hop", "words_per_hop"), ("hop_weight", "hop_weight"),
    ("mention_hops", "mention_hops"), ("synthetic_center", "center"), ("synthetic_content_mix", "content_mix"),
    ("synthetic_coverage", "coverage"), ("synthetic_focus", "focus"))}


def _build(cls: type, data: dict[str, Any], prefix: str = "") -> Any:
    hints = typing.get_type_hints(cls, include_extras=True)  # extras: the bounds
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    moved = [prefix + k for k in unknown if prefix + k in MOVED_KEYS]
    if moved:
        raise KgwalkError(f"config: '{moved[0]}' is now '{MOVED_KEYS[moved[0]]}': rename it in your conf or --set")
    if unknown:
        raise KgwalkError(
            f"config: unknown key '{prefix}{unknown[0]}' (known: {', '.join(sorted(names))})"
        )
    return cls(**{k: _check(v, hints[k], prefix + k) for k, v in data.items()})


def _set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    """Set a dotted key. Inside a free-form mapping (spark.settings) the rest of the key is one
    key, since those keys have dots of their own: spark.settings.spark.driver.memory=8g."""
    parts = dotted.split(".")
    node = data
    cls: type | None = Config  # the section's dataclass; None inside a free-form mapping
    while len(parts) > 1:
        p = parts.pop(0)
        hint = typing.get_type_hints(cls).get(p) if cls else None
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise KgwalkError(f"config: cannot set '{dotted}': '{p}' is not a section")
        cls = hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None
        if typing.get_origin(hint) is dict:
            parts = [".".join(parts)]
    node[parts[0]] = value


def load_config(
    path: str | Path | None = None,
    overrides: list[str] | None = None,
    **values: Any,
) -> Config:
    """Load YAML (default conf/local.yaml), apply `a.b=c` overrides, then keyword values.

    Keyword values whose value is None are ignored, so CLI flags left unset keep conf's default.
    """
    conf_path = Path(path) if path else DEFAULT_CONF
    data: dict[str, Any] = {}
    if path or conf_path.exists():
        data = _read_yaml(conf_path)
    for item in overrides or []:
        if "=" not in item:
            raise KgwalkError(f"config: override '{item}' must look like section.key=value")
        key, raw = item.split("=", 1)
        _set_path(data, key.strip(), yaml.safe_load(raw))
    for key, value in values.items():
        if value is not None:
            _set_path(data, key, value)
    return _build(Config, _expand_env(data, ""))  # after overrides: --set replaces a ${VAR}
