"""Knowledge-graph ingest (`kgwalk.kg.ingest`): readers for every input format, stable ids,
canonical Delta tables. The package itself imports only the ids, which need no Delta, so
verbalizers on bare GPU workers can import them."""

from kgwalk.kg.ids import hash64, normalize_label

__all__ = ["hash64", "normalize_label"]
