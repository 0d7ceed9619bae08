"""The verbalizer interface: a batch of walks (Arrow) in, one sentence per walk out."""

from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from kgwalk.errors import KgwalkError


class Verbalizer(Protocol):
    name: str

    def verbalize(self, walks: pa.Table) -> pa.Array:
        """One sentence per row of `walks` (columns node_labels, rel_labels, inverse)."""
        ...


def make_verbalizer(name: str, phrases: dict[str, list[str]] | None = None) -> Verbalizer:
    from kgwalk.verbalize.template import TemplateVerbalizer

    if name == "template":
        return TemplateVerbalizer(phrases or {})
    raise KgwalkError(f"verbalize.verbalizer: unknown verbalizer {name!r} (available: template)")
