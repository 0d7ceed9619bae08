"""The steps of one retrieval (kgwalk/query/retriever.py), each a function of plain data that a test
can call on its own: check the request, decide how many candidates each node fetches, restrict
walks in time, choose the walks each node shows (places, diversity, budget), the candidates ego
mode builds from, and whether the evidence is too weak to call a match."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, get_args

import numpy as np
import pyarrow as pa

from kgwalk.config import QueryConf, QueryMode
from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import hash64, positions
from kgwalk.query.diversity import select_walks, walks_per_node
from kgwalk.query.hits import NodeHit, WalkHit, best_first, walk_hits
from kgwalk.query.lexicon import Mention


@dataclass(frozen=True)
class Request:
    """One question's retrieval, checked: what the caller asked, the config's defaults filled in."""

    question: str
    k_nodes: int
    k_walks: int
    mode: QueryMode


def _count(name: str, value: Any, default: int, max_k: int) -> int:
    if value is None:
        return default  # 0 is an error, not "the default"
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= max_k:
        raise KgwalkError(f"{name} must be 1..{max_k} (serve.max_k), got {value!r}")
    return value


def check_request(question: Any, k_nodes: Any, k_walks: Any, mode: Any, conf: QueryConf, max_k: int, *,
                  names: tuple[str, str] = ("k_nodes", "k_walks")) -> Request:
    """The one check of a retrieval's arguments, for the Python API, the CLI and the service alike:
    a question of 1..query.max_question_chars characters, counts within 1..serve.max_k (whole numbers),
    a known mode. `names`: what the counts are called where they came from (the CLI's flags)."""
    if not isinstance(question, str):
        raise KgwalkError(f"the question must be a string, got {type(question).__name__}")
    if not question.strip():
        raise KgwalkError("the question is empty")
    if len(question) > conf.max_question_chars:
        raise KgwalkError(f"the question has {len(question):,} characters; the limit is query.max_question_chars={conf.max_question_chars:,}")
    if mode is not None and mode not in get_args(QueryMode):
        raise KgwalkError(f"mode must be one of {', '.join(get_args(QueryMode))}, got {mode!r}")
    return Request(question, _count(names[0], k_nodes, conf.k_nodes, max_k), _count(names[1], k_walks, conf.k_walks, max_k), mode or conf.mode)


class Laps:
    """Milliseconds per phase of one retrieval; `clock` is injectable (seconds, monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.last = clock()
        self.spent: dict[str, float] = {}

    def __call__(self, phase: str) -> None:
        now = self.clock()
        self.spent[phase] = self.spent.get(phase, 0.0) + (now - self.last) * 1000
        self.last = now

    @property
    def ms(self) -> dict[str, float]:
        return {phase: round(ms, 3) for phase, ms in self.spent.items()}


def topic_nodes(nodes: list[NodeHit]) -> list[NodeHit]:
    """The nodes a prior scores paths from: those the question names, else all (it names none)."""
    return [n for n in nodes if n.matched] or nodes


def fetch_counts(nodes: list[NodeHit], topics: list[NodeHit], conf: QueryConf, k_walks: int, *, prior: bool, timed: bool) -> dict[int, int]:
    """Per node, the candidate walks walk mode fetches: query.candidates for the topics where walks are chosen among
    more than k_walks (a prior reranks them, a diversity rule passes over some, named nodes take the places others
    leave), and for every node where a time expression filters them; else just the k_walks it shows."""
    wide = max(conf.candidates, k_walks)
    choosing = prior or conf.diversity != "none" or conf.unnamed_walks is not None
    chosen = {n.id for n in topics} if choosing else set()
    return {n.id: wide if timed or n.id in chosen else k_walks for n in nodes}


def best_walks(walks: pa.Table, scores: np.ndarray, roots: dict[int, list[int]], fetch: dict[int, int],
               shown: Callable[[pa.Table], pa.Table] = lambda records: records, joint_ends: np.ndarray | None = None, *,
               every_path: Collection[int] = ()) -> dict[int, list[WalkHit]]:
    """Per node, its fetch[node] best-scored walks among its `roots`' (query.walk_search=graph): `walks` are records with
    a root (kgwalk/index/records.py), or walks that `shown` makes records of (only the chosen ones), `scores` their
    cosines with the question. Ties go to the lower walk id, as the index search breaks them. Then the best walk of
    each relation path they lack (`with_every_path`: of every one for the nodes in `every_path`, else at most as many as
    fetched) and of each of `joint_ends` they do not reach (`nearest_joint_ends`)."""
    of_root, ids, paths = walks.column("root").to_numpy(), walks.column("walk_id").to_numpy(), path_keys(walks)
    joint_ends = np.zeros(0, np.int64) if joint_ends is None else joint_ends
    ends = walk_ends(walks) if len(joint_ends) else None
    chosen = {}
    for node, searched in roots.items():
        rows = np.flatnonzero(_among(of_root, np.asarray(searched, np.int64)))
        order = rows[np.lexsort((ids[rows], -scores[rows]))]
        chosen[node] = with_every_path(paths, order, fetch[node], every=node in every_path)
        if ends is not None:
            chosen[node] = with_joint_ends(ends, order, chosen[node], joint_ends, fetch[node])
    every = np.concatenate([np.zeros(0, np.int64), *chosen.values()])
    hits = iter(walk_hits(scores[every].tolist(), shown(walks.take(pa.array(every)))))  # one take: each costs Arrow calls
    return {node: list(islice(hits, len(rows))) for node, rows in chosen.items()}


def with_every_path(paths: np.ndarray, order: np.ndarray, fetch: int, *, every: bool = False) -> np.ndarray:
    """The `fetch` best rows of `order` (best first), then the best row of each relation path they lack (`paths`: each
    row's `path_keys`): of `every` one, else at most `fetch` more. Where a node has hundreds of walks (a person with
    parents, children, a spouse, a birthplace ...), the best by cosine can all go by a few paths. The prior ranks
    paths, so a topic it reranks takes every path it has (a family KG: "where was E born" had no place_of_birth walk
    among a person's 50 best, nor among the 50 lacking paths next by cosine). A node's paths are bounded by its walks
    and by the relations within walks.depth steps of it."""
    if len(order) <= fetch:
        return order
    rest = order[fetch:]
    lacking = rest[~_among(paths[rest], paths[order[:fetch]])]
    _, first = np.unique(paths[lacking], return_index=True)  # each path's best row
    return np.concatenate([order[:fetch], lacking[np.sort(first)][: None if every else fetch]])


def _among(values: np.ndarray, of: np.ndarray) -> np.ndarray:
    """np.isin(values, of), by a binary search in `of` sorted: a few hundred values among a few dozen, a few calls a
    question, where isin's own overhead was a third of choosing a question's walks."""
    return positions(values, np.sort(of))[1]


def path_keys(walks: pa.Table) -> np.ndarray:
    """Each walk's relation path (its relations and their directions) as one 64-bit number: equal paths, equal keys, in
    any table (a hub's cached walks are keyed once, batch by batch). Relations are ids as the graph makes walks, labels
    in records."""
    relations = walks.column("rels" if "rels" in walks.column_names else "rel_labels").combine_chunks()
    if not len(relations):
        return np.zeros(0, np.uint64)
    values = relations.flatten()  # flatten and value_lengths, not values and offsets: they respect a slice
    if pa.types.is_integer(values.type):
        ids = values.to_numpy().astype(np.uint64)
    else:
        labels = values.dictionary_encode()
        ids = np.array([hash64(label) for label in labels.dictionary.to_pylist()], np.int64).astype(np.uint64)[labels.indices.to_numpy()]
    directions = walks.column("inverse").combine_chunks().flatten().to_numpy(zero_copy_only=False).astype(np.uint64)
    lengths = relations.value_lengths().to_numpy()
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    position = (np.arange(len(ids)) - np.repeat(starts, lengths)).astype(np.uint64)
    with np.errstate(over="ignore"):  # a hash: wrapping is the point
        mixed = _mix(ids ^ _mix(directions + np.uint64(2) * position + np.uint64(1)))
    return np.add.reduceat(mixed, starts)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a 64-bit value's bits spread over all 64."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def walk_ends(walks: pa.Table) -> np.ndarray:
    """The node each walk of `walks` ends at."""
    nodes = walks.column("nodes").combine_chunks()
    return nodes.values.to_numpy()[nodes.offsets.to_numpy()[1:] - 1] if len(nodes) else np.zeros(0, np.int64)


def nearest_joint_ends(joint: dict[int, int]) -> np.ndarray:
    """The entities of `joint` (`joint_reach`) that the named entities reach in the fewest steps: the likeliest answers."""
    if not joint:
        return np.zeros(0, np.int64)
    fewest = min(joint.values())
    return np.array(sorted(e for e, steps in joint.items() if steps == fewest), np.int64)


def with_joint_ends(ends: np.ndarray, order: np.ndarray, chosen: np.ndarray, joint_ends: np.ndarray, most: int) -> np.ndarray:
    """`chosen` rows, then the best row of `order` (best first) ending at each of `joint_ends` that no chosen row ends at,
    at most `most` more: where a question names two hubs ("who wears number 10 for Brazil"), the walk to the one player
    at both is rarely among either's best by cosine, and the joint term can only reward the walks it is shown."""
    missing = np.setdiff1d(joint_ends, ends[chosen])
    rows = order[np.isin(ends[order], missing)]
    _, first = np.unique(ends[rows], return_index=True)  # the best row per end
    return np.concatenate([chosen, rows[np.sort(first)][:most]])


def restrict_in_time(candidates: dict[int, list[WalkHit]], judge: Callable[[Sequence[int]], int], penalty: float) -> dict[int, list[WalkHit]]:
    """Each node's walks less those whose times all fall outside the question's range (`judge`: -1 out, 0 no time,
    1 in range); a walk with no time loses `penalty` and so ranks after those in range (kgwalk/query/temporal.py)."""
    kept: dict[int, list[WalkHit]] = {}
    for node, walks in candidates.items():
        kept[node] = []
        for walk in walks:
            verdict = judge(walk.nodes)
            if verdict == 0:
                walk.score -= penalty
            if verdict >= 0:
                kept[node].append(walk)
    return kept


def choose_walks(nodes: list[NodeHit], fetched: list[list[WalkHit]], k_walks: int, conf: QueryConf, *,
                 extensions: list[list[WalkHit]] | None = None) -> list[int]:
    """Set each node's shown walks from its `fetched` candidates (best first): its places (query.unnamed_walks), a
    diversity rule (query.diversity), then the budget over all nodes (query.walk_budget). Returns the places. The best
    walk's next step (query.extend_best) is looked for among each node's `extensions` (its `fetched` where None)."""
    # a repeated relation path is no repeat without the answer-set list naming its other ends (kgwalk/query/diversity.py)
    diversity = "ends" if conf.diversity == "paths" and not conf.also_chars else conf.diversity
    places = walks_per_node([n.matched for n in nodes], [len(f) for f in fetched], k_walks, conf.unnamed_walks)
    for node, walks, k, beyond in zip(nodes, fetched, places, extensions or fetched):
        node.walks = select_walks(walks, k, diversity, extend_best=conf.extend_best, extensions=beyond)
    if conf.walk_budget is not None:
        keep = {id(w) for w in sorted((w for n in nodes for w in n.walks), key=best_first)[: conf.walk_budget]}
        for node in nodes:
            node.walks = [w for w in node.walks if id(w) in keep]
    return places


def ego_candidates(nodes: list[NodeHit], candidates: dict[int, list[WalkHit]], places: list[int], conf: QueryConf) -> dict[int, list[WalkHit]]:
    """What each node's ego-graph is built from: its candidates; where the question names some top nodes and
    query.unnamed_walks is set, a node it does not name builds from the walks walk mode shows of it."""
    if conf.unnamed_walks is None or not any(n.matched for n in nodes):
        return candidates
    return {n.id: candidates[n.id] if n.matched else candidates[n.id][:k] for n, k in zip(nodes, places)}


def names_an_entity(mention: Mention) -> bool:
    """Whether a mention is evidence that the question names an entity: bracketed, several words, capitalized as a
    name, or a numeral ("who wears number 10 for Brazil": a shirt number's node). One lowercase word is not: KGs name
    entities like common words ("water" in "what is the boiling point of water" is a film of MetaQA's)."""
    text = mention.text.strip()
    return mention.bracketed or " " in text or any(c.isupper() or c.isdigit() for c in text)


def joint_reach(reaches: list[dict[int, int]]) -> dict[int, int]:
    """Where a question names several entities (each one's `AnswerSets.reach`): the entities every one of them reaches,
    with the most steps any of them takes ("which films did A direct that B starred in": a film of both, 1 step)."""
    if len(reaches) < 2:
        return {}
    shared = set(reaches[0]).intersection(*reaches[1:])
    return {e: max(reach[e] for reach in reaches) for e in shared}


def reward_joint_ends(candidates: dict[int, list[WalkHit]], joint: dict[int, int], weight: float) -> None:
    """A walk ending where every named entity reaches gains `weight` / the steps that takes (query.joint_weight): the
    answer to a question about what lies at several entities is reachable from each of them."""
    for walks in candidates.values():
        for walk in walks:
            if walk.end_node in joint:
                walk.score += weight / joint[walk.end_node]


def weak_match(mentions: list[Mention], best: WalkHit | None, least_cosine: float) -> bool:
    """Whether the evidence is too weak to call a match: no walk at all, or the question names no entity of the
    KG (`names_an_entity`) and the best walk's cosine to it is below `least_cosine` (query.weak_cosine)."""
    return best is None or (not any(map(names_an_entity, mentions)) and best.cosine < least_cosine)
