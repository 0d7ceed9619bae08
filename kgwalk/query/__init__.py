"""Node-then-walk retrieval (Walk&Retrieve Eq. 3) and one-call answers (Fig. 2b) for CLI and client code."""

from kgwalk.query.answer import Answer, Answerer
from kgwalk.query.hits import NodeHit, Retrieval, WalkHit
from kgwalk.query.retriever import Retriever

__all__ = ["Answer", "Answerer", "NodeHit", "Retrieval", "Retriever", "WalkHit"]
