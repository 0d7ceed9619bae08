"""Vector stores (Qdrant in-process or server) behind a small reader and a small writer
interface (node sums an optional capability), and the index build."""

from kgwalk.index.base import Hit, KeepsNodeSums, VectorReader, VectorStore, VectorWriter
from kgwalk.index.store import open_store

__all__ = ["Hit", "KeepsNodeSums", "VectorReader", "VectorStore", "VectorWriter", "open_store"]
