"""Both vector-store backends answer the same searches: exact top-k, root filter honoured."""

from pathlib import Path

import numpy as np
import pytest

from kgwalk.errors import KgwalkError
from kgwalk.index.edge import EdgeStore
from kgwalk.config import load_config
from kgwalk.index.store import ServerStore, open_store, walk_datatype


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
    store.upsert("walks", ids, vectors, [{"root": int(r)} for r in roots])  # a walk point's payload is its root alone
    store.finish("walks")
    store.commit()
    got, got_vectors, payloads = store.retrieve("walks", ids[:5])
    assert got.tolist() == ids[:5].tolist()
    if backend == "edge":  # Qdrant keeps unit vectors as given; qdrant-client's local mode renormalizes in NumPy
        assert np.array_equal(got_vectors, vectors[:5])
    assert np.allclose(got_vectors, vectors[:5], atol=1e-6)
    assert payloads == [{"root": int(r)} for r in roots[:5]]  # the edge engine keeps roots beside the shards, not as payloads
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
        assert [h.id for h in hits] == ids[expected].tolist()
        assert all(h.payload == {"root": root} for h in hits)  # a walk point's payload is its root
        assert np.allclose([h.score for h in hits], scores[expected], atol=1e-5)
    top = store.search("walks", q, 5)
    assert [h.id for h in top] == ids[np.argsort(-scores)[:5]].tolist()
    assert [h.payload for h in top] == [{"root": int(r)} for r in roots[np.argsort(-scores)[:5]]]
    # a question embedded by another model (another size) is refused in one line, not by Qdrant
    for other in (q[:12], np.concatenate([q, q])):
        with pytest.raises(KgwalkError, match=rf"'walks' vectors have {dim} dimensions, the question's {len(other)}: query with the embed.model"):
            store.search("walks", other, 4, root=0)
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


def _unit(rng, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("hints", [False, True])
def test_layered_walks_read_like_one_collection_through_refreshes_and_compactions(tmp_path, hints):
    """An edge refresh keeps the walks' base and writes only a delta and masked points; whatever
    the upserts and deletes over successive generations, reads (retrieve, count, search with and
    without a root) equal qdrant-client's local mode after the same operations, across the
    compactions that fold the delta into a new base. Old generations are dropped except a base
    still in use. `hints`: the writer is told which upserts are new points and that the deletes
    are points (as a refresh tells it), and a refresh that does not compact never opens the base."""
    # seal_points: the base is built, and compacted, in parts (sealed segments) read as one
    edge, server = EdgeStore(tmp_path / "edge", compact_ratio=0.25, seal_points=60), ServerStore(":memory:")
    rng = np.random.default_rng(1)
    dim, roots = 8, 6
    ids = rng.integers(-(2**63), 2**63 - 1, size=300, dtype=np.int64)
    root_of = {int(i): int(r) for i, r in zip(ids, rng.integers(0, roots, len(ids)))}
    payload = lambda i: {"root": root_of[int(i)]}  # noqa: E731 - a walk point's payload is its root alone
    live = set(ids[:200].tolist())
    for store in (edge, server):
        store.begin()
        store.create("walks", dim, graph=False, hnsw_m=16)
        first = _unit(np.random.default_rng(2), 200, dim)
        for start in range(0, 200, 50):
            store.upsert("walks", ids[start : start + 50], first[start : start + 50], [payload(i) for i in ids[start : start + 50]])
        store.finish("walks")
        store.commit()
    bases = [edge.layouts()["walks"].base]
    assert len(_sealed_segments(tmp_path / "edge" / bases[0])) == 2  # sealed after the batches passing 60 points
    unopened = 0
    for step in range(1, 9):
        pool = np.array(sorted(live | set(ids.tolist())), np.int64)
        upserts = rng.choice(pool, 25, replace=False)  # replaced, re-added after a delete, or new
        if hints and step % 2:  # new points only: nothing of the base is replaced
            upserts = rng.choice(np.array(sorted(set(ids.tolist()) - live), np.int64), 25, replace=False)
        deletes = rng.choice(pool, 12, replace=False)  # present or already gone
        if hints:
            deletes = rng.choice(np.array(sorted(live - set(upserts.tolist())), np.int64), 12, replace=False)
        replaces = np.isin(upserts, np.array(sorted(live), np.int64)) if hints else None
        vectors = _unit(rng, len(upserts), dim)
        opened: list[str] = []
        open_shard = edge._open_shard
        edge._open_shard = lambda relative: (opened.append(relative), open_shard(relative))[1]  # type: ignore[method-assign]
        for store in (edge, server):
            store.begin(copy=True)
            store.upsert("walks", upserts, vectors, [payload(i) for i in upserts], replaces=replaces)
            store.delete("walks", deletes, np.array([root_of[int(i)] for i in deletes]) if hints else None, present=hints)
            store.finish("walks")
            store.commit()
        del edge._open_shard
        live = (live | set(upserts.tolist())) - set(deletes.tolist())
        reader = EdgeStore(tmp_path / "edge")
        bases.append(reader.layouts()["walks"].base)
        if hints and bases[-1] == bases[-2] and not replaces.any():
            assert bases[-1] not in opened, opened
            unopened += 1
        every = np.sort(ids)
        (e_ids, e_vecs, e_pay), (s_ids, s_vecs, s_pay) = reader.retrieve("walks", every), server.retrieve("walks", every)
        assert e_ids.tolist() == s_ids.tolist() == sorted(live)
        assert e_pay == s_pay and np.allclose(e_vecs, s_vecs, atol=1e-6)
        assert reader.count("walks") == server.count("walks") == len(live)
        q = _unit(rng, 1, dim)[0]
        for root in [*range(roots), None]:
            e_hits, s_hits = reader.search("walks", q, 7, root=root), server.search("walks", q, 7, root=root)
            assert [h.id for h in e_hits] == [h.id for h in s_hits]
            if root is None:
                assert [h.payload for h in e_hits] == [{"root": root_of[h.id]} for h in e_hits]
            else:  # within a root a hit's payload is its root, not read from the store
                assert all(h.payload == {"root": root} and root_of[h.id] == root for h in e_hits + s_hits)
            assert np.allclose([h.score for h in e_hits], [h.score for h in s_hits], atol=1e-5)
        reader.close()
        current = edge.live_generation()
        kept = {p.name for p in (tmp_path / "edge").glob("g*")}
        previous = f"g{int(current[1:]) - 1:06d}"
        assert kept <= {current, previous, bases[-1].split("/")[0], bases[-2].split("/")[0]}
    # Most refreshes only add a delta on the same base; some compact into a new one.
    assert 2 <= len(set(bases)) < len(bases) - 2, bases
    assert unopened >= 2 if hints else unopened == 0
    assert len(_sealed_segments(tmp_path / "edge" / bases[-1])) >= 2  # a compaction's base, in parts too
    edge.close()
    server.close()


def _sealed_segments(shard: Path) -> list[Path]:
    """A shard's immutable segments: those with an immutable id map (an appendable one has none)."""
    return [segment for segment in (shard / "segments").iterdir() if (segment / "id_tracker.e2i").exists()]


def test_a_base_written_in_sealed_parts_keeps_memory_bounded_and_reads_like_one_segment(tmp_path):
    """A build's walks base is sealed every `seal_points` points while it is written, so Qdrant's
    writable segment never holds more than a part (about 240 B a point in memory): each part
    stays a segment of its own, never merged back, and searches and reads are those of a base
    sealed whole."""
    rng = np.random.default_rng(7)
    ids = rng.integers(-(2**63), 2**63 - 1, size=2500, dtype=np.int64)
    vectors = _unit(rng, len(ids), 16)
    payloads = [{"root": int(i % 30)} for i in range(len(ids))]
    whole, parts = EdgeStore(tmp_path / "whole"), EdgeStore(tmp_path / "parts", seal_points=1000)
    for store in (whole, parts):
        store.begin()
        store.create("walks", 16, graph=False, hnsw_m=16)
        for start in range(0, len(ids), 500):  # batches as a build hands them over
            store.upsert("walks", ids[start : start + 500], vectors[start : start + 500], payloads[start : start + 500])
        store.finish("walks")
        store.commit()
    assert len(_sealed_segments(tmp_path / "whole" / whole.layouts()["walks"].base)) == 1
    # two full parts sealed while written, the last 500 points at finish
    assert len(_sealed_segments(tmp_path / "parts" / parts.layouts()["walks"].base)) == 3
    assert parts.count("walks") == whole.count("walks") == len(ids)
    (p_ids, p_vecs, _), (w_ids, w_vecs, _) = parts.retrieve("walks", ids), whole.retrieve("walks", ids)
    assert p_ids.tolist() == w_ids.tolist() and np.array_equal(p_vecs, w_vecs)
    for q in _unit(rng, 3, 16):
        for root in [0, 17, None]:
            assert [(h.id, h.score) for h in parts.search("walks", q, 9, root=root)] == [(h.id, h.score) for h in whole.search("walks", q, 9, root=root)]
    whole.close()
    parts.close()


def test_a_refresh_does_not_copy_the_walks_base(tmp_path):
    store = EdgeStore(tmp_path / "edge")
    rng = np.random.default_rng(3)
    ids = np.arange(5000)
    store.begin()
    store.create("walks", 64, graph=False, hnsw_m=16)
    store.upsert("walks", ids, _unit(rng, len(ids), 64), [{"root": int(i % 50)} for i in ids])
    store.finish("walks")
    store.commit()
    built = store.live_generation()
    store.begin(copy=True)
    store.upsert("walks", ids[:10], _unit(rng, 10, 64), [{"root": 1} for _ in range(10)])
    store.finish("walks")
    store.commit()
    # Bytes on disk: an empty shard's files are sparse preallocations.
    size = lambda gen: sum(f.stat().st_blocks * 512 for f in (tmp_path / "edge" / gen).rglob("*") if f.is_file())  # noqa: E731
    assert store.layouts()["walks"].base == f"{built}/walks"
    assert size(store.live_generation()) < size(built) / 4
    store.close()


def test_a_walks_base_is_sealed_and_a_refresh_delta_is_not(tmp_path):
    """A base (a build's walks, a compaction's new base) is sealed into an immutable segment,
    which Qdrant loads from disk instead of rebuilding its id map and root index in memory; a
    refresh's delta stays appendable (it takes small writes). Reads are the same either way:
    test_layered_walks_read_like_one_collection_through_refreshes_and_compactions."""
    from qdrant_edge import EdgeShard

    store = EdgeStore(tmp_path / "edge", compact_ratio=0.01)
    rng = np.random.default_rng(4)
    ids = np.arange(3000)

    def indexed(shard_folder: str) -> tuple[int, int]:
        shard = EdgeShard.load(str(tmp_path / "edge" / shard_folder))
        info = shard.info()
        shard.close()
        return info.indexed_vectors_count, info.points_count

    store.begin()
    store.create("walks", 16, graph=False, hnsw_m=16)
    store.upsert("walks", ids, _unit(rng, len(ids), 16), [{"root": int(i % 40)} for i in ids])
    store.finish("walks")
    store.commit()
    built = store.layouts()["walks"].base
    assert indexed(built) == (3000, 3000)
    store.begin(copy=True)
    store.upsert("walks", ids[:20], _unit(rng, 20, 16), [{"root": int(i % 40)} for i in ids[:20]])
    store.finish("walks")
    store.commit()
    assert store.layouts()["walks"].base == built
    assert indexed(f"{store.live_generation()}/walks") == (0, 20)
    store.begin(copy=True)  # the delta passed compact_ratio: folded into a new base
    store.upsert("walks", ids[20:25], _unit(rng, 5, 16), [{"root": 1} for _ in range(5)])
    store.finish("walks")
    store.commit()
    compacted = store.layouts()["walks"].base
    sealed_vectors, points = indexed(compacted)
    # every point sealed; the 20 replaced ones stay deleted in their part until Qdrant vacuums it (past a fifth)
    assert compacted != built and points == 3000 and sealed_vectors == 3020
    store.close()


def test_a_refresh_indexes_its_changed_nodes_beside_the_graph_instead_of_rebuilding_it(tmp_path):
    """Once a refresh's changed node points pass the unindexed share, they get an HNSW segment of
    their own, and the build's graph is kept with the points they replace marked deleted: Qdrant's
    defaults merged everything into a rebuilt graph (bench/results/node_updates.md). Every point is
    still found by its current vector."""
    from qdrant_edge import EdgeShard

    store = EdgeStore(tmp_path / "edge")
    rng = np.random.default_rng(5)
    ids, dim = np.arange(24_000), 256

    def segments() -> int:
        shard = EdgeShard.load(str(tmp_path / "edge" / store.layouts()["nodes"].base))
        count = shard.info().segments_count
        shard.close()
        return count

    vectors = _unit(rng, len(ids), dim)
    store.begin()
    store.create("nodes", dim, graph=True, hnsw_m=16)
    store.upsert("nodes", ids, vectors, [{"id": int(i)} for i in ids])
    store.finish("nodes")
    store.commit()
    built = segments()
    # past the 10,000 points (10% of at least 100K) left unindexed and the 10 MB below which Qdrant
    # never indexes a segment; under half of the nodes (past it, the old graph is rebuilt anyway)
    changed = rng.choice(ids, 11_000, replace=False)
    vectors[changed] = _unit(rng, len(changed), dim)
    store.begin(copy=True)
    store.upsert("nodes", changed, vectors[changed], [{"id": int(i)} for i in changed])
    store.finish("nodes")
    store.commit()
    assert store.layouts()["nodes"].unindexed_points == 0
    assert segments() == built + 1
    assert store.count("nodes") == len(ids)
    for i in [*changed[:20], *np.setdiff1d(ids, changed)[:20]]:
        assert store.search("nodes", vectors[i], 1)[0].id == i
    store.close()


def test_the_shard_files_of_the_live_generation_are_listed_and_preloaded(tmp_path):
    """A server reads the live generation's shard files into the page cache (kgwalk.serve.app.
    preload): a layered collection's base lives in an earlier generation's folder, and must be
    among them with the delta; files of generations no longer read must not."""
    from kgwalk.serve.app import _free_memory, preload

    store = EdgeStore(tmp_path / "edge")
    rng = np.random.default_rng(6)
    ids = np.arange(2000)
    store.begin()
    store.create("walks", 16, graph=False, hnsw_m=16)
    store.create("nodes", 16, graph=True, hnsw_m=16)
    for name in ("walks", "nodes"):
        store.upsert(name, ids, _unit(rng, len(ids), 16), [{"root": int(i % 40)} for i in ids])
        store.finish(name)
    store.commit()
    built = store.live_generation()
    for _ in range(2):  # two refreshes: the first generation is read no more but for the walks base
        store.begin(copy=True)
        store.upsert("walks", ids[:10], _unit(rng, 10, 16), [{"root": 1} for _ in range(10)])
        store.finish("walks")
        store.commit()
    live = store.live_generation()
    files = store.shard_files()
    folders = {f.relative_to(tmp_path / "edge").parts[:2] for f in files if ".root_" not in f.name}
    assert folders == {(built, "walks"), (live, "walks"), (live, "nodes")}
    # the live generation's root map of the walks, the only one read (kgwalk.index.root_map)
    assert {f.relative_to(tmp_path / "edge").as_posix() for f in files if ".root_" in f.name} == {
        f"{live}/walks.root_{part}.npy" for part in ("roots", "starts", "ids")}
    nodes_only = store.shard_files(["nodes"])  # what a server whose walk search reads no walk point preloads
    assert nodes_only and {f.relative_to(tmp_path / "edge").parts[:2] for f in nodes_only} == {(live, "nodes")}
    assert set(nodes_only) < set(files)
    assert preload(files, free_bytes=10**12) == sum(f.stat().st_size for f in files) > 0
    assert preload(files, free_bytes=0) == 0  # more than half the free memory: not read
    assert _free_memory() > 2 * sum(f.stat().st_size for f in files)  # what a server reads by default
    assert preload(files) > 0
    files[0].unlink()  # a file gone meanwhile is skipped
    assert preload(files, free_bytes=10**12) == sum(f.stat().st_size for f in files[1:])
    store.close()


def test_node_sums_are_kept_exactly_across_refreshes_and_compactions(tmp_path):
    """Sums written by a build and by successive refreshes read back as the latest write of each
    root (zeros for roots never written or emptied), whatever generation and compaction."""
    store = EdgeStore(tmp_path / "edge", compact_ratio=0.3)
    rng = np.random.default_rng(4)
    dim, roots = 5, np.arange(-50, 150, dtype=np.int64)
    model: dict[int, tuple[list[int], int]] = {}

    def write(chosen: np.ndarray) -> None:
        sums = rng.integers(-(2**50), 2**50, (len(chosen), dim))
        walks = rng.integers(0, 4, len(chosen))  # 0: the root lost its node
        store.write_sums("nodes", chosen, sums, walks)
        model.update({int(r): (s.tolist(), int(w)) for r, s, w in zip(chosen, sums, walks)})

    store.begin()
    store.create("nodes", dim, graph=True, hnsw_m=16)
    store.upsert("nodes", np.arange(3), _unit(rng, 3, dim), [{"id": i} for i in range(3)])
    write(roots[:120])
    store.commit()
    bases = set()
    for _ in range(8):
        store.begin(copy=True)
        chosen = np.unique(rng.choice(roots, 15))
        write(chosen[:10])
        write(chosen[5:])  # a root written twice in one refresh: the latest write wins
        store.commit()
        reader = EdgeStore(tmp_path / "edge")
        bases.add(reader.layouts()["nodes"].sums_base)
        sums, walks = reader.read_sums("nodes", roots)
        expected = [model.get(int(r), ([0] * dim, 0)) for r in roots]
        assert walks.tolist() == [w if w else 0 for _, w in expected]
        assert sums[walks > 0].tolist() == [s for s, w in expected if w]
        reader.close()
    assert len(bases) >= 2  # the delta was folded into a new base at least once
    store.close()


def test_a_reader_moves_to_a_newer_version_only_when_it_follows(tmp_path):
    writer, reader = EdgeStore(tmp_path / "edge"), EdgeStore(tmp_path / "edge")
    writer.begin()
    writer.create("walks", 4, graph=False, hnsw_m=16)
    writer.upsert("walks", np.arange(4), np.eye(4, dtype=np.float32), [{"root": 0} for _ in range(4)])
    writer.finish("walks")
    writer.commit()
    assert reader.count("walks") == 4
    writer.begin(copy=True)
    writer.delete("walks", np.array([0]))
    writer.commit()
    assert reader.count("walks") == 4  # within a query: its version, whatever commits meanwhile
    reader.follow_live()
    assert reader.count("walks") == 3 and [h.id for h in reader.search("walks", np.eye(4)[0], 4, root=0)] != [0]
    writer.close()
    reader.close()


@pytest.mark.parametrize("backend", ["edge", "server"])
def test_a_float16_store_keeps_exactly_the_vectors_it_says_and_ranks_by_them(tmp_path, backend):
    """float16 halves the vectors; a build's node sums stay exact because `stored` says, bit for
    bit, what `retrieve` will return, and searches rank by the cosine to those stored vectors."""
    store = EdgeStore(tmp_path / "edge", vector_datatype="float16") if backend == "edge" else ServerStore(":memory:", vector_datatype="float16")
    rng = np.random.default_rng(5)
    n, dim = 100, 32
    vectors, ids, roots = _unit(rng, n, dim), np.arange(-50, 50, dtype=np.int64), np.arange(n) % 5
    vectors[0, :4] = [3e-5, -2e-6, 6e-8, 7e-9]  # float16 subnormals and underflow: the store rounds these as `stored` says too
    store.begin()
    store.create("walks", dim, graph=False, hnsw_m=16)
    kept = store.stored("walks", vectors)
    assert kept.dtype == np.float32 and not np.array_equal(kept, vectors)  # rounded: 11 significant bits
    assert np.array_equal(kept, vectors.astype(np.float16).astype(np.float32)) and np.array_equal(store.stored("walks", kept), kept)
    store.upsert("walks", ids, vectors, [{"root": int(r)} for r in roots])
    store.finish("walks")
    store.commit()
    got, got_vectors, _ = store.retrieve("walks", ids)
    assert got.tolist() == ids.tolist() and np.array_equal(got_vectors, kept)
    q = 3.0 * _unit(rng, 1, dim)[0]  # any length: scores are cosines to the stored vectors
    scores = kept.astype(np.float64) @ (q / np.linalg.norm(q))
    for root in (0, 4, None):
        members = np.arange(n) if root is None else np.flatnonzero(roots == root)
        ranked = members[np.argsort(-scores[members])]
        assert all(np.diff(-scores[ranked[:7]]) > 4e-4)  # this seed leaves no near-ties for rounding to swap
        hits = store.search("walks", q, 6, root=root)
        assert [h.id for h in hits] == ids[ranked[:6]].tolist()
        # Qdrant also rounds the (unit) query to float16: cosines within 2e-4
        assert np.allclose([h.score for h in hits], scores[ranked[:6]], atol=2e-4, rtol=0)
    store.close()


def test_a_refresh_keeps_the_datatype_its_index_was_built_with(tmp_path):
    """A refresh writes its delta in the datatype of the live base, whatever this kgwalk would
    create now: an index built as float32 stays float32 (and its node sums exact) until rebuilt."""
    rng = np.random.default_rng(6)
    old = EdgeStore(tmp_path / "edge", vector_datatype="float32")
    old.begin()
    old.create("walks", 16, graph=False, hnsw_m=16)
    old.upsert("walks", np.arange(50), _unit(rng, 50, 16), [{"root": 0} for _ in range(50)])
    old.commit()
    new = EdgeStore(tmp_path / "edge", vector_datatype="float16")
    new.begin(copy=True)
    vectors = _unit(rng, 3, 16)
    assert np.array_equal(new.stored("walks", vectors), vectors)
    new.upsert("walks", np.arange(100, 103), vectors, [{"root": 0} for _ in range(3)])
    new.commit()
    assert np.array_equal(new.retrieve("walks", np.arange(100, 103))[1], vectors)
    new.begin()
    new.create("walks", 16, graph=False, hnsw_m=16)  # a build: the new datatype
    assert not np.array_equal(new.stored("walks", vectors), vectors)
    new.upsert("walks", np.arange(50), _unit(rng, 50, 16), [{"root": 0} for _ in range(50)])
    new.commit()
    for _ in range(2):  # the first refresh starts a delta on the build's base, the second copies it
        reader = EdgeStore(tmp_path / "edge", vector_datatype="float32")
        reader.begin(copy=True)
        assert np.array_equal(reader.stored("walks", vectors), vectors.astype(np.float16).astype(np.float32))
        reader.upsert("walks", np.arange(100, 103), vectors, [{"root": 0} for _ in range(3)])
        reader.commit()
        assert np.array_equal(reader.retrieve("walks", np.arange(100, 103))[1], vectors.astype(np.float16).astype(np.float32))
        reader.close()
    new.close()
    old.close()


def test_a_refresh_leaves_changed_nodes_unindexed_and_exact_until_they_pass_a_tenth(tmp_path):
    """A refresh's node upserts are not re-indexed into the HNSW graph (that cost 12 s of a 0.1%
    refresh at 389K nodes) until those written since the last build pass 10% of the collection
    (at least 10,000 points); meanwhile searches over the copied graph and the unindexed points
    are exact."""
    store = EdgeStore(tmp_path / "edge")
    rng = np.random.default_rng(5)
    dim, n = 16, 2000
    vectors = _unit(rng, n, dim)
    store.begin()
    store.create("nodes", dim, graph=True, hnsw_m=16)
    store.upsert("nodes", np.arange(n), vectors, [{"id": i} for i in range(n)])
    store.finish("nodes")
    store.commit()
    assert store.layouts()["nodes"].unindexed_points == 0
    written = 0
    for batch in (4000, 5000, 2000):  # 4,000 and 9,000 stay unindexed; 11,000 pass 10,000
        changed = rng.choice(n, batch)
        vectors[changed] = _unit(rng, batch, dim)
        store.begin(copy=True)
        store.upsert("nodes", changed, vectors[changed], [{"id": int(i)} for i in changed])
        store.finish("nodes")
        store.commit()
        written += batch
        reader = EdgeStore(tmp_path / "edge")
        assert reader.layouts()["nodes"].unindexed_points == (written if written <= 10_000 else 0)
        for q in _unit(rng, 5, dim):
            assert [h.id for h in reader.search("nodes", q, 5)] == np.argsort(-(vectors @ q))[:5].tolist()
        reader.close()
    store.close()


def test_a_server_reader_reads_its_aliases_once_per_query(tmp_path):
    """Searches read where the aliases point once per query (after `follow_live`), not once per
    search; a collection built since a miss is found."""
    store = ServerStore(":memory:")
    with pytest.raises(KgwalkError, match="no index collection 'walks'"):
        store.search("walks", np.ones(4, np.float32), 1)
    store.begin()
    store.create("walks", 4, graph=False, hnsw_m=16)
    store.upsert("walks", np.array([-1, 2]), np.eye(2, 4, dtype=np.float32), [{"root": 1}, {"root": 2}])
    store.commit()
    reads = []
    get_aliases = store.client.get_aliases
    store.client.get_aliases = lambda: reads.append(1) or get_aliases()
    for _query in range(2):
        store.follow_live()
        hits = [store.search("walks", np.eye(1, 4, dtype=np.float32)[0], 1, root=r) for r in (1, 2, 1)]
        assert [h[0].id for h in hits] == [-1, 2, -1]
    assert len(reads) == 2
    store.close()


def test_turbo_codes_are_for_the_edge_backend_only():
    cfg = load_config(None, ["index.backend=server", "index.url=http://127.0.0.1:9", "index.vector_datatype=turbo8"])
    with pytest.raises(KgwalkError, match=r"^index.vector_datatype=turbo8 is for the edge backend; a server stores float16 or float32$"):
        open_store(cfg)
    assert walk_datatype(load_config(None, ["index.backend=server", "index.url=http://127.0.0.1:9"]).index) == "float16"
    assert walk_datatype(load_config(None, []).index) == "turbo8"
