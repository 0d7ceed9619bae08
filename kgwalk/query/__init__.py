"""Node-then-walk retrieval (Walk&Retrieve Eq. 3) and one-call answers (Fig. 2b) for CLI and client code."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgwalk.query.hits import NodeHit, Retrieval, WalkHit
from kgwalk.query.retriever import Retriever

if TYPE_CHECKING:
    from kgwalk.query.answer import Answer, Answerer

__all__ = ["Answer", "Answerer", "NodeHit", "Retrieval", "Retriever", "WalkHit"]


def __getattr__(name: str) -> Any:
    """Answer and Answerer on first use: they bring the LLM layer, which retrieval (`kgwalk query`,
    the service's /retrieve) never needs."""
    if name in ("Answer", "Answerer"):
        from kgwalk.query import answer

        return getattr(answer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
