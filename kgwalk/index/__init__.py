"""Vector stores (Qdrant in-process or server) behind one small interface, and the index build."""

from kgwalk.index.base import Hit, VectorStore
from kgwalk.index.store import open_store

__all__ = ["Hit", "VectorStore", "open_store"]
