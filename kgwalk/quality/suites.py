"""The expectation suites, as code: one per checked frame of `checks.py`, built from the config.

Each expectation carries `meta.why`, the rule in words; the failure line and the HTML report show it.
The suites hold row-wise expectations only (and row counts; uniqueness is the row-wise
`*_count in [1]`), which is what lets them run on summaries (see `checks.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgwalk.quality.checks import TEXT_SOURCES

if TYPE_CHECKING:
    import great_expectations as gx

    from kgwalk.config import Config


def _suite(name: str) -> gx.ExpectationSuite:
    import great_expectations as gx

    from kgwalk.quality.gate import context

    context()  # GX binds suites to the active context
    return gx.ExpectationSuite(name)


def _expect(suite, kind: str, why: str, **kwargs) -> None:
    import great_expectations.expectations as gxe

    suite.add_expectation(getattr(gxe, kind)(meta={"why": why}, **kwargs))


def _labelled(name: str, cfg: Config) -> gx.ExpectationSuite:
    suite = _suite(name)
    _expect(suite, "ExpectTableRowCountToBeBetween", f"the KG has {name}", min_value=1)
    _expect(suite, "ExpectColumnValuesToBeInSet", "every row has an id", column="has_id", value_set=[True])
    # ids are hashes of keys (collisions fail ingest), so unique ids mean unique keys
    _expect(suite, "ExpectColumnValuesToBeInSet", "ids are unique", column="id_count", value_set=[1])
    _expect(
        suite, "ExpectColumnValuesToBeBetween", "labels are non-empty and within ingest.max_label_length",
        column="label_length", min_value=1, max_value=cfg.ingest.max_label_length,
    )
    return suite


def ingest_suites(cfg: Config) -> dict[str, gx.ExpectationSuite]:
    entities, relations = _labelled("entities", cfg), _labelled("relations", cfg)
    if cfg.quality.relations:
        _expect(relations, "ExpectColumnValuesToBeInSet", "relations are in quality.relations", column="label", value_set=list(cfg.quality.relations))
    edges = _suite("edges")
    _expect(edges, "ExpectTableRowCountToBeBetween", "the KG has edges", min_value=1)
    for end, what in (("src", "head"), ("rel", "relation"), ("dst", "tail")):
        _expect(edges, "ExpectColumnValuesToBeInSet", f"every edge's {what} is a known {'relation' if end == 'rel' else 'entity'}", column=f"{end}_known", value_set=[True])
    _expect(edges, "ExpectColumnValuesToBeInSet", "triples are distinct", column="triple_count", value_set=[1])
    ingest = _suite("ingest")
    _expect(
        ingest, "ExpectColumnValuesToBeBetween", "rejected records are at most quality.max_rejected_ratio of those read",
        column="rejected_ratio", min_value=0, max_value=cfg.quality.max_rejected_ratio,
    )
    return {"entities": entities, "relations": relations, "edges": edges, "ingest": ingest}


def max_walk_steps(cfg: Config) -> int:
    w = cfg.walks
    return max([w.depth] * ("bfs" in w.kinds) + [w.random.length] * ("random" in w.kinds))


def walks_suite(cfg: Config) -> gx.ExpectationSuite:
    suite = _suite("walks")
    _expect(suite, "ExpectTableRowCountToBeBetween", "the KG has walks", min_value=1)
    _expect(suite, "ExpectColumnValuesToBeBetween", "walk lengths are within the walk depth", column="steps", min_value=1, max_value=max_walk_steps(cfg))
    for column, why in (
        ("shape_ok", "nodes = steps + 1, relations = directions = steps"),
        ("root_ok", "every walk starts at its root, an entity"),
        ("nodes_known", "every node of a walk is an entity"),
        ("rels_known", "every relation of a walk is known"),
    ):
        _expect(suite, "ExpectColumnValuesToBeInSet", why, column=column, value_set=[True])
    _expect(suite, "ExpectColumnValuesToBeInSet", "no walk passes through a hub (walks.hub_degree)", column="through_hub", value_set=[False])
    return suite


def texts_suite(cfg: Config) -> gx.ExpectationSuite:
    suite = _suite("texts")
    _expect(suite, "ExpectTableRowCountToBeBetween", "the KG has sentences", min_value=1)
    _expect(suite, "ExpectColumnValuesToBeInSet", "every sentence belongs to a walk", column="has_walk_id", value_set=[True])
    _expect(
        suite, "ExpectColumnValuesToBeBetween", "sentences are non-empty and within quality.max_text_length",
        column="text_length", min_value=1, max_value=cfg.quality.max_text_length,
    )
    _expect(suite, "ExpectColumnValuesToBeInSet", "sources are known", column="source", value_set=list(TEXT_SOURCES))
    _expect(
        suite, "ExpectColumnValuesToNotBeInSet", "template fallbacks are at most quality.max_fallback_ratio of sentences",
        column="source", value_set=["fallback"], mostly=1 - cfg.quality.max_fallback_ratio,
    )
    return suite
