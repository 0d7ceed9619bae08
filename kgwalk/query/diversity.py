"""Which k of a node's candidate walks it shows (query.diversity).

BFS walks of one root share prefixes: "E starred in Farewell.", "E starred in Farewell, which
was directed by Christian Carion." and "E starred in Farewell, which is in French." are one fact
three times, and ranked by cosine they often fill a node's k places together. A diversity rule
picks walks best score first and passes over a walk that repeats what the chosen ones show:

- `none`: the k best (the paper's order);
- `ends`: a walk whose end entity is already on a chosen walk (a prefix of a chosen walk, or
  another way to the same answer);
- `facts`: `ends`, and a walk that extends a chosen walk (the chosen walk's entities are its
  first ones: "..., which was directed by ..." after "E starred in Farewell.").

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


def repeats(walk: WalkHit, chosen: list[WalkHit], diversity: WalkDiversity) -> bool:
    """Whether `walk` shows nothing new beside the `chosen` walks of its node, by the rule."""
    if diversity == "none":
        return False
    if any(walk.end_node in c.nodes for c in chosen):
        return True
    return diversity == "facts" and any(_extends(walk, c) for c in chosen)


def select_walks(walks: list[WalkHit], k: int, diversity: WalkDiversity) -> list[WalkHit]:
    """The k walks a node shows, best score first: the best walks that repeat none chosen before
    them, topped up with the best passed-over ones where fewer than k remain."""
    ranked = sorted(walks, key=best_first)
    if diversity == "none":
        return ranked[:k]
    chosen: list[WalkHit] = []
    passed_over: list[WalkHit] = []
    for walk in ranked:
        if len(chosen) == k:
            break
        (passed_over if repeats(walk, chosen, diversity) else chosen).append(walk)
    chosen += passed_over[: k - len(chosen)]
    return sorted(chosen, key=best_first)

