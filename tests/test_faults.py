"""Faults end in a clear line and a resumable state: a flaky or unreachable vector store, an
unwritable warehouse, a full disk."""

import errno
import http.server
import threading

import httpx
import numpy as np
import pytest
from qdrant_client.http.exceptions import ResponseHandlingException

from conftest import TINY_KG
from corpus import build_in_process, config, corpus_ids, index_points
from kgwalk.cli import main
from kgwalk.errors import KgwalkError
from kgwalk.index.store import ServerStore
from kgwalk.stages import run_index


def flaky(store: ServerStore, method: str, failures: int) -> list[int]:
    """Make the next `failures` calls of the client's `method` fail as a dropped connection would."""
    real, calls = getattr(store.client, method), []

    def call(*args, **kwargs):
        calls.append(1)
        if len(calls) <= failures:
            raise ResponseHandlingException(httpx.ConnectError("connection reset by peer"))
        return real(*args, **kwargs)

    setattr(store.client, method, call)
    return calls


def test_transient_store_errors_are_retried_and_the_index_is_whole(tmp_path):
    cfg = config(tmp_path / "wh", TINY_KG, ["index.backend=server", f"index.url={tmp_path / 'qdrant'}", "index.retry_backoff_s=0.01"])
    reference = config(tmp_path / "ref", TINY_KG, ["index.vector_datatype=float16"])  # the edge engine, with the server's walk vectors
    build_in_process(reference)
    build_in_process(cfg)  # builds the index with the server backend (qdrant-client local mode)
    import kgwalk.index.build as build

    real_open = build.open_store
    upserts: list[list[int]] = []

    def open_flaky(c):
        store = real_open(c)
        upserts.append(flaky(store, "upsert", 3))
        return store

    build.open_store = open_flaky
    try:
        run_index(cfg)
    finally:
        build.open_store = real_open
    assert len(upserts[0]) > 3  # three failures, then every batch
    assert index_points(cfg, *corpus_ids(cfg)) == index_points(reference, *corpus_ids(reference))


def test_a_store_that_keeps_failing_is_one_clear_error_and_the_live_index_stays(tmp_path):
    store = ServerStore(str(tmp_path / "q"), max_retries=2, retry_backoff_s=0.01)
    store.begin()
    store.create("t_walks", 4, False, 16)
    store.upsert("t_walks", np.array([1, 2]), np.eye(2, 4, dtype=np.float32), [{"root": 1}, {"root": 2}])
    store.commit()
    store.begin()
    store.create("t_walks", 4, False, 16)
    calls = flaky(store, "upsert", 100)
    with pytest.raises(KgwalkError, match=r"failed upserting 1 points 3 times \(connection reset by peer\); the live index is unchanged"):
        store.upsert("t_walks", np.array([3]), np.ones((1, 4), np.float32), [{"root": 3}])
    assert len(calls) == 3
    assert store.count("t_walks") == 2  # the alias still points at the committed collection
    # the next build drops what the failed one left behind
    store.begin()
    store.create("t_walks", 4, False, 16)
    names = [c.name for c in store.client.get_collections().collections]
    assert len(names) == 2  # the live one and the new one


class Unavailable(http.server.BaseHTTPRequestHandler):
    paths: list[str] = []

    def do_GET(self):  # noqa: N802
        type(self).paths.append(self.path)
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_PUT = do_POST = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


def test_a_server_answering_503_is_retried_then_fails_in_one_line(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Unavailable)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        store = ServerStore(f"http://127.0.0.1:{server.server_port}", max_retries=2, retry_backoff_s=0.01)
        with pytest.raises(KgwalkError, match=r"failed reading aliases 3 times \(HTTP 503\)"):
            store.begin()
            store.create("t_walks", 4, False, 16)
        # qdrant-client may also probe the server's version, at a moment of its own choosing: not counted
        assert Unavailable.paths.count("/aliases") == 3
    finally:
        server.shutdown()


def test_an_unreachable_server_fails_in_one_line(tmp_path):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = ServerStore(f"http://127.0.0.1:{port}", max_retries=1, retry_backoff_s=0.01)
    with pytest.raises(KgwalkError, match=r"Qdrant at http://127.0.0.1:\d+ failed reading aliases 2 times"):
        store.create("t_walks", 4, False, 16)


def run_cli(capsys, *args: str) -> tuple[int, list[str]]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return exit_info.value.code, [line for line in err.splitlines() if line.startswith("kgwalk:")]


@pytest.mark.parametrize("warehouse", ["/proc/kgwalk-warehouse", "{tmp}/a-file/warehouse"])
def test_an_unwritable_warehouse_fails_before_any_work(tmp_path, capsys, warehouse):
    (tmp_path / "a-file").write_text("x")
    code, lines = run_cli(capsys, "build", "--kg", str(TINY_KG), "--warehouse", warehouse.format(tmp=tmp_path))
    assert code == 2 and len(lines) == 1 and "cannot write to the warehouse" in lines[0] and "writable folder" in lines[0]


def test_a_full_disk_mid_stage_is_one_line_and_the_table_keeps_its_version(tmp_path, capsys, monkeypatch):
    import kgwalk.storage as storage

    common = ["--kg", str(TINY_KG), "--warehouse", str(tmp_path / "wh"), "--name", "d"]
    assert run_cli(capsys, "ingest", *common)[0] == 0
    version = storage.table_version(tmp_path / "wh" / "d" / "edges")
    real = storage.write_deltalake

    def full(table_or_uri, data, **kwargs):
        if str(table_or_uri).endswith("edges"):
            raise OSError(errno.ENOSPC, "No space left on device", str(table_or_uri) + "/part-0.parquet")
        return real(table_or_uri, data, **kwargs)

    monkeypatch.setattr(storage, "write_deltalake", full)
    code, lines = run_cli(capsys, "ingest", *common)
    assert code == 74 and len(lines) == 1
    assert lines[0].startswith("kgwalk: error: no space left on device writing ") and "make room" in lines[0]
    assert storage.table_version(tmp_path / "wh" / "d" / "edges") == version
