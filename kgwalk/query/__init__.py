"""Node-then-walk retrieval (Walk&Retrieve Eq. 3) for CLI and client code."""

from kgwalk.query.retriever import NodeHit, Retriever, WalkHit

__all__ = ["NodeHit", "Retriever", "WalkHit"]
