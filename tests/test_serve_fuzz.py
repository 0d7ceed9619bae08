"""The query service fuzzed from its own OpenAPI schema (schemathesis): valid and invalid requests
to every operation the schema lists, against a real uvicorn server on loopback over the sample
KG's corpus with an LLM behind /answer (a fake OpenAI-compatible one on loopback), with and
without an API key. Every answer is 2xx or 4xx with a JSON reason and conforms to the schema
(status codes, content types, response bodies); never a 5xx. (/answer's 503 without an LLM is
tested in test_serve.)

Cases come from schemathesis's Hypothesis strategies under plain `@given`: its pytest plugin's
fixture loader does not run under pytest 9."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import corpus
import pytest
import schemathesis
from hypothesis import HealthCheck, given, note, settings
from schemathesis import GenerationMode
from test_llm_verbalize import ChatServer
from test_serve import SAMPLE, Served, cfg  # noqa: F401  (cfg: the fixture building the sample KG's corpus)

from kgwalk.config import Config
from kgwalk.serve import create_app

KEY = "fuzz-key"
EXAMPLES = 40  # per operation and generation mode
OPERATIONS = {"GET /health", "POST /retrieve", "POST /answer", "GET /status"}


@pytest.fixture(scope="module")
def llm() -> Iterator[ChatServer]:
    server = ChatServer(empty_for="")  # every reply empty ("I don't know"), some after a 429 or 503 first
    yield server
    server.close()


@pytest.fixture(scope="module")
def llm_cfg(cfg, llm) -> Config:  # noqa: F811
    return corpus.config(Path(cfg.warehouse), SAMPLE, ["answer.backend=openai", f"answer.llm.base_url={llm.url}",
                                                       "answer.llm.model=tiny-chat"])


@pytest.fixture(scope="module")
def open_server(llm_cfg) -> Iterator[Served]:
    served = Served(create_app(llm_cfg))
    yield served
    served.close()


@pytest.fixture(scope="module")
def keyed_server(llm_cfg) -> Iterator[Served]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv(llm_cfg.serve.api_key_env, KEY)
        app = create_app(llm_cfg)  # reads the key once, here
    served = Served(app)
    yield served
    served.close()


def assert_json_reason(response) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        assert response.headers["content-type"][0].startswith("application/json"), response.headers  # one list per header
        detail = response.json()["detail"]
        assert detail and (isinstance(detail, str) or all(e["loc"] and e["msg"] for e in detail)), detail


def fuzz_operation(operation, mode: GenerationMode, check) -> None:
    what = f"{operation.method.upper()} {operation.path} ({mode.value})"

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case) -> None:
        note(f"{what}: {case.body!r}")
        check(case)

    run()


def fuzz(served: Served, schema_headers: dict[str, str], check) -> None:
    """Run `check(case)` on generated cases of every operation in the served schema, in both modes
    (only valid ones for an operation without input: there is nothing to break)."""
    schema = schemathesis.openapi.from_url(served.url + "/openapi.json", headers=schema_headers)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {f"{op.method.upper()} {op.path}" for op in operations} == OPERATIONS
    for operation in operations:
        takes_input = any(len(getattr(operation, part)) for part in ("path_parameters", "query", "headers", "cookies", "body"))
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if takes_input else (GenerationMode.POSITIVE,):
            fuzz_operation(operation, mode, check)


def test_fuzz_without_a_key(open_server, llm):
    fuzz(open_server, {}, lambda case: assert_json_reason(case.call_and_validate(base_url=open_server.url)))
    assert llm.answered() > 1  # valid /answer requests got through to the LLM


def test_fuzz_with_a_key(keyed_server):
    def check(case) -> None:
        assert_json_reason(case.call_and_validate(base_url=keyed_server.url, headers={"Authorization": f"Bearer {KEY}"}))
        refused = case.call(base_url=keyed_server.url)  # the same request without the key
        assert_json_reason(refused)
        assert refused.status_code == (200 if case.path == "/health" else 401), (case.path, refused.status_code)

    fuzz(keyed_server, {"X-API-Key": KEY}, check)
