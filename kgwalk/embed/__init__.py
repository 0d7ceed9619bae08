"""Sentence embedders behind one interface, and the Ray pipeline that runs them over walk texts."""

from kgwalk.embed.model import Embedder, SentenceTransformerEmbedder, make_embedder
from kgwalk.embed.static import StaticEmbedder

__all__ = ["Embedder", "SentenceTransformerEmbedder", "StaticEmbedder", "make_embedder"]
