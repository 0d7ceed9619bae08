"""Template walks' vectors summed from their parts, without making their sentences (query.walk_search=graph).

A static model's vector of a text is the mean of its tokens' vectors (kgwalk/embed/static.py), and its BERT
tokenizer splits a text at whitespace and punctuation before anything else. A template sentence (kgwalk/verbalize/
template.py) is its nodes' labels joined by its steps' phrases: `A p1 B, which p2 C.`. Where every label meets a
phrase at whitespace or punctuation, the sentence's tokens are its parts' tokens, so its vector's direction is the
sum of its parts' token sums: each distinct label and phrase is tokenized once (a label's sums kept across
questions while they fit, `LabelParts`), each walk is a few row sums, and no sentence is made but the shown ones'.
On the 10M-edge KG a question's walk phases took 9.5 ms with their sentences embedded, 9.1 summed, and 6.5-6.7 with
every label's words tokenized at the warm-up as well
(bench/results/query_scale_10m_walk_sums.md, query_scale_10m_warm_words_*.md). The vectors are the model's own
within float rounding (tests/test_static_embed.py).

A walk whose phrase meets a label inside a word (a phrase map's `x{}y`), or that is longer than the model reads
(its characters or tokens past the model's cut), is embedded from its sentence instead.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from itertools import repeat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgwalk.embed.common import unit_rows
from kgwalk.embed.model import Embedder
from kgwalk.embed.static import StaticEmbedder
from kgwalk.index.records import WalkRecords
from kgwalk.verbalize.template import END, FIRST_STEP, LATER_STEP, TemplateVerbalizer, around
from kgwalk.walks.labels import LabelLookup

# where a phrase may meet a label: the tokenizer splits there ("[" and "]" could close a special token's text)
_SPLITS = frozenset(string.whitespace + string.punctuation) - {"[", "]"}
# entity labels whose parts a WalkSums keeps: 32 MiB of 256-d sums (MetaQA's 1000 dev 2-hop questions' walks name 21K)
MAX_CACHED_LABELS = 32_768


class WalkSums:
    """Vectors of template walks (WALK_FIELDS) for one set of labels and phrases, as `embedder.encode` gives their
    sentences."""

    def __init__(self, embedder: StaticEmbedder, labels: LabelLookup, verbalizer: TemplateVerbalizer, *,
                 max_labels: int = MAX_CACHED_LABELS) -> None:
        """`max_labels`: entity labels whose parts are kept across calls (`LabelParts`)."""
        self.embedder, self.labels, self.verbalizer = embedder, labels, verbalizer
        self._steps: dict[tuple[int, bool, bool], tuple[np.ndarray, int, int, bool]] = {}  # (relation, inverse, first) -> its parts
        self.label_parts = LabelParts(self._sums, labels, embedder.dim, max_labels)
        end = self._sums([END])
        self._end = end[0][0], int(end[1][0])

    def _sums(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        found = self.embedder.token_sums(texts)
        assert found is not None, "WalkSums needs a static model's word pieces"
        return found

    def vectors(self, walks: pa.Table, sentences: Callable[[np.ndarray], list[str]]) -> np.ndarray:
        """Unit vectors, row for row; `sentences(rows)` gives the template sentences of the rows it embeds whole."""
        nodes, rels = walks.column("nodes").combine_chunks(), walks.column("rels").combine_chunks()
        node_ids, node_counts = nodes.flatten().to_numpy(), nodes.value_lengths().to_numpy(zero_copy_only=False)
        distinct, node_row = np.unique(node_ids, return_inverse=True)
        label_sums, label_counts = self.label_parts.of(distinct)

        rel_ids = rels.flatten().to_numpy()
        inverse = walks.column("inverse").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        step_counts = rels.value_lengths().to_numpy(zero_copy_only=False)
        first = np.zeros(len(rel_ids), bool)
        first[(np.cumsum(step_counts) - step_counts)[step_counts > 0]] = True
        # a step's key as one number (np.unique of rows, axis=0, sorted them as structured values: 3x the cost)
        relations, relation_row = np.unique(rel_ids, return_inverse=True)
        keys, step_row = np.unique(relation_row * 4 + inverse * 2 + first, return_inverse=True)
        parts = [self._step(int(relations[k >> 2]), bool(k & 2), bool(k & 1)) for k in keys.tolist()]
        step_sums = np.stack([p[0] for p in parts]) if parts else np.zeros((0, self.embedder.dim), np.float32)
        # tokens, characters, and whether it meets its label inside a word: summed in one pass
        step_counts_of = np.array([(p[1], p[2], not p[3]) for p in parts], np.int64).reshape(-1, 3)

        sums = _segment_sums(label_sums, node_row, node_counts)  # then (labels + steps) + end, in place: no temporaries
        sums += _segment_sums(step_sums, step_row, step_counts)
        sums += self._end[0]
        node_totals, step_totals = _segment_sums(label_counts, node_row, node_counts), _segment_sums(step_counts_of, step_row, step_counts)
        tokens = node_totals[:, 0] + step_totals[:, 0] + self._end[1]
        chars = node_totals[:, 1] + step_totals[:, 1] + len(END)
        whole = step_totals[:, 2] > 0
        max_chars, max_tokens = self.embedder.limits
        whole |= (chars > max_chars) if max_chars else False
        whole |= (tokens > max_tokens) if max_tokens else False
        sums = unit_rows(sums.astype(np.float32, copy=False))
        rows = np.flatnonzero(whole)
        if len(rows):
            sums[rows] = self.embedder.encode(sentences(rows))
        return sums

    def _step(self, relation: int, inverse: bool, first: bool) -> tuple[np.ndarray, int, int, bool]:
        """A step's text around the label it leads to: its token sum and count, its characters, and whether it meets
        the label where the tokenizer splits."""
        key = (relation, inverse, first)
        if key not in self._steps:
            before, after = around(self.verbalizer.phrase(self.labels.relation_label(relation), inverse))
            lead = (FIRST_STEP if first else LATER_STEP) + before
            sums, tokens = self._sums([lead + " " + after])  # the space: the two sides meet no word of each other
            splits = lead[-1] in _SPLITS and (not after or after[0] in _SPLITS)
            self._steps[key] = (sums[0], int(tokens[0]), len(lead) + len(after), splits)
        return self._steps[key]


class LabelParts:
    """Entity labels' token sums, and their token and character counts, by entity id, for one set of labels: each
    label tokenized once while it stays among the `most` kept (emptied when full). A question's walks name about 75
    entities, most of them named by earlier questions' walks; tokenizing their labels again was most of summing."""

    def __init__(self, token_sums: Callable[[list[str]], tuple[np.ndarray, np.ndarray]], labels: LabelLookup, dim: int, most: int) -> None:
        self.token_sums, self.labels, self.most = token_sums, labels, most
        self._slot: dict[int, int] = {}  # entity id -> its row of the arrays below
        self._sums = np.zeros((0, dim), np.float32)
        self._counts = np.zeros((0, 2), np.int64)  # tokens, characters

    def __len__(self) -> int:
        return len(self._slot)

    def of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (unique) entities' token sums and (tokens, characters), row for row."""
        slots = np.fromiter(map(self._slot.get, ids.tolist(), repeat(-1)), np.int64, len(ids))
        missing = ids[slots < 0]
        if not len(missing):
            return self._sums[slots], self._counts[slots]
        if len(ids) > self.most:  # more than it may keep: summed, not kept
            return self._parts(ids)
        if len(self._slot) + len(missing) > self.most:
            self._slot.clear()
            slots[:], missing = -1, ids
        start, end = len(self._slot), len(self._slot) + len(missing)
        if end > len(self._sums):  # grown by doubling, up to `most` rows
            room = min(self.most, max(2 * len(self._sums), end))
            self._sums, self._counts = _grown(self._sums, room), _grown(self._counts, room)
        self._sums[start:end], self._counts[start:end] = self._parts(missing)
        slots[slots < 0] = np.arange(start, end)
        self._slot.update(zip(missing.tolist(), range(start, end)))
        return self._sums[slots], self._counts[slots]

    def _parts(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        texts = self.labels.entity_labels(ids)
        sums, tokens = self.token_sums(texts.to_pylist())
        return sums, np.column_stack([tokens, pc.utf8_length(texts).to_numpy(zero_copy_only=False)]).astype(np.int64)


def _grown(rows: np.ndarray, room: int) -> np.ndarray:
    out = np.zeros((room, *rows.shape[1:]), rows.dtype)
    out[: len(rows)] = rows
    return out


def _segment_sums(table: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of `table[rows]` over consecutive runs of `rows`, `counts` long each (a run of none: 0). Summed position by
    position, as runs are a walk's few nodes or steps: np.add.reduceat along the rows of a 2-D array took 1.1 ms for
    130 walks of 256-d vectors, this 0.25 (both gather the same rows; the sums differ by float rounding). The runs are
    summed longest first, so that those a position reaches are a prefix, added to in place (indexing the sums at each
    position took a third of a question's sums on people)."""
    longest = np.argsort(-counts, kind="stable")
    starts, counts = (np.cumsum(counts) - counts)[longest], counts[longest]
    sums = np.zeros((len(counts), *table.shape[1:]), table.dtype)
    for position in range(int(counts.max(initial=0))):
        reached = int(np.count_nonzero(counts > position))
        sums[:reached] += table[rows[starts[:reached] + position]]
    out = np.empty_like(sums)
    out[longest] = sums
    return out


def walk_encoder(embedder: Embedder, records: WalkRecords, *, every_label: bool = False) -> Callable[[pa.Table], np.ndarray]:
    """Vectors of the walks `records` remakes (records.made), row for row, for the versions it holds now: summed from
    their parts where the model is static (WalkSums), else their sentences embedded. `every_label`: every entity
    label's parts summed now, where the parts kept may hold them all (a question's walks then tokenize none of their
    labels: 0.45 ms of the people KG's 4.1 ms walk search p50; its 15K labels take 0.16 s once)."""
    sentences = lambda walks, rows: records.shown(walks.take(pa.array(rows))).column("text").to_pylist()  # noqa: E731
    labels, verbalizer = records.labels, records.verbalizer
    if not (isinstance(embedder, StaticEmbedder) and embedder.has_word_pieces and labels is not None and verbalizer is not None):
        return lambda walks: embedder.encode(sentences(walks, np.arange(walks.num_rows)))
    sums = WalkSums(embedder, labels, verbalizer)
    if every_label and len(labels.entity_ids) <= sums.label_parts.most:
        sums.label_parts.of(labels.entity_ids)
    return lambda walks: sums.vectors(walks, lambda rows: sentences(walks, rows))
