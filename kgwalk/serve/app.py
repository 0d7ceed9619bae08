"""The query service: one warmed-up Retriever behind FastAPI, and an Answerer when an LLM is set.

    app = create_app(load_config(name="metaqa"))      # or run_server(cfg): uvicorn on serve.host:port

Endpoints are plain `def`s, so FastAPI runs them in its threadpool. The retriever's embedder and
embedded Qdrant are not known to be thread-safe, so retrievals take turns under one lock; the LLM
call of /answer (the slow part) runs outside it.
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations at
# runtime, and the request model is a class local to create_app (its limits come from the config).

import contextlib
import hmac
import ipaddress
import os
import threading
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.query import Answerer, Retrieval, Retriever
from kgwalk.query.answer import check_answer_conf

OPEN_PATHS = frozenset({"/health"})  # no API key needed: load balancers and probes call it


class _Out(BaseModel):
    # fields the query package adds later pass through instead of being dropped
    model_config = ConfigDict(extra="allow")


class WalkOut(_Out):
    walk_id: int
    score: float = Field(description="cosine to the question, plus any rerank prior")
    kind: str = Field(description="bfs or random")
    text: str = Field(description="the walk verbalized as one sentence")
    nodes: list[int]
    node_labels: list[str]
    triples: list[tuple[str, str, str]] = Field(description="(head, relation, tail) as the KG states them")
    signature: str = Field(description='the relation path, e.g. "directed_by>|<directed_by"')
    cosine: float


class NodeOut(_Out):
    id: int
    label: str
    score: float = Field(description="cosine of the node to the question")
    matched: bool = Field(description="named in the question (hybrid node search)")
    walks: list[WalkOut] = Field(description="this node's top walks, best first")


class RetrieveOut(_Out):
    question: str
    nodes: list[NodeOut] = Field(description="the top-k nodes, each with its top-k walks (Walk&Retrieve Eq. 3)")
    timings_ms: dict[str, float]


class AnswerOut(RetrieveOut):
    answer: str = Field(description="the LLM's reply")
    known: bool = Field(description="false when the LLM said it does not know")


class HealthOut(BaseModel):
    status: str
    name: str = Field(description="the KG this service answers over")
    answer: bool = Field(description="whether an LLM is configured, so that /answer works")


class ErrorOut(BaseModel):
    detail: str


class _BadRetrieval(KgwalkError):
    """Raised by the retrieval inside /answer, so that it maps to 400 and an LLM failure to 502."""


class _Locked:
    """A retriever that takes turns, in the Retriever's shape so that an Answerer can use it."""

    def __init__(self, retriever: Retriever) -> None:
        self.retriever = retriever
        self.lock = threading.Lock()

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None) -> Retrieval:
        with self.lock:
            try:
                return self.retriever.retrieve(question, k_nodes, k_walks)
            except KgwalkError as e:
                raise _BadRetrieval(str(e)) from e

    def warm_up(self) -> None:
        with self.lock:
            self.retriever.warm_up()

    def close(self) -> None:
        self.retriever.close()


class _Service:
    retriever: _Locked
    answerer: Answerer | None = None
    no_llm = ""  # why /answer is unavailable
    llm_lock: Any = contextlib.nullcontext()


def _query_model(cfg: Config) -> type[BaseModel]:
    max_k, q = cfg.serve.max_k, cfg.query

    class Query(BaseModel):
        """A question, and optionally how many nodes and walks per node to retrieve."""

        # strict: "3" is not a k, 7 is not a question; forbid: a misspelt field is an error, not a default
        model_config = ConfigDict(strict=True, extra="forbid")
        question: str = Field(min_length=1, max_length=q.max_question_chars, examples=["who directed [Kismet]"],
                              description=f"at most {q.max_question_chars} characters, not blank")
        k_nodes: int | None = Field(None, ge=1, le=max_k, description=f"nodes, 1..{max_k} (default query.k_nodes={q.k_nodes})")
        k_walks: int | None = Field(None, ge=1, le=max_k, description=f"walks per node, 1..{max_k} (default query.k_walks={q.k_walks})")

        @field_validator("question")
        @classmethod
        def not_blank(cls, question: str) -> str:
            if not question.strip():
                raise ValueError("the question is blank")
            return question

    return Query


def _api_key(cfg: Config) -> str | None:
    return os.environ.get(cfg.serve.api_key_env) or None


def _authorized(request: Request, key: str) -> bool:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = token.strip() if scheme.lower() == "bearer" else request.headers.get("x-api-key", "")
    return hmac.compare_digest(given.encode(), key.encode())  # constant time: no key guessing by timing


def create_app(cfg: Config, retriever: Retriever | None = None, answerer: Answerer | None = None) -> FastAPI:
    """The service over `cfg`'s corpus. Without `retriever`, one is opened and warmed up at startup;
    without `answerer`, one is made there when answer.backend is set (an answerer that is passed in
    gets its retriever wrapped in the service's lock)."""
    if cfg.serve.max_k < 1:
        raise KgwalkError(f"serve.max_k must be >= 1, got {cfg.serve.max_k}")
    svc = _Service()
    key = _api_key(cfg)  # read once: a key changed later takes a restart

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        inner = retriever or (answerer.retriever if answerer else None)
        own = inner is None
        svc.retriever = _Locked(inner or Retriever(cfg))
        try:
            svc.retriever.warm_up()
            if answerer is not None:
                if not isinstance(answerer.retriever, _Locked):
                    answerer.retriever = svc.retriever if answerer.retriever is inner else _Locked(answerer.retriever)
                svc.answerer = answerer
            elif cfg.answer.backend:
                svc.answerer = Answerer(cfg, retriever=svc.retriever)  # type: ignore[arg-type]  # a Retriever in shape
            else:
                try:
                    check_answer_conf(cfg)
                except KgwalkError as e:
                    svc.no_llm = str(e)
            # OpenAI clients bound their own concurrency; a local model generates one batch at a time
            if svc.answerer is not None and cfg.answer.backend != "openai":
                svc.llm_lock = threading.Lock()
            yield
        finally:
            if own:
                svc.retriever.close()

    app = FastAPI(
        title="kgwalk",
        summary=f"Walk&Retrieve over the KG {cfg.name!r}: the top-k nodes of a question, the top-k walks of each, and LLM answers",
        description=f"When ${cfg.serve.api_key_env} is set on the server, every endpoint but /health needs "
                    "`Authorization: Bearer <key>` (or `X-API-Key: <key>`).",
        lifespan=lifespan,
    )
    Query = _query_model(cfg)
    errors: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorOut, "description": "the retrieval failed (the reason is in detail)"},
        401: {"model": ErrorOut, "description": "missing or wrong API key"},
    }

    if key:
        @app.middleware("http")
        async def require_key(request: Request, call_next: Any) -> Response:
            if request.url.path not in OPEN_PATHS and not _authorized(request, key):
                return JSONResponse({"detail": "missing or wrong API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
            return await call_next(request)

    @app.get("/health", response_model=HealthOut, summary="Liveness, the KG's name, and whether /answer has an LLM")
    def health() -> dict[str, Any]:
        return {"status": "ok", "name": cfg.name, "answer": svc.answerer is not None}

    @app.post("/retrieve", response_model=RetrieveOut, responses=errors, summary="Top-k nodes of the question, top-k walks of each")
    def retrieve(query: Query) -> dict[str, Any]:  # type: ignore[valid-type]
        try:
            return svc.retriever.retrieve(query.question, query.k_nodes, query.k_walks).to_json()
        except KgwalkError as e:
            raise HTTPException(400, str(e)) from None

    @app.post("/answer", response_model=AnswerOut, summary="The retrieved walks in the answer prompt, one LLM call",
              responses={**errors, 502: {"model": ErrorOut, "description": "the LLM failed"},
                         503: {"model": ErrorOut, "description": "no LLM is configured (answer.backend)"}})
    def answer(query: Query) -> dict[str, Any]:  # type: ignore[valid-type]
        if svc.answerer is None:
            raise HTTPException(503, svc.no_llm or "no LLM is configured (answer.backend)")
        try:
            with svc.llm_lock:
                return svc.answerer.answer(query.question, query.k_nodes, query.k_walks).to_json()
        except _BadRetrieval as e:
            raise HTTPException(400, str(e)) from None
        except KgwalkError as e:  # the LLM: down, refusing the key, failing every retry
            raise HTTPException(502, str(e)) from None

    return app


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def run_server(cfg: Config, host: str | None = None, port: int | None = None) -> None:
    """Serve until interrupted. Binding beyond loopback needs an API key, so that the corpus and
    the LLM behind /answer are never open to the network by accident."""
    import uvicorn

    host = host or cfg.serve.host
    port = cfg.serve.port if port is None else port
    if not _loopback(host) and not _api_key(cfg):
        raise KgwalkError(f"serve: refusing to listen on {host} without an API key: export {cfg.serve.api_key_env}=<secret> "
                          "(clients send it as 'Authorization: Bearer <secret>'), or use --host 127.0.0.1")
    if not 0 <= port <= 65535:
        raise KgwalkError(f"serve.port must be 0..65535, got {port}")
    if cfg.answer.backend:
        check_answer_conf(cfg)
    # Open and warm up here, so that a missing corpus ends in one line rather than inside uvicorn's startup.
    retriever = Retriever(cfg)
    try:
        retriever.warm_up()
        uvicorn.run(create_app(cfg, retriever), host=host, port=port)
    finally:
        retriever.close()
