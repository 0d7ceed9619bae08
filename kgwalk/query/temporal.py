"""Temporal filters (HisGraphRAG's temporal retrieval, without an LLM): a time expression in the
question ("in 1994", "before 2000", "the 90s", "between 1990 and 1995") restricts the walks to
those whose time-valued nodes fall in its range.

Which relations carry time is learned from the KG, not named: a relation whose tails parse as
years or dates (`1994`, `1994-05-12`, `12 May 1994`) for at least `min_share` of its edges. Its
tails are time values, and its heads have those times (a film's release year). A walk's times are
those of its nodes after the root: a walk with one in range satisfies the question, a walk whose
times all fall outside violates it (dropped), a walk with none ranks after those that satisfy.

A year can also be a name (the film "1984", "Gold Diggers of 1935"): a year in [brackets], or
inside a longer entity label found in the question, is never a time expression, and neither is an
expression that holds every entity the question names, or holds an entity that is more than a
time value (the film "1984" has actors) while the rest of the question names only single words
("who stars in 1984": "stars" may be the film "Stars"; "what did Tom Hanks star in in 1984" is a
time).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kgwalk.kg.ids import positions

MIN_SHARE = 0.9  # of a relation's edges whose tails parse as times, for it to carry time
# Taken off the score of a walk with no time value, so that the walks in range come first: in
# cosine order (a question's walks rarely differ by a whole 1) it ranks after them; under a prior
# (cosine + rerank_weight x share) it weighs half a path's whole share at the default weight 2.
# Fixed as bench/results/temporal.md measured it; no KG has asked for another value.
UNKNOWN_PENALTY = 1.0
OPEN = 10**6  # an open end of a range

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_TIME_LABEL = re.compile(
    rf"""\s*(?:
        (?P<iso>\d{{4}})(?:-\d{{2}}(?:-\d{{2}}(?:[T\s][\d:.]+Z?)?)?)?       # 1994, 1994-05, 1994-05-12T00:00
      | \d{{1,2}}\s+{_MONTH}\s+(?P<dmy>\d{{4}})                          # 12 May 1994
      | {_MONTH}\s+(?:\d{{1,2}},?\s+)?(?P<mdy>\d{{4}})                     # May 12, 1994 / May 1994
      | \d{{1,2}}[/.]\d{{1,2}}[/.](?P<numeric>\d{{4}})                   # 12/05/1994
    )\s*""",
    re.IGNORECASE | re.VERBOSE,
)

# A point in time as a question names it: a year, a decade, a century.
_POINT = re.compile(
    r"""(?<![\w'])(?:
        (?P<the>the\s+)?(?:(?P<part>early|mid|late)[\s-]+)?
        (?:(?P<decade>(?:1\d|20)\d0)'?s|'?(?P<short>\d0)'?s)(?!\w)          # (the) (early) 1990s, the '90s
      | (?:the\s+)?(?P<century>\d{1,2})(?:st|nd|rd|th)[\s-]+century(?!\w)       # the 19th century
      | (?P<year>1\d{3}|20\d{2})(?![\w'])                                    # 1994
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_CUES = {  # the word before a point, and how it turns the point's (first, last) into a range
    "before": lambda a, b: (-OPEN, a - 1), "prior to": lambda a, b: (-OPEN, a - 1), "earlier than": lambda a, b: (-OPEN, a - 1),
    "until": lambda a, b: (-OPEN, b), "till": lambda a, b: (-OPEN, b), "up to": lambda a, b: (-OPEN, b),
    "no later than": lambda a, b: (-OPEN, b),
    "after": lambda a, b: (b + 1, OPEN), "later than": lambda a, b: (b + 1, OPEN),
    "since": lambda a, b: (a, OPEN), "no earlier than": lambda a, b: (a, OPEN), "starting in": lambda a, b: (a, OPEN),
    "in": lambda a, b: (a, b), "during": lambda a, b: (a, b), "from": lambda a, b: (a, b), "around": lambda a, b: (a, b),
}
_CUE = re.compile(r"(?<!\w)(" + "|".join(sorted(map(re.escape, _CUES), key=len, reverse=True)) + r")\s+$", re.IGNORECASE)
_RANGE_HEAD = re.compile(r"(?<!\w)(between|from)\s+$", re.IGNORECASE)
_RANGE_JOIN = {"between": re.compile(r"^\s+and\s+$", re.IGNORECASE),
               "from": re.compile(r"^\s*(?:to|until|till|through|-|–)\s*$", re.IGNORECASE)}
_PARTS = {None: (0, 9), "early": (0, 3), "mid": (4, 6), "late": (7, 9)}
_BARE_YEAR = re.compile(r"\d{4}")
_PLACE_CUE = re.compile(r"(?:in|from|during|around)\s", re.IGNORECASE)  # cues that also precede names: "who stars in 1984"


def label_year(label: str) -> int | None:
    """The year of a label that is a year or a date, else None."""
    m = _TIME_LABEL.fullmatch(label)
    if m is None:
        return None
    return int(next(g for g in m.groups() if g is not None))


@dataclass(frozen=True)
class TimeExpression:
    start: int  # characters of the question it covers
    end: int
    first: int  # the years it allows, inclusive; an open end is +-OPEN
    last: int

    def text(self, question: str) -> str:
        return question[self.start : self.end]


@dataclass(frozen=True)
class _Point:
    start: int
    end: int
    first: int
    last: int
    is_year: bool  # a bare year is a time only after a cue word ("in 1994"); "1984" alone may be a film


def _points(question: str) -> list[_Point]:
    points = []
    for m in _POINT.finditer(question):
        if m.group("year"):
            year = int(m.group("year"))
            points.append(_Point(m.start(), m.end(), year, year, True))
        elif m.group("century"):
            first = (int(m.group("century")) - 1) * 100
            points.append(_Point(m.start(), m.end(), first, first + 99, False))
        else:
            if m.group("short") and not m.group("the"):
                continue  # "in his 40s" is an age; "the 40s" a decade
            decade = int(m.group("decade")) if m.group("decade") else int(m.group("short").strip("'"))
            if not m.group("decade"):
                decade += 2000 if decade <= 20 else 1900  # "the 90s" is the 1990s, "the 00s" the 2000s
            low, high = _PARTS[m.group("part") and m.group("part").lower()]
            points.append(_Point(m.start(), m.end(), decade + low, decade + high, False))
    return points


def time_expressions(question: str) -> list[TimeExpression]:
    """Every time expression in the question, in order. A bare year counts only after a cue word
    ("in", "before", "since", ... or a range's "between ... and"); decades and centuries count as
    they are. Years inside [brackets] never count."""
    bracketed = [(m.start(), m.end()) for m in re.finditer(r"\[[^\[\]]*\]", question)]
    points = [p for p in _points(question) if not any(a <= p.start < b for a, b in bracketed)]
    found: list[TimeExpression] = []
    i = 0
    while i < len(points):
        p = points[i]
        head = _RANGE_HEAD.search(question, 0, p.start)
        if head and i + 1 < len(points):
            q = points[i + 1]
            if _RANGE_JOIN[head.group(1).lower()].match(question[p.end : q.start]):
                found.append(TimeExpression(head.start(), q.end, min(p.first, q.first), max(p.last, q.last)))
                i += 2
                continue
        cue = _CUE.search(question, 0, p.start)
        if cue:
            first, last = _CUES[re.sub(r"\s+", " ", cue.group(1).lower())](p.first, p.last)
            found.append(TimeExpression(cue.start(), p.end, first, last))
        elif not p.is_year:
            found.append(TimeExpression(p.start, p.end, p.first, p.last))
        i += 1
    return found


@dataclass(frozen=True)
class TimeConstraint:
    first: int
    last: int
    question: str  # the question with its time expressions taken out: what node search and embedding see
    expressions: tuple[str, ...]


def constraint(question: str, mentions_of: Callable[[str], Sequence], is_name: Callable[[int], bool] = lambda _: False) -> TimeConstraint | None:
    """The question's time constraint, or None. `mentions_of(text)` lists the entities a text names
    (the lexicon's mentions, each with its `entity` and the question's `text` of its span);
    `is_name(entity)`: the entity is more than a time value. An expression that overlaps a longer
    mention ("... in Gold Diggers of 1935") is part of a name; expressions that hold every mention,
    or a name while the other mentions are single words, are the topic (the module doc)."""
    expressions = time_expressions(question)
    if not expressions:
        return None
    mentions = [m for m in mentions_of(question) if not m.bracketed]
    spans = [(s, s + len(m.text), m) for m in mentions for s in _occurrences(question, m.text)]
    expressions = [e for e in expressions if not any(a < e.end and e.start < b and not (e.start <= a and b <= e.end) for a, b, _ in spans)]
    if not expressions:
        return None
    stripped = question
    for e in sorted(expressions, key=lambda e: -e.start):
        stripped = stripped[: e.start] + " " + stripped[e.end :]
    stripped = re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s+", " ", stripped).strip())
    holders = [(m, e) for a, b, m in spans for e in expressions if e.start <= a and b <= e.end]
    if holders:  # the expression holds an entity: a time only if the rest of the question names one
        rest = [m for m in mentions_of(stripped) if not m.bracketed]  # weak mentions count here ("ww2")
        # "in 1984" may name the film; "before 1984", "between 1980 and 1984" are times
        year_names = any(_BARE_YEAR.fullmatch(m.text) and is_name(m.entity) and _PLACE_CUE.match(e.text(question)) for m, e in holders)
        if not rest or (year_names and all(" " not in m.text for m in rest)):
            return None
    first, last = max(e.first for e in expressions), min(e.last for e in expressions)
    return TimeConstraint(first, last, stripped, tuple(e.text(question) for e in expressions))


def _occurrences(text: str, part: str) -> list[int]:
    starts, at = [], text.find(part)
    while at >= 0 and part:
        starts.append(at)
        at = text.find(part, at + 1)
    return starts


class TemporalIndex:
    """Which entities carry which years, from the KG tables: the tails of time relations (their
    own year) and those relations' heads (the tail's year)."""

    def __init__(self, entities: pa.Table, relations: pa.Table, edges: pa.Table, min_share: float = MIN_SHARE) -> None:
        ids = entities.column("id").to_numpy()
        order = np.argsort(ids)
        ids = ids[order]
        years = np.array([label_year(label or "") or 0 for label in entities.column("label").to_pylist()], np.int64)[order]
        src, rel, dst = (edges.column(c).to_numpy() for c in ("src", "rel", "dst"))
        at, found = positions(dst, ids)
        tail_year = np.where(found, years[at], 0) if len(ids) else np.zeros(len(dst), np.int64)
        rel_ids, rel_of_edge = np.unique(rel, return_inverse=True)
        timed = tail_year != 0
        share = np.bincount(rel_of_edge, timed, len(rel_ids)) / np.maximum(np.bincount(rel_of_edge, minlength=len(rel_ids)), 1)
        self.time_relations = frozenset(int(r) for r in rel_ids[share >= min_share])
        labels = dict(zip(relations.column("id").to_pylist(), relations.column("label").to_pylist()))
        self.time_relation_labels = sorted(labels.get(r, str(r)) for r in self.time_relations)
        use = np.isin(rel, np.array(sorted(self.time_relations), np.int64)) & timed
        nodes = np.concatenate([src[use], dst[use]])
        node_years = np.concatenate([tail_year[use], tail_year[use]])
        pairs = np.unique(np.stack([nodes, node_years], axis=1), axis=0) if len(nodes) else np.zeros((0, 2), np.int64)
        self._nodes, self._years = pairs[:, 0].copy(), pairs[:, 1].copy()
        other = np.concatenate([src, dst[~np.isin(rel, np.array(sorted(self.time_relations), np.int64))]])
        self._time_only = frozenset(np.setdiff1d(dst[use], other).tolist())

    def is_name(self, entity: int) -> bool:
        """The entity is more than a time value: it heads an edge, or is the tail of a relation that
        does not carry time (the film "1984" beside the year 1984)."""
        return entity not in self._time_only

    def years(self, node: int) -> np.ndarray:
        return self._years[np.searchsorted(self._nodes, node, "left") : np.searchsorted(self._nodes, node, "right")]

    def judge(self, nodes: Sequence[int], first: int, last: int) -> int:
        """1: some node after the root has a year in [first, last]; -1: they have years, none in
        it; 0: none has a year."""
        years = np.concatenate([self.years(n) for n in nodes[1:]]) if len(nodes) > 1 else np.zeros(0, np.int64)
        if not len(years):
            return 0
        return 1 if bool(((years >= first) & (years <= last)).any()) else -1
