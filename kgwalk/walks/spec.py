"""WalkSpec: everything that determines a walk table, so equal specs give equal tables."""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from kgwalk.config import BfsMode, WalkDirection, WalkKind, WalksConf
from kgwalk.errors import KgwalkError

_DEFAULTS = WalksConf()  # a spec built in code starts from the settings' defaults, declared once in kgwalk/config.py


@dataclass(frozen=True)
class WalkSpec:
    """How walks are generated from every root: the walks.* settings of the same names
    (walks_per_root and length: walks.random's), described in kgwalk/config.py (docs/config.md).
    Equal specs give equal walk tables."""

    kinds: tuple[WalkKind, ...] = tuple(_DEFAULTS.kinds)
    direction: WalkDirection = _DEFAULTS.direction
    depth: int = _DEFAULTS.depth
    hub_degree: int | None = _DEFAULTS.hub_degree
    bfs_mode: BfsMode = _DEFAULTS.bfs_mode
    max_per_signature: int | None = _DEFAULTS.max_per_signature
    max_per_root: int | None = _DEFAULTS.max_per_root
    seed: int = _DEFAULTS.seed
    walks_per_root: int = _DEFAULTS.random.walks_per_root
    length: int = _DEFAULTS.random.length

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
