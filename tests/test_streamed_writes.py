"""A refresh writes each table's new version from a stream of its previous version, never holding it
whole (the 10M-edge KG's 64M walks did not fit in memory): kgwalk.storage.write_table takes batches
made from a scan of the same table, runs a check before the commit, and a failed check or producer
leaves the table as it was, its error raised as it is. kgwalk.kg.ids.IdSet answers membership
batch by batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from kgwalk.errors import KgwalkError
from kgwalk.kg.ids import IdSet, sorted_positions
from kgwalk.storage import read_table, scan, table_version, write_table

SCHEMA = pa.schema([("walk_id", pa.int64()), ("text", pa.string())])


def _table(path, ids):
    return write_table(path, pa.table({"walk_id": ids, "text": [f"t{i}" for i in ids]}, schema=SCHEMA))


def test_a_new_version_streams_from_a_scan_of_the_previous_one(tmp_path):
    path = tmp_path / "texts"
    _table(path, list(range(5000)))
    checked = []
    rows = (b.filter(pc.greater_equal(b.column("walk_id"), 4000)) for b in scan(path, version=0))
    version = write_table(path, rows, schema=SCHEMA, before_commit=lambda: checked.append(table_version(path)))
    assert version == 1 and checked == [0]  # the check ran before the commit
    assert sorted(read_table(path).column("walk_id").to_pylist()) == list(range(4000, 5000))


@pytest.mark.parametrize("where", ["check", "producer"])
def test_a_failed_check_or_producer_commits_nothing_and_raises_its_own_error(tmp_path, where):
    path = tmp_path / "texts"
    _table(path, [1, 2, 3])

    def rows():
        yield from scan(path, version=0)
        if where == "producer":
            raise KgwalkError("the producer failed")

    def check():
        raise KgwalkError("the gate failed")

    with pytest.raises(KgwalkError, match="the gate failed" if where == "check" else "the producer failed"):
        write_table(path, rows(), schema=SCHEMA, before_commit=check)
    assert table_version(path) == 0 and sorted(read_table(path).column("walk_id").to_pylist()) == [1, 2, 3]


def test_id_sets_answer_as_isin_does():
    rng = np.random.default_rng(0)
    members = rng.integers(-(2**62), 2**62, 500)
    asked = np.concatenate([members[::3], rng.integers(-(2**62), 2**62, 300), [members.min(), members.max()]])
    ids = IdSet(pa.chunked_array([members[:200], members[200:]]))
    assert len(ids) == len(np.unique(members))
    assert np.array_equal(ids.mask(pa.array(asked)), np.isin(asked, members))
    assert np.array_equal(ids.mask(asked), np.isin(asked, members))
    assert not IdSet(np.empty(0, np.int64)).mask(asked).any()


@pytest.mark.parametrize("shape", ["hashes", "consecutive", "high bits"])
def test_id_sets_past_the_cache_answer_as_isin_does_whatever_the_ids_look_like(shape):
    # more ids than sorted_positions searches unsorted, and ids a bitmap keyed on their low or high bits
    # alone would pile into a few slots
    rng = np.random.default_rng(1)
    n = 300_000
    members = {"hashes": rng.integers(-(2**63), 2**63 - 1, n), "consecutive": np.arange(n) - n // 2,
               "high bits": (np.arange(n, dtype=np.int64) - n // 2) << 40}[shape]
    asked = np.concatenate([members[::7], members[::5] + 1, rng.integers(-(2**63), 2**63 - 1, 50_000)])
    rng.shuffle(asked)
    assert np.array_equal(IdSet(members).mask(asked), np.isin(asked, members))
    ordered = np.sort(members)
    assert np.array_equal(sorted_positions(ordered, asked), np.searchsorted(ordered, asked))
