"""How many walks each top node shows (query.unnamed_walks), and which of its candidates (query.diversity).

The paper shows k walks for each of the top k nodes. Where the question names an entity (hybrid
search finds its label), the other top nodes are the dense search's look-alikes ("The Cowboy and
the Lady" for "describe The Cowboy Way in a few words"): each keeps query.unnamed_walks of its
walks (its best, by default), and the named nodes share the places this frees, so the entity
asked about shows more of its facts in a context of the same size. In ego mode (kgwalk/query/ego.py)
such a node's ego-graph is built from the walks it would show, so its lines leave the character
budget to the named ones'.

BFS walks of one root share prefixes: "E starred in Farewell.", "E starred in Farewell, which
was directed by Christian Carion." and "E starred in Farewell, which is in French." are one fact
three times, and ranked by cosine they often fill a node's k places together. A diversity rule
picks walks best score first and passes over a walk that repeats what the chosen ones show:

- `none`: the k best (the paper's order);
- `ends`: a walk whose end entity is already on a chosen walk (a prefix of a chosen walk, or
  another way to the same answer);
- `facts`: `ends`, and a walk that extends a chosen walk (the chosen walk's entities are its
  first ones: "..., which was directed by ..." after "E starred in Farewell.");
- `paths`: `ends`, and a walk with a chosen walk's relation path from the same root ("The Game
  Plan has genre Sport." after "... has genre Family."), where answer-set lists are on: the chosen
  walk's list names every other end of its path, so the place goes to another relation.

The best walk is always kept, so extractive Hits@1 does not change; where fewer than k walks
pass, the best of the passed-over ones fill the rest, so a node shows as many walks as before.

Many answers to one question are parallel facts ("what films did E star in"), more than k walks
hold: kgwalk/query/answer_sets.py completes a shown walk's answer set from the KG (query.also_chars).
"""

from __future__ import annotations

from kgwalk.config import WalkDiversity
from kgwalk.query.hits import WalkHit, best_first


def _extends(walk: WalkHit, shorter: WalkHit) -> bool:
    return len(walk.nodes) > len(shorter.nodes) and walk.nodes[: len(shorter.nodes)] == shorter.nodes


def _same_route(walk: WalkHit, other: WalkHit) -> bool:
    return walk.signature == other.signature and walk.nodes[0] == other.nodes[0]


def repeats(walk: WalkHit, chosen: list[WalkHit], diversity: WalkDiversity) -> bool:
    """Whether `walk` shows nothing new beside the `chosen` walks of its node, by the rule."""
    if diversity == "none":
        return False
    if any(walk.end_node in c.nodes for c in chosen):
        return True
    if diversity == "paths":
        return any(_same_route(walk, c) for c in chosen)
    return diversity == "facts" and any(_extends(walk, c) for c in chosen)


def walks_per_node(named: list[bool], available: list[int], k_walks: int, unnamed_walks: int | None) -> list[int]:
    """How many walks each top node shows, in rank order: k_walks each (the paper's) where `unnamed_walks` is None or
    the question names none or all of them (`named`); else `unnamed_walks` (at most k_walks) for each node it does not
    name and the places this frees for the named ones, one at a time in rank order. `available`: each node's candidate
    walks; the places a named node has no walk for pass to the next, and then back to the unnamed ones, so the
    context holds as many walks as the paper's wherever there are as many."""
    if unnamed_walks is None or all(named) or not any(named):
        return [k_walks] * len(named)
    places = [min(k_walks if is_named else unnamed_walks, k_walks, a) for is_named, a in zip(named, available)]
    room = [a if is_named else min(a, k_walks) for is_named, a in zip(named, available)]
    free = k_walks * len(named) - sum(places)
    for group in (True, False):  # the named nodes first, then back to the others
        while takers := [i for i, is_named in enumerate(named) if is_named == group and places[i] < room[i]][:free]:
            for i in takers:
                places[i] += 1
            free -= len(takers)
    return places


# the fewest walks a node shows for its last place to go to its best walk's next step: a node the question names shows 7
# with the default k (3 nodes x 3 walks, 1 each for the others); a node showing the paper's 3 keeps its runners-up, the
# likelier answers where the best walk is wrong
EXTEND_FROM = 4


def best_extension(best: WalkHit, ranked: list[WalkHit]) -> WalkHit | None:
    """Among `ranked` (best first), the best walk that goes one step past `best`'s end, a step along an edge first (an
    attribute of that end: the country of a birthplace, not one of the many films made there); None where none does."""
    extensions = [w for w in ranked if len(w.nodes) == len(best.nodes) + 1 and _extends(w, best)]
    forward = [w for w in extensions if not w.signature.rsplit("|", 1)[-1].startswith("<")]
    return next(iter(forward or extensions), None)


def select_walks(walks: list[WalkHit], k: int, diversity: WalkDiversity, *, extend_best: bool = False,
                 extensions: list[WalkHit] | None = None) -> list[WalkHit]:
    """The k walks a node shows, best score first: the best walks that repeat none chosen before
    them, topped up with the best passed-over ones where fewer than k remain. With `extend_best`
    (query.extend_best), where k is EXTEND_FROM or more, the best walk's `best_extension` takes the last place (not
    under `facts`, which shows no walk extending a chosen one), found among `extensions` (`walks` where None): all the
    node's candidates, where `walks` are its best few, as the next step past a short best walk ranks low."""
    ranked = sorted(walks, key=best_first)
    if diversity == "none":
        chosen = ranked[:k]
    else:
        chosen = []
        passed_over: list[WalkHit] = []
        for walk in ranked:
            if len(chosen) == k:
                break
            (passed_over if repeats(walk, chosen, diversity) else chosen).append(walk)
        chosen = sorted(chosen + passed_over[: k - len(chosen)], key=best_first)
    if extend_best and diversity != "facts" and len(chosen) >= EXTEND_FROM:
        extension = best_extension(chosen[0], ranked if extensions is None else sorted(extensions, key=best_first))
        if extension is not None and all(extension is not c for c in chosen):
            chosen = [*chosen[:-1], extension]
    return sorted(chosen, key=best_first)

