"""Both vector-store backends answer the same searches: exact top-k, root filter honoured."""

import numpy as np
import pytest

from kgwalk.index.store import EdgeStore, ServerStore


def backends(tmp_path):
    return {"edge": EdgeStore(tmp_path / "edge"), "server": ServerStore(":memory:")}


@pytest.mark.parametrize("backend", ["edge", "server"])
def test_search_with_and_without_root_filter(tmp_path, backend):
    store = backends(tmp_path)[backend]
    rng = np.random.default_rng(0)
    n, dim = 300, 16
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = rng.integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64)  # negative ids must survive
    roots = np.arange(n) % 7 - 3
    store.begin()
    store.create("walks", dim, graph=False, hnsw_m=16)
    store.upsert("walks", ids, vectors, [{"walk_id": int(i), "root": int(r)} for i, r in zip(ids, roots)])
    store.finish("walks")
    store.commit()
    got, got_vectors, payloads = store.retrieve("walks", ids[:5])
    assert got.tolist() == ids[:5].tolist()
    if backend == "edge":  # Qdrant keeps unit vectors as given; qdrant-client's local mode renormalizes in NumPy
        assert np.array_equal(got_vectors, vectors[:5])
    assert np.allclose(got_vectors, vectors[:5], atol=1e-6)
    assert [p["walk_id"] for p in payloads] == ids[:5].tolist()
    absent = np.setdiff1d(np.arange(-5, 5), ids)[:3]  # ids with no point: dropped, also when none is found
    got, got_vectors, payloads = store.retrieve("walks", np.concatenate([absent[:1], ids[7:8], absent[1:]]))
    assert got.tolist() == [ids[7]] and got_vectors.shape == (1, dim) and len(payloads) == 1
    got, got_vectors, payloads = store.retrieve("walks", absent)
    assert got.shape == (0,) and got_vectors.shape[0] == 0 and payloads == []
    assert store.count("walks") == n
    q = rng.standard_normal(dim).astype(np.float32)
    q /= np.linalg.norm(q)
    scores = vectors @ q
    for root in (-3, 0, 3):
        hits = store.search("walks", q, 4, root=root)
        members = np.flatnonzero(roots == root)
        expected = members[np.argsort(-scores[members])][:4]
        assert [h.payload["walk_id"] for h in hits] == ids[expected].tolist()
        assert np.allclose([h.score for h in hits], scores[expected], atol=1e-5)
    top = store.search("walks", q, 5)
    assert [h.payload["walk_id"] for h in top] == ids[np.argsort(-scores)[:5]].tolist()
    store.close()


@pytest.mark.parametrize("backend", ["edge", "server"])
def test_a_new_version_goes_live_whole_at_commit(tmp_path, backend):
    store = backends(tmp_path)[backend]
    # Edge: another process opening the folder; server: any client reading the alias.
    open_reader = (lambda: EdgeStore(tmp_path / "edge")) if backend == "edge" else (lambda: store)
    v = np.eye(4, dtype=np.float32)
    store.begin()
    store.create("nodes", 4, graph=True, hnsw_m=16)
    store.upsert("nodes", np.arange(4), v, [{"id": i} for i in range(4)])
    store.finish("nodes")
    store.commit()
    # A rebuild in progress leaves the live collection readable and unchanged.
    store.begin()
    store.create("nodes", 4, graph=True, hnsw_m=16)
    store.upsert("nodes", np.arange(2), v[:2], [{"id": i} for i in range(2)])

    def live():
        reader = open_reader()
        seen = sorted(h.payload["id"] for h in reader.search("nodes", v[0], 10)), reader.count("nodes")
        if reader is not store:
            reader.close()
        return seen

    assert live() == ([0, 1, 2, 3], 4)
    store.finish("nodes")
    assert live() == ([0, 1, 2, 3], 4)  # finished is not live yet
    store.commit()
    assert live() == ([0, 1], 2)
    if backend == "edge":  # a refresh copies the live version; deleting there leaves the live one alone
        store.begin(copy=True)
        store.delete("nodes", np.array([0]))
        assert live() == ([0, 1], 2)
        store.commit()
        assert live() == ([1], 1)
    store.close()
