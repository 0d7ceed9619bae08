"""What a build and a refresh did, stage by stage."""

from __future__ import annotations

from dataclasses import dataclass, field

from kgwalk.kg.changes import KgUpdate


@dataclass
class BuildReport:
    seconds: dict[str, float] = field(default_factory=dict)
    walks: int = 0
    nodes: int = 0
    index_bytes: int = 0
    kept: list[str] = field(default_factory=list)  # stages an earlier run left up to date (Runner.build)


@dataclass
class RefreshReport:
    kg: KgUpdate | None = None
    affected_roots: int = 0
    walks_recomputed: int = 0
    walks_added: int = 0
    walks_removed: int = 0
    walks_recounted: int = 0  # same walk, new multiplicity (random walks): payload only
    verbalized: int = 0
    embedded: int = 0
    points_upserted: int = 0
    points_deleted: int = 0
    nodes_upserted: int = 0
    nodes_deleted: int = 0
    skipped: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def summary(self) -> str:
        return (
            f"{self.affected_roots:,} affected roots, {self.walks_recomputed:,} walks recomputed "
            f"(+{self.walks_added:,} -{self.walks_removed:,}, {self.walks_recounted:,} recounted); "
            f"{self.verbalized:,} verbalized, {self.embedded:,} embedded; index +{self.points_upserted:,} "
            f"-{self.points_deleted:,} walk points, {self.nodes_upserted:,} nodes updated, {self.nodes_deleted:,} removed"
        )
