"""Relation-path priors: what reranks a topic's candidate walks by how well their relation path fits
the question (query.rerank). Two implement `Prior`: the labelled one fitted by `kgwalk fit-paths`
(kgwalk/query/paths.py) and the label-free synthetic one (kgwalk/query/synthetic.py); `load_prior`
is the one place that chooses and loads them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from kgwalk.config import Config
from kgwalk.query.hits import WalkHit

if TYPE_CHECKING:
    from kgwalk.embed.model import Embedder

PriorKind = Literal["paths", "synthetic"]


class Prior(Protocol):
    def question_texts(self, masked_question: str) -> list[str]:
        """What the retriever encodes for this prior, the masked question first, in one batch with the question."""
        ...

    def rerank(self, masked_question: str, masked_vectors: np.ndarray, walks: Sequence[WalkHit], weight: float) -> None:
        """Set each walk's score: its cosine plus `weight` x its relation path's share of the prior
        (`masked_vectors`: the vectors of `question_texts(masked_question)`)."""
        ...


def resolve_rerank(cfg: Config) -> Literal["none", "paths", "synthetic"]:
    """query.rerank as it applies: `auto` is the path prior where `kgwalk fit-paths` has fitted
    one for this KG, else the label-free synthetic prior; a hashing-* embedder (tests) has no
    meaning to compare paths with, so it keeps the paper's cosine order."""
    if cfg.query.rerank != "auto":
        return cfg.query.rerank
    from kgwalk.query.paths import PRIOR_TABLE
    from kgwalk.storage import table_exists

    if table_exists(cfg.table(PRIOR_TABLE)):
        return "paths"
    return "none" if cfg.embed.model.startswith("hashing-") else "synthetic"


def load_prior(kind: PriorKind, cfg: Config, encoder: Embedder, model: str, *, words_embedder: Embedder) -> Prior:
    """The prior of `kind` for this KG. `encoder`: `model`'s, what the prior compares questions
    with (query.prior_encoder); `words_embedder`: embed.model's, the synthetic prior's word vectors."""
    if kind == "synthetic":
        from kgwalk.query.synthetic import SyntheticPrior

        return SyntheticPrior.load(cfg, encoder, model, words_embedder=words_embedder)
    from kgwalk.query.paths import PathPrior

    return PathPrior.load(cfg, model)
