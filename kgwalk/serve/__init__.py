"""The query service: /retrieve, /answer, /status and /health over HTTP, and a page at / (`kgwalk serve`).

    from kgwalk.serve import create_app, run_server
    run_server(load_config(name="metaqa"))            # 127.0.0.1:8321 unless serve.* says otherwise

Clients that only call it need none of this: `kgwalk.client.KgwalkClient` imports httpx alone.
"""

from kgwalk.serve.app import create_app, run_server

__all__ = ["create_app", "run_server"]
