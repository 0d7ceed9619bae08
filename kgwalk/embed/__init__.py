"""Sentence embedders behind one interface, and the Ray pipeline that runs them over walk texts."""

from kgwalk.embed.model import Embedder, SentenceTransformerEmbedder, make_embedder

__all__ = ["Embedder", "SentenceTransformerEmbedder", "make_embedder"]
