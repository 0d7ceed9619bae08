"""Template walks' vectors summed from their parts, without making their sentences (query.walk_search=graph).

A static model's vector of a text is the mean of its tokens' vectors (kgwalk/embed/static.py), and its BERT
tokenizer splits a text at whitespace and punctuation before anything else. A template sentence (kgwalk/verbalize/
template.py) is its nodes' labels joined by its steps' phrases: `A p1 B, which p2 C.`. Where every label meets a
phrase at whitespace or punctuation, the sentence's tokens are its parts' tokens, so its vector's direction is the
sum of its parts' token sums: each distinct label and phrase of a question's walks is tokenized once, each walk is
a few row sums, and no sentence is made but the shown ones'. On the 10M-edge KG a question's walk phases took 9.5 ms
with their sentences embedded, 9.1 summed, and 6.5-6.7 with every label's words tokenized at the warm-up as well
(bench/results/query_scale_10m_walk_sums.md, query_scale_10m_warm_words_*.md). The vectors are the model's own
within float rounding (tests/test_static_embed.py).

A walk whose phrase meets a label inside a word (a phrase map's `x{}y`), or that is longer than the model reads
(its characters or tokens past the model's cut), is embedded from its sentence instead.
"""

from __future__ import annotations

import string
from collections.abc import Callable

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


class WalkSums:
    """Vectors of template walks (WALK_FIELDS) for one set of labels and phrases, as `embedder.encode` gives their
    sentences."""

    def __init__(self, embedder: StaticEmbedder, labels: LabelLookup, verbalizer: TemplateVerbalizer) -> None:
        self.embedder, self.labels, self.verbalizer = embedder, labels, verbalizer
        self._steps: dict[tuple[int, bool, bool], tuple[np.ndarray, int, int, bool]] = {}  # (relation, inverse, first) -> its parts
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
        label_texts = self.labels.entity_labels(distinct)
        label_sums, label_tokens = self._sums(label_texts.to_pylist())
        label_chars = pc.utf8_length(label_texts).to_numpy(zero_copy_only=False)

        rel_ids = rels.flatten().to_numpy()
        inverse = walks.column("inverse").combine_chunks().flatten().to_numpy(zero_copy_only=False)
        step_counts = rels.value_lengths().to_numpy(zero_copy_only=False)
        first = np.zeros(len(rel_ids), bool)
        first[(np.cumsum(step_counts) - step_counts)[step_counts > 0]] = True
        keys, step_row = np.unique(np.stack([rel_ids, inverse, first]).T, axis=0, return_inverse=True)
        parts = [self._step(int(r), bool(i), bool(f)) for r, i, f in keys]
        step_sums = np.stack([p[0] for p in parts]) if parts else np.zeros((0, self.embedder.dim), np.float32)
        step_tokens, step_chars, step_splits = (np.array([p[k] for p in parts], dtype) for k, dtype in ((1, np.int64), (2, np.int64), (3, bool)))
        step_row = step_row.reshape(-1)

        sums = _segment_sums(label_sums, node_row, node_counts) + _segment_sums(step_sums, step_row, step_counts) + self._end[0]
        tokens = _segment_sums(label_tokens, node_row, node_counts) + _segment_sums(step_tokens, step_row, step_counts) + self._end[1]
        chars = _segment_sums(label_chars, node_row, node_counts) + _segment_sums(step_chars, step_row, step_counts) + len(END)
        whole = _segment_sums(~step_splits, step_row, step_counts) > 0
        max_chars, max_tokens = self.embedder.limits
        whole |= (chars > max_chars) if max_chars else False
        whole |= (tokens > max_tokens) if max_tokens else False
        sums = unit_rows(sums.astype(np.float32))
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


def _segment_sums(table: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Sums of `table[rows]` over consecutive runs of `rows`, `counts` long each (a run of none: 0). Summed position by
    position, as runs are a walk's few nodes or steps: np.add.reduceat along the rows of a 2-D array took 1.1 ms for
    130 walks of 256-d vectors, this 0.25 (both gather the same rows; the sums differ by float rounding)."""
    out = np.zeros((len(counts), *table.shape[1:]), table.dtype if table.dtype != bool else np.int64)
    starts = np.cumsum(counts) - counts
    for position in range(int(counts.max(initial=0))):
        runs = np.flatnonzero(counts > position)
        out[runs] += table[rows[starts[runs] + position]]
    return out


def walk_encoder(embedder: Embedder, records: WalkRecords) -> Callable[[pa.Table], np.ndarray]:
    """Vectors of the walks `records` remakes (records.made), row for row, for the versions it holds now: summed from
    their parts where the model is static (WalkSums), else their sentences embedded."""
    sentences = lambda walks, rows: records.shown(walks.take(pa.array(rows))).column("text").to_pylist()  # noqa: E731
    labels, verbalizer = records.labels, records.verbalizer
    if not (isinstance(embedder, StaticEmbedder) and embedder.has_word_pieces and labels is not None and verbalizer is not None):
        return lambda walks: embedder.encode(sentences(walks, np.arange(walks.num_rows)))
    sums = WalkSums(embedder, labels, verbalizer)
    return lambda walks: sums.vectors(walks, lambda rows: sentences(walks, rows))
