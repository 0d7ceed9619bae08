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
VectorDatatype = Literal["float32", "float16"]
NodeSearch = Literal["dense", "hybrid"]
Rerank = Literal["auto", "none", "paths", "synthetic"]
QuestionEncoder = Literal["onnx", "torch"]
QueryMode = Literal["walks", "ego"]
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


@dataclass
class KgConf:
    path: str | None = None
    format: KgFormat = "auto"


@dataclass
class IngestConf:
    max_label_length: int = 1000
    # entity alignment (kgwalk/kg/align.py): link entities whose labels name the same thing and
    # whose neighbours overlap at least align_threshold; align_overrides: a reviewed CSV of decisions
    align: bool = False
    align_threshold: float = 0.5
    align_overrides: str | None = None


@dataclass
class QualityConf:
    """Data-quality gates: each stage validates its output before committing it."""

    gates: bool = True
    max_rejected_ratio: float = 0.05  # of the records read by ingest
    relations: list[str] = field(default_factory=list)  # the known relation vocabulary; empty = any
    max_text_length: int = 10_000  # characters of a sentence
    max_fallback_ratio: float = 0.2  # LLM verbalizers: sentences that fell back to the template


@dataclass
class SparkConf:
    master: str = "local[*]"
    app_name: str = "kgwalk"
    partitions: int = 0  # root partitions for the walk job; 0 = 2 x default parallelism
    settings: dict[str, str] = field(default_factory=dict)


@dataclass
class RandomWalkConf:
    walks_per_root: int = 60
    length: int = 3


@dataclass
class WalksConf:
    kinds: list[WalkKind] = field(default_factory=lambda: ["bfs"])
    direction: WalkDirection = "both"
    depth: int = 3
    hub_degree: int | None = 50
    bfs_mode: BfsMode = "paths"
    max_per_signature: int | None = 1
    max_per_root: int | None = None
    seed: int = 42
    engine: WalkEngine = "auto"
    max_graph_bytes: int = 4 * 2**30  # auto: the in-memory engine up to this CSR size, else join
    roots_per_batch: int = 1024
    max_paths_per_batch: int = 4_000_000
    random: RandomWalkConf = field(default_factory=RandomWalkConf)


@dataclass
class LLMConf:
    """One LLM, reached one of three ways (the verbalizer or answerer names which)."""

    model: str | None = None  # HF name or path (vllm, transformers); the served model's name (openai)
    max_tokens: int = 64
    temperature: float = 0.0
    batch_size: int = 64  # prompts per generate call (transformers); vLLM schedules its own batches
    device: str = "auto"  # transformers: auto (cuda if present) | cpu | cuda | cuda:N
    dtype: LLMDtype = "auto"  # transformers
    engine_args: dict[str, Any] = field(default_factory=dict)  # vllm.LLM(...) keyword arguments
    base_url: str | None = None  # openai: http://host:8000/v1
    api_key_env: str = "OPENAI_API_KEY"  # openai: the variable holding the key (never the key itself)
    concurrency: int = 8  # openai: requests in flight per actor
    requests_per_second: float | None = None  # openai: per actor; None = unlimited
    max_retries: int = 5  # openai: on 429, 5xx, timeouts and dropped connections, with backoff
    timeout_s: float = 60.0


@dataclass
class PromptConf:
    """Empty fields: the paper's prompt (Fig. 2a for verbalizing, Fig. 2b for answering)."""

    system: str = ""
    user: str = ""  # verbalize: must contain {triples}; answer: {question} and {context}


@dataclass
class VerbalizeConf:
    verbalizer: VerbalizerName = "template"
    batch_size: int = 8192
    # relation label -> [forward phrase, inverse phrase]
    phrases: dict[str, list[str]] = field(default_factory=dict)
    llm: LLMConf = field(default_factory=LLMConf)
    prompt: PromptConf = field(default_factory=PromptConf)
    actors: int = 1  # LLM verbalizers: Ray actors, each holding one model or client
    num_gpus: float = 0  # per actor (vllm, transformers on GPU workers)
    cache: bool = True  # LLM verbalizers: reuse sentences from <warehouse>/_cache/verbalize


@dataclass
class EmbedConf:
    # auto | a sentence-transformers model | static | static:<sentence-transformers model> | a
    # static model's folder (kgwalk/embed/static.py) | hashing-<dim>. auto: static on a CPU (MiniLM
    # distilled, ~100x faster to build; query.prior_encoder auto keeps MiniLM's path matching),
    # all-MiniLM-L6-v2 with device cuda (bench/results/embed_quality_static.md)
    model: str = "auto"
    batch_size: int = 0  # sentences per forward pass; 0 = 32 on CPU, 1024 on CUDA
    actors: int = 0  # 0 = one less than the CPUs Ray sees (at least 1)
    threads_per_actor: int = 0  # 0 = CPUs / actors
    device: str = "cpu"
    # auto: bf16 on CPUs with AMX/AVX512-BF16, fp16 on CUDA; int8: ONNX Runtime, CPU
    precision: EmbedPrecision = "auto"

    def __post_init__(self) -> None:
        if self.model == "auto":  # resolved here, so that fingerprints, checks and caches see the model itself
            self.model = "all-MiniLM-L6-v2" if self.device.startswith("cuda") else "static"


@dataclass
class IndexConf:
    backend: IndexBackend = "edge"  # edge: in-process Qdrant | server: Qdrant via qdrant-client
    url: str | None = None  # server backend: http://host:6333, or ":memory:" / a path for local mode
    api_key_env: str = "QDRANT_API_KEY"
    hnsw_m: int = 16
    upsert_batch: int = 2048
    # walk vectors: float16 (edge and server) takes half the bytes of float32; they are rounded before
    # the node sums see them, so refresh stays bit-exact (bench/results/index.md)
    vector_datatype: VectorDatatype = "float16"
    # edge backend: a refresh merges the walks' delta into a new base once delta and masked
    # points pass this fraction of the base (one copy of the base, amortised over refreshes)
    compact_ratio: float = 0.2
    max_retries: int = 5  # server backend: retries of a failed request (connection errors, 429, 5xx)
    retry_backoff_s: float = 0.5  # first wait; doubles per retry, with jitter


@dataclass
class SyntheticConf:
    """query.rerank=synthetic: the label-free prior, the corpus's relation paths read as questions
    (kgwalk/query/synthetic.py; docs/synthetic-prior.md). Each term scores a path against the
    question with its topic masked; every value below was chosen on MetaQA dev."""

    # softmax temperature over the paths' scores; lower gives the best path more of the share
    temperature: Annotated[float, Above(0)] = 0.03
    # how many relation steps the question asks for: its content words (topic and function words
    # left out) / words_per_hop; a path scores hop_weight less per step it differs from that count
    # (0 = off). MetaQA's questions spend about 1.75 content words a step ("what movies did E act
    # in": 2; "who directed the films E acted in": 4); bench/results/zero_shot_ranking.md
    words_per_hop: Annotated[float, Above(0)] = 1.75
    hop_weight: Weight = 0.16
    # or, where more, mention_hops steps per relation the question names by a word of the KG's
    # relation phrases ("who directed the films written by the writer of E": 4 content words, 3
    # relations named, 3 steps; 0 = words only). bench/results/relation_mentions.md
    mention_hops: Weight = 0.9
    # compare the question with each path question less the mean path question (what every path
    # of this KG shares, e.g. that it is about films); false = raw cosines
    center: bool = True
    # the share of the match read from content words alone (function words and placeholders left
    # out; one more question encoding), the rest from the whole questions: a static embedder
    # averages its tokens, so shared function words swamp the relation words
    # (bench/results/embed_quality_static.md)
    content_mix: Share = 0.5
    # a path gains this much per unit of its coverage: the mean over its question's content words
    # of the best match among the question's (word-vector cosine, 1 for words of one stem; 0 = off).
    # Word vectors are embed.model's (a static model: a lookup). bench/results/path_words.md
    coverage: Weight = 0.4
    # questions name the relation they ask the answer by next to their wh-word ("who directed ...",
    # "... are written by who"); a path gains this much per unit its last step matches the words
    # nearest the wh-word better than its steps on average (0 = off). bench/results/answer_focus.md
    focus: Weight = 0.3
    # the weight of the question's n-th content word nearest its wh-word: focus_decay ** n
    focus_decay: Annotated[float, Above(0), AtMost(1)] = 0.3
    # a path more than this many steps longer than the question asks for gains nothing from the focus
    # ("what was the release year of E": E's director's other films' years end in that relation too)
    focus_slack: Weight = 1.0


@dataclass
class QueryConf:
    k_nodes: Count = 3
    k_walks: Count = 3  # per node
    # dense: the paper's node search | hybrid: dense fused (RRF) with entity labels found in the question
    node_search: NodeSearch = "hybrid"
    rrf_k: int = 60
    # none: the paper's walk order | paths: a relation-path prior fitted from example questions
    # (`kgwalk fit-paths`), added to each candidate walk's cosine | synthetic: a prior without
    # labels, the corpus's relation paths read as questions (kgwalk/query/synthetic.py) | auto:
    # paths where fitted, else synthetic (none with a hashing-* test embedder, which has no meaning)
    rerank: Rerank = "auto"
    rerank_weight: Weight = 2.0  # chosen on MetaQA dev with a prior fitted on the rest of dev (bench/results/embed_quality_static.md)
    synthetic: SyntheticConf = field(default_factory=lambda: SyntheticConf())
    candidates: Count = 50  # walks fetched per node before reranking
    # where a question names several entities ("which films did A direct that B starred in"), a walk ending where every
    # one of them reaches within joint_hops steps gains joint_weight / those steps, and answer-set lists name such
    # entities first (0 = off; kgwalk/query/steps.py; bench/results/joint_questions.md)
    joint_weight: Weight = 4.0
    joint_hops: Count = 2
    walk_budget: Count | None = None  # at most this many walks over all nodes, best first; None = k_nodes x k_walks
    # where the question names some of the top nodes (hybrid search), each other one shows this many walks and the
    # named ones share the k_walks places this frees: the dense search's look-alikes ("The Cowboy and the Lady" for
    # "The Cowboy Way") keep their best walk, the entity asked about shows more of its facts; in ego mode such a node's
    # ego-graph is built from those walks alone. None: k_walks each (the paper's). kgwalk/query/diversity.py;
    # bench/results/walk_places.md
    unnamed_walks: Annotated[int, AtLeast(0)] | None = 1
    max_question_chars: Count = 2000
    # below this cosine of the best walk to the question, where the question names no entity of the KG, the retrieval
    # says it found no good match (API: no_good_match; the CLI and the page show a line). Calibrated on MetaQA dev:
    # bench/results/no_good_match.md
    weak_cosine: float = 0.55
    # onnx: the question encoder on ONNX Runtime (CPU; a few times faster one question at a time,
    # same vectors within rounding) | torch: the embed stage's own code. A static embed.model is
    # its own question encoder (numpy, no torch), whatever this says.
    encoder: QuestionEncoder = "onnx"
    # the model that encodes what a prior compares (the question with its topic masked, the
    # synthetic prior's path questions, the examples `kgwalk fit-paths` fits): auto (a static
    # embed.model's source transformer, e.g. all-MiniLM-L6-v2 for static; else the embed model) |
    # embed (the walks' embed.model) | a sentence-transformers model, run as query.encoder says.
    # They are a few texts a question, so a transformer here costs milliseconds
    prior_encoder: str = "auto"
    # a time expression in the question ("in 1994", "the 90s") restricts walks to those whose
    # time-valued nodes fall in its range (kgwalk/query/temporal.py; bench/results/temporal.md)
    temporal: bool = True
    # how each node's k walks are chosen among its candidates, best first: none: the k best | ends:
    # not a walk whose end entity is on a chosen one | facts: ends, nor one that extends a chosen
    # one | paths: ends, and while answer-set lists are on (query.also_chars), nor one whose relation
    # path a chosen one has from its root (that walk's list names its other ends) (kgwalk/query/diversity.py;
    # bench/results/diversity.md, walk_places.md)
    diversity: WalkDiversity = "paths"
    # complete answer sets: after each shown walk (ego: line), best first, the other ends of its
    # relation path from its root, read off the KG ("... starred in Farewell. Also: Underground,
    # Arizona Dream."), until this many characters of lists are spent; 0 = off
    # (kgwalk/query/answer_sets.py; bench/results/answer_sets.md)
    also_chars: int = 1000
    # walks: each top node's top walks (the paper) | ego: each top node's ego-graph, the union of
    # its candidate walks, pruned to the edges most relevant to the question and told root first,
    # then its neighbours, then theirs (GRAG's soft pruning; kgwalk/query/ego.py)
    mode: QueryMode = "walks"
    # ego: the context's length in characters; None = what walk mode's k_nodes x k_walks walks take
    ego_chars: Count | None = None


@dataclass
class AnswerConf:
    """The one LLM call per question (Fig. 2b)."""

    backend: LLMBackend | None = None  # None = no LLM (answering is an error)
    # what the prompt's context is: ego: each top node's pruned ego-graph in the characters walk
    # mode's walks would take (more of the answers: bench/results/ego.md) | walks: the k x k walks
    context: QueryMode = "ego"
    llm: LLMConf = field(default_factory=lambda: LLMConf(max_tokens=128))
    prompt: PromptConf = field(default_factory=PromptConf)


@dataclass
class ServeConf:
    host: str = "127.0.0.1"  # loopback unless an API key is set
    port: int = 8321
    api_key_env: str = "KGWALK_API_KEY"  # the variable holding the key; keys never go in conf
    max_k: Count = 20  # the most nodes or walks a retrieval may ask for: the Python API, the CLI and the service alike
    # Without an API key, requests must name a loopback host or serve.host in their Host header
    # (against DNS rebinding: a web page whose name resolves to 127.0.0.1); more names here, e.g.
    # a reverse proxy's "kg.internal" or "kg.internal:8080"
    allowed_hosts: list[str] = field(default_factory=list)


@dataclass
class RayConf:
    address: str | None = None  # None = RAY_ADDRESS if set, else start a local Ray
    num_cpus: int | None = None
    # Declared for every Ray worker when joining a cluster, next to the kgwalk package itself
    # (shipped as a py_module): pip, env_vars, ... in Ray's runtime_env format.
    runtime_env: dict[str, Any] = field(default_factory=dict)


@dataclass
class Config:
    name: str = "kg"
    warehouse: str = "warehouse"
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
