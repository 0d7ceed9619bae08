"""A small client of the query service (`kgwalk serve`), needing only httpx: no model, no index.

    from kgwalk.client import KgwalkClient
    with KgwalkClient("http://127.0.0.1:8321", api_key=os.environ.get("KGWALK_API_KEY")) as kg:
        for node in kg.retrieve("who directed [Kismet]", k_nodes=2)["nodes"]:
            print(node["label"], [w["text"] for w in node["walks"]])
        print(kg.answer("who directed [Kismet]")["answer"])

Keep this module's imports light: programs that only call the service must not load torch.
"""

from __future__ import annotations

from typing import Any

import httpx


class KgwalkClientError(Exception):
    """The service said no (status_code: 400, 401, 422, 503, ...), or could not be reached (None)."""

    def __init__(self, status_code: int | None, detail: str) -> None:
        super().__init__(f"HTTP {status_code}: {detail}" if status_code is not None else detail)
        self.status_code = status_code
        self.detail = detail


def _detail(response: httpx.Response) -> str:
    """The server's reason: FastAPI's {"detail": "..."}, or its list of validation errors in one line."""
    try:
        detail = response.json()["detail"]
    except (ValueError, KeyError, TypeError):
        return response.text[:500] or response.reason_phrase
    if isinstance(detail, list):  # 422: [{"loc": ["body", "k_nodes"], "msg": "...", ...}, ...]
        return "; ".join(f"{'.'.join(str(p) for p in e.get('loc', [])[1:]) or 'body'}: {e.get('msg', e)}"
                         if isinstance(e, dict) else str(e) for e in detail)
    return str(detail)


class KgwalkClient:
    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 30.0) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def health(self) -> dict[str, Any]:
        return self._call("GET", "/health")

    def status(self) -> dict[str, Any]:
        """What `kgwalk status` says, as data: {"name", "kg", "derived", "index_layout", "last_refresh",
        "writer_lock", "corpus", "service", ...}."""
        return self._call("GET", "/status")

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: str | None = None) -> dict[str, Any]:
        """{"question", "mode", "nodes": [{"id", "label", "score", "walks": [{"text", "triples", ...}]}], "timings_ms"};
        `mode` "ego": each node's walks are the lines of its pruned ego-graph (None: the server's query.mode)."""
        return self._call("POST", "/retrieve", _body(question, k_nodes, k_walks) | ({"mode": mode} if mode else {}))

    def answer(self, question: str, k_nodes: int | None = None, k_walks: int | None = None) -> dict[str, Any]:
        """{"question", "answer", "known", "nodes", "timings_ms"}; 503 when the server has no LLM."""
        return self._call("POST", "/answer", _body(question, k_nodes, k_walks))

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            response = self._http.request(method, path, json=body)
        except httpx.TimeoutException as e:
            raise KgwalkClientError(None, f"{self.base_url}{path}: no answer within the timeout ({type(e).__name__})") from None
        except httpx.TransportError as e:  # refused, reset, DNS
            raise KgwalkClientError(None, f"cannot reach the kgwalk service at {self.base_url}: {type(e).__name__}: {e}") from None
        if not response.is_success:
            raise KgwalkClientError(response.status_code, _detail(response))
        return response.json()

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> KgwalkClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _body(question: str, k_nodes: int | None, k_walks: int | None) -> dict[str, Any]:
    # k left out rather than sent as null: the server's defaults (query.k_nodes, query.k_walks) apply
    return {"question": question, **{k: v for k, v in (("k_nodes", k_nodes), ("k_walks", k_walks)) if v is not None}}
