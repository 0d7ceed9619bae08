"""Generations of an index folder: `g<NNNNNN>` folders, the CURRENT pointer to the live one,
each generation's MANIFEST.json (its collections' layouts and what it reflects), and the
clean-up of generations no longer referenced. No vector engine here: the layouts are records.

Nothing here follows a symbolic link: writers refuse a KG folder with one in it before they
start (kgwalk.state.check_kg_folder), and a link planted since is refused here too, never
written or deleted through."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any

from kgwalk.errors import KgwalkError
from kgwalk.storage import link_refusal, open_no_follow

_MANIFEST = "MANIFEST.json"
_CURRENT = "CURRENT"


@dataclass
class Layout:
    """One collection of a generation. `base` is its shard folder relative to the store folder:
    this generation's own `<generation>/<name>` for a plain collection, an earlier generation's
    for a layered one, whose own folder then holds the delta."""

    dim: int
    graph: bool
    base: str
    base_points: int
    delta_points: int = 0
    masked_points: int = 0
    sums_base: str | None = None  # `<generation>/<name>` of the base node-sums files, if kept
    sums_base_rows: int = 0
    datatype: str = "float32"  # of the vectors (generations written before it was recorded: float32)
    unindexed_points: int = 0  # graph: points written since its HNSW graph was last built (see EdgeStore.finish)
    root_map: bool = False  # graphless: roots kept in a RootMap beside the shards (kgwalk.index.root_map), not as payloads


def write_atomically(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """`path` replaced by what `write` writes, whole or not at all (a link at `path` is replaced,
    its target never written)."""
    tmp = path.with_name(path.name + ".tmp")
    with os.fdopen(open_no_follow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


class Generations:
    """The generation folders under `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def live(self) -> str | None:
        current = self.folder / _CURRENT
        return str(json.loads(current.read_text())["generation"]) if current.exists() else None

    def manifest(self, generation: str) -> dict[str, Any] | None:
        path = self.folder / generation / _MANIFEST
        return json.loads(path.read_text()) if path.exists() else None

    def start_next(self) -> str:
        """A new empty generation after the live one; leftovers of a writer that crashed before
        its commit are removed first."""
        live = self.live()
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in self._generation_folders():
            if live is None or path.name > live:
                shutil.rmtree(path)
        generation = f"g{int(live[1:]) + 1 if live else 1:06d}"
        (self.folder / generation).mkdir()
        return generation

    def _generation_folders(self) -> list[Path]:
        """The `g*` folders; a link among them is refused, never followed into."""
        folders = []
        for path in self.folder.glob("g*"):
            if path.is_symlink():
                raise KgwalkError(link_refusal(path))
            if path.is_dir():
                folders.append(path)
        return folders

    def write_manifest(self, generation: str, layouts: dict[str, Layout], reflects: dict[str, Any] | None) -> None:
        manifest = {"collections": {n: asdict(v) for n, v in layouts.items()}, "reflects": reflects}
        write_atomically(self.folder / generation / _MANIFEST, lambda f: f.write(json.dumps(manifest, indent=1).encode()))

    def publish(self, generation: str) -> None:
        """Make `generation` the live one (readers switch), then drop the generations neither it
        nor the one it replaces refer to."""
        previous = self.live()
        write_atomically(self.folder / _CURRENT, lambda f: f.write(json.dumps({"generation": generation}).encode()))
        self.drop_unreferenced(keep={generation, previous})

    def drop_unreferenced(self, keep: set[str | None]) -> None:
        """Delete old generations, except the shards that a kept generation uses as its base."""
        used = set()
        for gen in keep:  # a generation without a manifest has only plain collections: nothing outside it
            manifest = self.manifest(gen) if gen else None
            if manifest is not None:
                for v in manifest["collections"].values():
                    used.add(v["base"])
                    if v.get("sums_base"):
                        used |= {f"{v['sums_base']}.sums.npy", f"{v['sums_base']}.sums.roots.npy"}
        for folder in self._generation_folders():
            if folder.name in keep:
                continue
            for path in folder.iterdir():
                if f"{folder.name}/{path.name}" not in used:
                    shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
            if not any(folder.iterdir()):
                folder.rmdir()
