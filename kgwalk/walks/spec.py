"""WalkSpec: everything that determines a walk table, so equal specs give equal tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from kgwalk.config import BfsMode, WalkDirection, WalkKind, WalksConf
from kgwalk.errors import KgwalkError


@dataclass(frozen=True)
class WalkSpec:
    """How walks are generated from every root.

    direction: `out` follows edges head->tail (the paper); `in` only backwards; `both` either way,
        recording a backward step as the inverse relation.
    depth: BFS depth d (max shortest-path distance); also bounds the hub rule's reach.
    hub_degree: a walk may end at a node with more adjacency entries than this, never pass through
        it (the root itself always expands). None disables the rule.
    bfs_mode: `reached` keeps one walk per reached node (the paper's reference); `maximal` keeps
        only walks no other kept walk of the root extends (a prefix says nothing its extension
        does not), applied after both caps; `paths` keeps one walk per relation path a simple
        walk can follow (up to max_per_signature), so a path whose ends other paths reached
        first still has a walk, and every fact of the root is a 1-step walk.
    max_per_signature: BFS keeps at most this many walks of 2+ steps per (root, relation-path
        signature), the first in canonical order; 1-step walks (the root's own facts) are all
        kept. None disables the cap.
    max_per_root: at most this many walks per root and kind (BFS shortest first, random most
        frequent first). None disables it.
    walks_per_root, length: random walks (n_w and l of Eq. 1), deduplicated per root with a count.
    """

    kinds: tuple[WalkKind, ...] = ("bfs",)
    direction: WalkDirection = "both"
    depth: int = 3
    hub_degree: int | None = 50
    bfs_mode: BfsMode = "paths"
    max_per_signature: int | None = 1
    max_per_root: int | None = None
    seed: int = 42
    walks_per_root: int = 60
    length: int = 3

    def __post_init__(self) -> None:
        # choices from conf were checked as it loaded; these guard a spec built in code
        if self.direction not in get_args(WalkDirection):
            raise KgwalkError(f"walks.direction must be one of {get_args(WalkDirection)}, got {self.direction!r}")
        if self.bfs_mode not in get_args(BfsMode):
            raise KgwalkError(f"walks.bfs_mode must be one of {get_args(BfsMode)}, got {self.bfs_mode!r}")
        bad = [k for k in self.kinds if k not in get_args(WalkKind)]
        if bad or not self.kinds:
            raise KgwalkError(f"walks.kinds must be a non-empty subset of {get_args(WalkKind)}, got {list(self.kinds)}")
        for name in ("depth", "walks_per_root", "length"):
            if getattr(self, name) < 1:
                raise KgwalkError(f"walks.{name} must be >= 1, got {getattr(self, name)}")
        for name in ("hub_degree", "max_per_signature", "max_per_root"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise KgwalkError(f"walks.{name} must be >= 1 or null, got {value}")

    @classmethod
    def from_conf(cls, conf: WalksConf) -> WalkSpec:
        return cls(
            kinds=tuple(conf.kinds),
            direction=conf.direction,
            depth=conf.depth,
            hub_degree=conf.hub_degree,
            bfs_mode=conf.bfs_mode,
            max_per_signature=conf.max_per_signature,
            max_per_root=conf.max_per_root,
            seed=conf.seed,
            walks_per_root=conf.random.walks_per_root,
            length=conf.random.length,
        )
