"""Knowledge-graph ingest: readers for every input format, stable ids, canonical Delta tables."""

from kgwalk.kg.ids import hash64, normalize_label
from kgwalk.kg.ingest import IngestResult, ingest

__all__ = ["IngestResult", "hash64", "ingest", "normalize_label"]
