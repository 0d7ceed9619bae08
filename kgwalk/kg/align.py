"""Entity alignment (HisGraphRAG's, without an LLM): entities whose labels name the same thing
("Emir Kusturica", the tag "emir kusturica", "Emir_Kusturica") are candidate duplicates, and a
candidate is linked (`same_as`, alias -> canonical) when the two share enough neighbours.

- Candidates: labels equal once case, `_`, punctuation at word edges and a parenthesized
  qualifier are ignored (the entity lexicon's rule for "names the same").
- Score: the overlap coefficient of the two entities' neighbour sets (either direction),
  |N(a) & N(b)| / min(|N(a)|, |N(b)|): the tag "julianne moore" tags films Julianne Moore is in
  (high), the tag "chocolate" shares nothing with the film "Chocolate" (0).
- Canonical: the member with capitals (a name, not a tag), then the most edges, then the lowest id.
- A user's decisions override the score: a CSV with columns `alias`, `canonical`, `decision`
  (`accept` or `reject`; labels as the KG spells them). The review table `write_review` makes has
  these columns, so a reviewed copy is the next ingest's `ingest.align_overrides`.

Alignment is a pure function of the KG tables, the threshold and the decisions: it is recomputed
where it is used, from the tables a reader holds, so a refresh never leaves it stale.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa

from kgwalk.errors import KgwalkError

ALIGNMENT_SCHEMA = pa.schema([("alias", pa.int64()), ("canonical", pa.int64()), ("alias_label", pa.string()),
                              ("canonical_label", pa.string()), ("score", pa.float64()), ("status", pa.string())])
STATUSES = ("linked", "accepted", "candidate", "rejected")  # linked/accepted are the same_as links
DECISIONS = ("accept", "reject")
WORD = re.compile(r"[^\s_]+")  # a word of a label or question: `_` reads as a space
EDGE_PUNCT = "?!.,;:\"'`()[]{}<>«»“”‘’¿¡"  # dropped at the edges of words
QUALIFIER = re.compile(r"\s*\([^()]*\)\s*")  # "Kismet (1944 film)"


def label_words(text: str) -> list[str]:
    """The words a label is matched by: case-folded, `_` read as a space, punctuation at the edges
    of each word dropped (inner punctuation stays: "ocean's", "spider-man", "j.k")."""
    words = (w.strip(EDGE_PUNCT) for w in WORD.findall(text.casefold()))
    return [w for w in words if w]


def alignment_key(label: str) -> str:
    """What two labels naming the same thing share: their words without a parenthesized qualifier."""
    bare = label_words(QUALIFIER.sub(" ", label))
    return " ".join(bare or label_words(label))


def read_overrides(path: str | Path | None) -> dict[tuple[str, str], str]:
    """(alias label, canonical label) -> accept | reject, from a reviewed CSV."""
    if not path:
        return {}
    path = Path(path)
    if not path.is_file():
        raise KgwalkError(f"ingest.align_overrides: no file {path}")
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"alias", "canonical", "decision"} <= set(rows[0]):
        raise KgwalkError(f"{path}: the header must name the columns alias, canonical and decision")
    out = {}
    for line, row in enumerate(rows, 2):
        decision = (row["decision"] or "").strip().lower()
        if not decision:
            continue  # a review row nobody decided
        if decision not in DECISIONS:
            raise KgwalkError(f"{path}:{line}: decision must be accept or reject, got {row['decision']!r}")
        out[(row["alias"], row["canonical"])] = decision
    return out


def align(entities: pa.Table, edges: pa.Table, threshold: float, overrides: dict[tuple[str, str], str] | None = None) -> pa.Table:
    """One row per candidate (or user-accepted) pair, alias -> canonical, with its score and status:
    linked (score >= threshold), accepted / rejected (the user's decision), candidate (below)."""
    overrides = overrides or {}
    ids = entities.column("id").to_numpy()
    labels = entities.column("label").to_pylist()
    label_of = dict(zip(ids.tolist(), labels))
    id_of = {label: int(i) for i, label in zip(ids.tolist(), labels)}
    groups: dict[str, list[int]] = defaultdict(list)
    for i, label in zip(ids.tolist(), labels):
        groups[alignment_key(label or "")].append(i)
    members = [g for g in groups.values() if len(g) > 1]
    src, dst = edges.column("src").to_numpy(), edges.column("dst").to_numpy()
    wanted = np.array(sorted({i for g in members for i in g} | {id_of.get(x, 0) for pair in overrides for x in pair}), np.int64)
    neighbours = _neighbours(src, dst, wanted)
    pairs: set[tuple[int, int]] = set()
    for group in members:
        canonical = min(group, key=lambda i: (label_of[i] == label_of[i].lower(), -len(neighbours.get(i, ())), i))
        pairs.update((i, canonical) for i in group if i != canonical)
    for alias_label, canonical_label in overrides:
        if alias_label in id_of and canonical_label in id_of:  # (an entity the KG no longer holds: nothing to decide)
            pairs.add((id_of[alias_label], id_of[canonical_label]))
    rows: list[tuple] = []
    for alias, canonical in sorted(pairs):
        a, c = neighbours.get(alias, set()), neighbours.get(canonical, set())
        score = len(a & c) / max(min(len(a), len(c)), 1)
        decision = overrides.get((label_of[alias], label_of[canonical]))
        status = {"accept": "accepted", "reject": "rejected"}.get(decision or "", "linked" if score >= threshold else "candidate")
        rows.append((alias, canonical, label_of[alias], label_of[canonical], round(score, 6), status))
    columns: list = list(zip(*rows)) if rows else [[]] * len(ALIGNMENT_SCHEMA)
    return pa.table({f.name: pa.array(c, f.type) for f, c in zip(ALIGNMENT_SCHEMA, columns)}, schema=ALIGNMENT_SCHEMA)


def _neighbours(src: np.ndarray, dst: np.ndarray, wanted: np.ndarray) -> dict[int, set[int]]:
    """Neighbour sets (either direction) of the wanted entities only."""
    out: dict[int, set[int]] = defaultdict(set)
    for a, b in ((src, dst), (dst, src)):
        keep = np.isin(a, wanted)
        for x, y in zip(a[keep].tolist(), b[keep].tolist()):
            out[x].add(y)
    return out


def links(alignment: pa.Table) -> dict[int, int]:
    """alias -> canonical for the pairs that are linked (by score or by the user), followed to
    the end of a chain a user's decisions may make (a -> b, b -> c: a -> c; a cycle stops)."""
    status = alignment.column("status").to_pylist()
    direct = {a: c for a, c, s in zip(alignment.column("alias").to_pylist(), alignment.column("canonical").to_pylist(), status)
              if s in ("linked", "accepted")}
    out = {}
    for alias, canonical in direct.items():
        seen = {alias}
        while canonical in direct and canonical not in seen:
            seen.add(canonical)
            canonical = direct[canonical]
        if canonical != alias:
            out[alias] = canonical
    return out


def write_review(alignment: pa.Table, path: str | Path) -> None:
    """The table a user reviews: linked pairs, then candidates, best score first, with an empty
    `decision` column to fill (accept / reject) and pass back as ingest.align_overrides."""
    order = sorted(range(alignment.num_rows), key=lambda r: (STATUSES.index(alignment["status"][r].as_py()), -alignment["score"][r].as_py()))
    with Path(path).open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["status", "score", "alias", "canonical", "decision"])
        for r in order:
            row = {c: alignment[c][r].as_py() for c in ("status", "score", "alias_label", "canonical_label")}
            out.writerow([row["status"], f"{row['score']:.3f}", row["alias_label"], row["canonical_label"], ""])


def write_alignment(root: str | Path, entities: pa.Table, edges: pa.Table, threshold: float, overrides_path: str | None) -> str:
    """Align a KG just ingested under `root` and write its review table `root/_alignment.csv`;
    returns the summary line."""
    alignment = align(entities, edges, threshold, read_overrides(overrides_path))
    path = Path(root) / "_alignment.csv"
    write_review(alignment, path)
    counts = {s: alignment["status"].to_pylist().count(s) for s in STATUSES}
    return (f"{counts['linked'] + counts['accepted']:,} same_as links ({counts['accepted']:,} accepted by you), "
            f"{counts['candidate']:,} candidates below {threshold}, {counts['rejected']:,} rejected; review: {path}")
