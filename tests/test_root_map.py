"""kgwalk.index.root_map: a graphless collection's walk ids by root, kept beside its shards in
each generation instead of a root payload on every point."""

from __future__ import annotations

import numpy as np

from kgwalk.index.edge import EdgeStore
from kgwalk.index.root_map import RootChanges, RootMap, empty_root_map


def test_a_root_map_follows_removals_and_additions_like_a_dict(tmp_path):
    """Each commit applies one writer's changes, several batches of removals and additions in
    their order (an id added, removed and added again within one writer), to the map before it."""
    rng = np.random.default_rng(3)
    model: dict[int, int] = {}
    current = empty_root_map()
    for step in range(12):
        changes = RootChanges()
        for _ in range(3):
            added = rng.integers(-(2**62), 2**62, 40) if step % 3 else rng.choice(list(model) or [7], 40)  # new ids, or ids again
            roots = rng.integers(-5, 5, len(added))
            changes.add(added.astype(np.int64), roots.astype(np.int64))
            model.update(zip(added.tolist(), roots.tolist()))
            known = np.array(list(model), np.int64)
            removed = np.concatenate([rng.choice(known, 10), rng.integers(0, 2**62, 3)])  # present, and never seen
            changes.remove(removed)
            for i in removed.tolist():
                model.pop(i, None)
        current = changes.applied_to(current)
        current.save(tmp_path, ".", f"c{step}")
        current = RootMap.load(tmp_path, ".", f"c{step}")  # memory-mapped, as a reader opens it
        for root in range(-6, 6):
            assert current.walks_of(root).tolist() == sorted(i for i, r in model.items() if r == root)
        whole = RootMap.from_pairs(np.array(list(model), np.int64), np.array(list(model.values()), np.int64))
        assert all(np.array_equal(getattr(current, part), getattr(whole, part)) for part in ("roots", "starts", "ids"))  # as sorted whole
        ids = np.array([*list(model)[:20], 123456789], np.int64)
        assert current.roots_of(ids, -1).tolist() == [model.get(i, -1) for i in ids.tolist()]
    assert RootMap.load(tmp_path, ".", "absent") is None


def test_an_index_whose_walks_carry_payload_roots_is_still_searched_and_refreshed(tmp_path):
    """A walks collection written before root maps (its points carry their root as a payload, its
    manifest says nothing of a map) is searched by its payload, and a refresh keeps it that way."""
    rng = np.random.default_rng(4)
    store = EdgeStore(tmp_path / "edge")
    ids, roots = np.arange(200, dtype=np.int64), np.arange(200) % 6
    vectors = rng.standard_normal((200, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    store.begin()
    store.create("walks", 8, graph=False, hnsw_m=16)
    store.layouts()["walks"].root_map = False  # as an earlier kgwalk wrote it
    store.upsert("walks", ids, vectors, [{"root": int(r)} for r in roots])
    store.finish("walks")
    store.commit()
    store.begin(copy=True)
    store.upsert("walks", ids[:5], vectors[5:10], [{"root": int(r)} for r in roots[:5]])
    store.finish("walks")
    store.commit()
    vectors[:5] = vectors[5:10]
    assert not list((tmp_path / "edge").rglob("*.root_ids.npy"))
    reader = EdgeStore(tmp_path / "edge")
    q = vectors[3]
    for root in range(6):
        members = np.flatnonzero(roots == root)
        expected = members[np.argsort(-(vectors[members] @ q), kind="stable")][:4]
        hits = reader.search("walks", q, 4, root=root)
        assert [h.id for h in hits] == ids[expected].tolist() and all(h.payload == {"root": root} for h in hits)
    reader.close()
    store.close()
