"""The fixtures the framework adapters' tests share: test_serve's built corpus, a Retriever on it and
a loopback service over it, and `kg`, the same KG both ways an adapter reaches one."""

import pytest
from test_serve import cfg, direct, server  # noqa: F401 - module fixtures: the built corpus, a Retriever on it, a served app

from kgwalk.integrations import LocalKg, remote_kg


@pytest.fixture(scope="module", params=["in process", "served"])
def kg(request, direct, server):  # noqa: F811
    """The same KG both ways: its Retriever here, and the loopback service over it."""
    if request.param == "in process":
        yield LocalKg(direct)
    else:
        remote = remote_kg(server.url)
        yield remote
        remote.close()
