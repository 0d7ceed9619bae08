"""Node-then-walk retrieval (Walk&Retrieve Eq. 3) and one-call answers (Fig. 2b) for CLI and client code."""

from kgwalk.query.answer import Answer, Answerer
from kgwalk.query.retriever import NodeHit, Retrieval, Retriever, WalkHit

__all__ = ["Answer", "Answerer", "NodeHit", "Retrieval", "Retriever", "WalkHit"]
