"""An entity's one-step facts, found by its label: what the MCP server's `entity` tool answers.

The label is looked up in the label lexicon (kgwalk/query/lexicon.py: case, underscores and a
parenthesized qualifier forgiven), else read as a question naming it; the facts are the KG's edges
at the entity, read from the Delta tables by delta-rs' own filter, each said as a sentence by the
template verbalizer (verbalize.phrases).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.query.lexicon import EntityLexicon
from kgwalk.storage import read_table, scan
from kgwalk.verbalize.template import TemplateVerbalizer

MAX_ENTITIES = 10  # a label shared by more entities (a common word) shows this many


class Fact(BaseModel):
    head: str
    relation: str
    tail: str
    text: str = Field(description="the fact as a sentence")


class EntityFacts(BaseModel):
    id: int
    label: str
    edges: int = Field(description="how many edges the entity has in the KG")
    facts: list[Fact] = Field(description="its edges as (head, relation, tail), the first `limit` of them, as the KG states them")


def entity_ids(lexicon: EntityLexicon, label: str) -> list[int]:
    """The entities labelled `label`, else those a question of these words names."""
    ids = [int(i) for i in lexicon.ids_of(label)]
    return ids or [m.entity for m in lexicon.mentions(label)]


def _in(column: str, ids: list[int]) -> str:
    return f"{column} IN ({', '.join(str(i) for i in ids)})"


def entity_facts(cfg: Config, lexicon: EntityLexicon, label: str, limit: int) -> list[EntityFacts]:
    """The one-step facts of each entity labelled `label` (at most MAX_ENTITIES of them), `limit` facts each."""
    if not label.strip():
        raise KgwalkError("the label is empty")
    ids = entity_ids(lexicon, label)[:MAX_ENTITIES]
    if not ids:
        raise KgwalkError(f"no entity of the KG {cfg.name!r} is labelled {label!r}")
    edges = scan(cfg.table("edges"), columns=["src", "rel", "dst"], predicate=f"{_in('src', ids)} OR {_in('dst', ids)}").read_all()
    edges = edges.sort_by([("rel", "ascending"), ("src", "ascending"), ("dst", "ascending")]).to_pydict()
    rows = list(zip(edges["src"], edges["rel"], edges["dst"]))
    shown = {e: [r for r in rows if e in (r[0], r[2])] for e in ids}
    ends = sorted({n for e in ids for src, _, dst in shown[e][:limit] for n in (src, dst)} | set(ids))
    entities = scan(cfg.table("entities"), columns=["id", "label"], predicate=_in("id", ends)).read_all().to_pydict()
    labels = dict(zip(entities["id"], entities["label"]))
    relations = read_table(cfg.table("relations"), ["id", "label"]).to_pydict()
    names = dict(zip(relations["id"], relations["label"]))
    phrases = TemplateVerbalizer(cfg.verbalize.phrases)

    def fact(src: int, rel: int, dst: int) -> Fact:
        head, relation, tail = labels[src], names[rel], labels[dst]
        return Fact(head=head, relation=relation, tail=tail, text=phrases.sentence([head, tail], [relation], [False]))

    return [EntityFacts(id=e, label=labels[e], edges=len(shown[e]), facts=[fact(*r) for r in shown[e][:limit]]) for e in ids]
