"""The query service: one warmed-up Retriever behind FastAPI, and an Answerer when an LLM is set;
a page at / to ask it questions and see its status, drawn from static/ (no CDN: works offline).

    app = create_app(load_config(name="metaqa"))      # or run_server(cfg): uvicorn on serve.host:port

Endpoints are plain `def`s, so FastAPI runs them in its threadpool. The retriever's embedder and
embedded Qdrant are not known to be thread-safe, so retrievals take turns under one lock; the LLM
call of /answer (the slow part) runs outside it.
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations at
# runtime, and the request model is a class local to create_app (its limits come from the config).

import contextlib
import dataclasses
import errno
import hmac
import ipaddress
import os
import platform
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeAlias

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kgwalk.config import Config, QueryMode
from kgwalk.errors import KgwalkError, PortInUse
from kgwalk.query import Answer, Answerer, Retrieval, Retriever
from kgwalk.query.hits import Retrieves
from kgwalk.query.answer import check_answer_conf
from kgwalk.query.retriever import long_lived_frozen
from kgwalk.refresh.status import corpus_shape, status_data
from kgwalk.stages import check_kg_exists

# No API key needed: load balancers and probes call /health; the page and its files load without
# one so that the page can ask for it (its API calls need it).
OPEN_PATHS = frozenset({"/health", "/"})
STATIC = Path(__file__).parent / "static"
SWAGGER_UI = "/static/vendor/swagger-ui-dist-5.35.0"  # pinned copy of the npm release (static/vendor/README.md)
# The page runs only its own files: no inline script, nothing from elsewhere.
PAGE_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; "
            "base-uri 'none'; frame-ancestors 'none'")
BODY_SLACK_BYTES = 16 * 1024  # room beyond the question in a request body: the k fields, whitespace
MAX_LOC_CHARS = 64  # a misspelt field's name is shown this long in a 422, so that it cannot echo a body back


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
    also: list[int] = Field(default_factory=list, description="the other ends of this walk's relation path from its root in the KG, "
                            "none named elsewhere in the response: its complete answer set, within query.also_chars characters")
    also_labels: list[str] = Field(default_factory=list, description="the labels of `also`, in the same order")


class NodeOut(_Out):
    id: int
    label: str
    score: float = Field(description="cosine of the node to the question")
    matched: bool = Field(description="named in the question (hybrid node search)")
    walks: list[WalkOut] = Field(description="this node's top walks, best first")


class RetrieveOut(_Out):
    question: str
    mode: QueryMode = Field("walks", description="walks, or ego: each node's walks are the lines of its pruned ego-graph")
    nodes: list[NodeOut] = Field(description="the top-k nodes, each with its top-k walks (Walk&Retrieve Eq. 3)")
    timings_ms: dict[str, float]
    no_good_match: bool = Field(False, description="the question names no entity of this KG and no walk is close to it "
                                "(cosine below query.weak_cosine): the walks are the nearest there are, not evidence")
    match_note: str = Field("", description="one line saying so for people, where no_good_match; empty otherwise")


class AnswerOut(RetrieveOut):
    answer: str = Field(description="the LLM's reply")
    known: bool = Field(description="false when the LLM said it does not know")


class HealthOut(BaseModel):
    status: str
    name: str = Field(description="the KG this service answers over")
    answer: bool = Field(description="whether an LLM is configured, so that /answer works")


class ErrorOut(BaseModel):
    detail: str


class StatusOut(_Out):
    name: str
    root: str = Field(description="the KG's folder: the warehouse folder's name and the KG's (no absolute path: a client needs no server paths)")
    kg: list[dict[str, Any]] = Field(description="edges, entities, relations: version and last change (a refresh's change id, or the source file)")
    derived: list[dict[str, Any]] = Field(description="walks, texts, vectors, index: version, what they reflect, what they are behind")
    index_layout: str | None = Field(description="the edge index's live generation and its layout")
    last_refresh: dict[str, Any] | None = Field(description="the last change applied by `kgwalk refresh`, and when")
    writer_lock: dict[str, Any]
    corpus: dict[str, Any] = Field(description="walks per root as a histogram, and the entities with the most edges")
    service: dict[str, Any] = Field(description="versions, embedding model, index backend, query defaults")


class FieldError(BaseModel):
    loc: list[str | int] = Field(description='where: ["body", "k_nodes"]')
    msg: str = Field(description="why, without the value sent")
    type: str


class ValidationOut(BaseModel):
    detail: list[FieldError]


def max_body_bytes(cfg: Config) -> int:
    """The largest valid request with every question character sent as a JSON escape pair
    (12 bytes: \\ud83d\\ude00), plus slack. Larger bodies are refused unread."""
    return 12 * cfg.query.max_question_chars + BODY_SLACK_BYTES


class _BodyLimit:
    """413 for a request body over `limit` bytes, before it is parsed: at once when Content-Length
    says so, else (chunked) as soon as the bytes read pass the limit; the rest is never read."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.reason = f"the request body is over {limit:,} bytes (a question is at most query.max_question_chars characters)"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = Headers(scope=scope).get("content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:  # h11 refuses malformed lengths
            await JSONResponse({"detail": self.reason}, status_code=413)(scope, receive, send)
            return
        read = 0

        async def counted() -> Message:
            nonlocal read
            message = await receive()
            read += len(message.get("body", b""))
            if read > self.limit:
                # FastAPI lets an HTTPException from the body read through to its handler: JSON 413
                raise HTTPException(413, self.reason)
            return message

        await self.app(scope, counted, send)


def _field_error(error: dict[str, Any]) -> dict[str, Any]:
    """A validation error without the value sent (`input`, `ctx`): a 422 stays short whatever came
    in, and a value JSON cannot carry back (NaN, a lone surrogate) cannot break the reply."""
    loc = [p if isinstance(p, int) else _printable(str(p))[:MAX_LOC_CHARS] for p in error.get("loc", ())]
    msg = error.get("msg", "invalid")
    if error.get("type") == "json_invalid":  # "JSON decode error": say what is wrong, where
        msg = f"{msg}: {error.get('ctx', {}).get('error', '')}"
    return {"loc": loc, "msg": _printable(msg), "type": error.get("type", "")}


def _printable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate as \udXXX


class _BadRetrieval(KgwalkError):
    """Raised by the retrieval inside /answer, so that it maps to 400 and an LLM failure to 502."""


class _Locked:
    """A retriever that takes turns (a Retrieves, so that an Answerer can use it)."""

    def __init__(self, retriever: Retrieves) -> None:
        self.retriever = retriever
        self.lock = threading.Lock()

    def retrieve(self, question: str, k_nodes: int | None = None, k_walks: int | None = None, mode: QueryMode | None = None) -> Retrieval:
        with self.lock:
            try:
                return self.retriever.retrieve(question, k_nodes, k_walks, mode)
            except KgwalkError as e:
                raise _BadRetrieval(str(e)) from e

    def warm_up(self) -> None:
        with self.lock:
            self.retriever.warm_up()

    def close(self) -> None:
        self.retriever.close()


class NoLLM(KgwalkError):
    """/answer without an LLM (503)."""


class Service:
    """What the endpoints (and addons) call once the service has started."""

    retriever: _Locked
    answerer: Answerer | None = None
    no_llm = ""  # why /answer is unavailable
    llm_lock: Any = contextlib.nullcontext()
    shape: tuple[str, dict[str, Any]] = ("", {})  # corpus_shape and the table versions it was read at

    def answer(self, question: str, k_nodes: int | None = None, k_walks: int | None = None) -> Answer:
        """Raises NoLLM without an LLM, _BadRetrieval when the retrieval fails, KgwalkError when the LLM does."""
        if self.answerer is None:
            raise NoLLM(self.no_llm or "no LLM is configured (answer.backend)")
        with self.llm_lock:
            return self.answerer.answer(question, k_nodes, k_walks)


# An app served beside the API by a layer above this one (kgwalk/integrations/mcp.py: the MCP server at /mcp), behind
# the same API key: given the service and whether a key guards it, the routes to add and what runs while it serves
# (entered once the retriever is warm).
Addon = Callable[[Service, bool], tuple[list[BaseRoute], Callable[[], contextlib.AbstractAsyncContextManager[Any]]]]


def _whole(value: Any) -> Any:
    """JSON has one number type: 3.0 is the integer 3, as the schema's "integer" says; 2.5, NaN and
    infinities stay floats and are refused."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


class _QueryFields(Protocol):
    """What the endpoints read of a request: the fields of every config's Query model."""

    question: str
    k_nodes: int | None
    k_walks: int | None


class _RetrieveFields(_QueryFields, Protocol):
    mode: QueryMode | None


def _query_model(cfg: Config) -> type[_QueryFields]:
    max_k, q = cfg.serve.max_k, cfg.query
    K = Annotated[int | None, BeforeValidator(_whole)]  # noqa: N806 (a type)

    class Query(BaseModel):
        """A question, and optionally how many nodes and walks per node to retrieve."""

        # strict: "3" is not a k, 7 is not a question; forbid: a misspelt field is an error, not a default
        model_config = ConfigDict(strict=True, extra="forbid")
        question: str = Field(min_length=1, max_length=q.max_question_chars, examples=["who directed [Kismet]"],
                              description=f"at most {q.max_question_chars} characters, not blank")
        k_nodes: K = Field(None, ge=1, le=max_k, description=f"nodes, 1..{max_k} (default query.k_nodes={q.k_nodes})")
        k_walks: K = Field(None, ge=1, le=max_k, description=f"walks per node, 1..{max_k} (default query.k_walks={q.k_walks}); the nodes the question names also take the places the others leave (query.unnamed_walks={q.unnamed_walks})")

        @field_validator("question")
        @classmethod
        def not_blank(cls, question: str) -> str:
            if not question.strip():
                raise ValueError("the question is blank")
            return question

    return Query


def _unparsable_body(exc: StarletteHTTPException) -> str | None:
    """Why FastAPI could not parse a request body, in a few words; None for any other HTTP error.
    FastAPI answers a body that JSON cannot read for a reason other than its syntax (bytes that
    are not UTF-8, nesting deeper than Python's recursion) with a generic 400, raised from the
    cause; the service's own 400s carry none."""
    cause = exc.__cause__
    if exc.status_code != 400 or cause is None:
        return None
    if isinstance(cause, UnicodeDecodeError):
        return f"the body is not valid UTF-8 (byte {cause.start})"
    if isinstance(cause, RecursionError):
        return "the body's JSON nests too deeply"
    return f"the body cannot be read as JSON ({type(cause).__name__})"


def allowed_hosts(cfg: Config) -> frozenset[str]:
    """The Host header values a service without an API key answers besides loopback names and
    addresses: serve.host and serve.allowed_hosts, each with any port or the one given."""
    return frozenset(h.strip().lower() for h in [cfg.serve.host, *cfg.serve.allowed_hosts] if h.strip())


def _host_name(host: str) -> str:
    """The name in a Host header value, without its port and an IPv6 address's brackets."""
    if host.startswith("["):
        return host[1:].partition("]")[0]
    name, colon, port = host.rpartition(":")
    return name if colon and port.isdigit() and ":" not in name else host


def host_allowed(host: str | None, allowed: frozenset[str]) -> bool:
    """Whether a service without an API key answers a request with this Host header: a loopback
    name or address, or one of `allowed` (with or without the port). Anything else is a page
    elsewhere whose name was made to resolve to this machine (DNS rebinding)."""
    if not host:
        return False
    value = host.strip().lower()
    name = _host_name(value)
    return _loopback(name) or value in allowed or name in allowed


class _HostCheck:
    """421 Misdirected Request for a Host header `host_allowed` refuses, before anything is read."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str]) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not host_allowed(Headers(scope=scope).get("host"), self.allowed):
            reason = ("misdirected request: the Host header names none of this service's hosts (loopback, serve.host, "
                      "serve.allowed_hosts); add the name to serve.allowed_hosts, or set an API key")
            await JSONResponse({"detail": reason}, status_code=421)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def public_status(cfg: Config, status: dict[str, Any]) -> dict[str, Any]:
    """`status_data` for clients: the KG's folder and the build's source file without the server's
    absolute paths."""
    root = f"{Path(cfg.warehouse).name or '.'}/{cfg.name}"
    kg = [t | {"change": Path(str(t["change"])).name} for t in status["kg"]]  # a refresh's change id has no folder
    return status | {"root": root, "kg": kg}


def _with_mode(query: type, cfg: Config) -> type:
    class RetrieveQuery(query):  # a class made from the config
        """A question, optionally how many nodes and walks per node, and how each node's facts are shown."""

        mode: QueryMode | None = Field(None, description="walks: each node's top walks | ego: the lines of each node's pruned ego-graph, "
                                       f"in as many characters (default query.mode={cfg.query.mode})")

    return RetrieveQuery


def _api_key(cfg: Config) -> str | None:
    return os.environ.get(cfg.serve.api_key_env) or None


def _authorized(request: Request, key: str) -> bool:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = token.strip() if scheme.lower() == "bearer" else request.headers.get("x-api-key", "")
    return hmac.compare_digest(given.encode(), key.encode())  # constant time: no key guessing by timing


def create_app(cfg: Config, retriever: Retriever | None = None, answerer: Answerer | None = None, *, freeze_gc: bool = False,
               addons: tuple[Addon, ...] = ()) -> FastAPI:
    """The service over `cfg`'s corpus. Without `retriever`, one is opened and warmed up at startup;
    without `answerer`, one is made there when answer.backend is set (an answerer that is passed in
    gets its retriever wrapped in the service's lock). `freeze_gc`: the process serves only this,
    so what startup made is kept out of the cyclic GC's scans while it serves (`long_lived_frozen`)."""
    svc = Service()
    key = _api_key(cfg)  # read once: a key changed later takes a restart
    added = [addon(svc, key is not None) for addon in addons]

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
                svc.answerer = Answerer(cfg, retriever=svc.retriever)
            else:
                try:
                    check_answer_conf(cfg)
                except KgwalkError as e:
                    svc.no_llm = str(e)
            # OpenAI clients bound their own concurrency; a local model generates one batch at a time
            if svc.answerer is not None and cfg.answer.backend != "openai":
                svc.llm_lock = threading.Lock()
            async with contextlib.AsyncExitStack() as running:
                for _, run in added:
                    await running.enter_async_context(run())
                with long_lived_frozen() if freeze_gc else contextlib.nullcontext():
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
        docs_url=None,  # served below from the vendored Swagger UI instead of a CDN
        redoc_url=None,  # ReDoc would load from a CDN too; /docs covers it
    )
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    for routes, _ in added:
        app.router.routes.extend(routes)
    if TYPE_CHECKING:  # the classes are made at runtime, from the config; checkers see their fields
        Query: TypeAlias = _QueryFields
        RetrieveQuery: TypeAlias = _RetrieveFields
    else:
        Query = _query_model(cfg)  # noqa: N806 (a class)
        RetrieveQuery = _with_mode(Query, cfg)  # noqa: N806
    body_limit = max_body_bytes(cfg)
    errors: dict[int | str, dict[str, Any]] = {
        400: {"model": ErrorOut, "description": "the retrieval failed (the reason is in detail)"},
        401: {"model": ErrorOut, "description": "missing or wrong API key"},
        413: {"model": ErrorOut, "description": f"the request body is over {body_limit:,} bytes"},
        421: {"model": ErrorOut, "description": "without an API key: the Host header is not loopback, serve.host or in serve.allowed_hosts"},
        422: {"model": ValidationOut, "description": "bad input: each error's field and reason (a body that is not JSON, not UTF-8, or nests too deeply included)"},
    }

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": [_field_error(e) for e in exc.errors()]}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        reason = _unparsable_body(exc)
        if reason:  # bad input, as any other: 422 (400 says a retrieval failed)
            return JSONResponse({"detail": [{"loc": ["body"], "msg": reason, "type": "body_invalid"}]}, status_code=422)
        return await http_exception_handler(request, exc)

    app.add_middleware(_BodyLimit, limit=body_limit)
    if not key:  # added after the body limit, so it runs first: a misdirected request is not read
        app.add_middleware(_HostCheck, allowed=allowed_hosts(cfg))
    if key:  # added last, so it runs first: no key, no body read
        @app.middleware("http")
        async def require_key(request: Request, call_next: Any) -> Response:
            path = request.url.path
            if path not in OPEN_PATHS and not path.startswith("/static/") and not _authorized(request, key):
                return JSONResponse({"detail": "missing or wrong API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'"},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
            return await call_next(request)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-cache"})

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title="kgwalk API",
                                   swagger_js_url=f"{SWAGGER_UI}/swagger-ui-bundle.js", swagger_css_url=f"{SWAGGER_UI}/swagger-ui.css",
                                   swagger_favicon_url=f"{SWAGGER_UI}/favicon-32x32.png")

    @app.get("/status", response_model=StatusOut,
             responses={401: errors[401], 503: {"model": ErrorOut, "description": "a table's Delta log is damaged (detail: which, and what repairs it)"}},
             summary="What `kgwalk status` says, with walks per root and the largest hubs")
    def status() -> dict[str, Any]:
        try:
            now = status_data(cfg)
        except KgwalkError as e:  # a damaged Delta log: what `kgwalk status` says, in one line
            raise HTTPException(503, str(e)) from None
        versions = repr([(t["table"], t.get("version")) for t in now["kg"] + now["derived"]])
        if svc.shape[0] != versions:  # reading every walk's root is worth doing once per version
            svc.shape = (versions, corpus_shape(cfg))
        q = cfg.query
        service = {"versions": {"kgwalk": version("kgwalk"), "python": platform.python_version()},
                   "embed_model": cfg.embed.model, "index_backend": cfg.index.backend, "answer": svc.answerer is not None,
                   "k_nodes": q.k_nodes, "k_walks": q.k_walks, "max_k": cfg.serve.max_k}
        return {**public_status(cfg, now), "corpus": svc.shape[1], "service": service}

    @app.get("/health", response_model=HealthOut, summary="Liveness, the KG's name, and whether /answer has an LLM")
    def health() -> dict[str, Any]:
        return {"status": "ok", "name": cfg.name, "answer": svc.answerer is not None}

    @app.post("/retrieve", response_model=RetrieveOut, responses=errors, summary="Top-k nodes of the question, top-k walks of each")
    def retrieve(query: RetrieveQuery) -> dict[str, Any]:
        try:
            return svc.retriever.retrieve(query.question, query.k_nodes, query.k_walks, query.mode).to_json()
        except KgwalkError as e:
            raise HTTPException(400, str(e)) from None

    @app.post("/answer", response_model=AnswerOut, summary="The retrieved walks in the answer prompt, one LLM call",
              responses={**errors, 502: {"model": ErrorOut, "description": "the LLM failed"},
                         503: {"model": ErrorOut, "description": "no LLM is configured (answer.backend)"}})
    def answer(query: Query) -> dict[str, Any]:
        try:
            return svc.answer(query.question, query.k_nodes, query.k_walks).to_json()
        except NoLLM as e:
            raise HTTPException(503, str(e)) from None
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


def _listen(host: str, port: int) -> socket.socket:
    """The service's socket, listening before the corpus is opened: a port in use is reported at
    once rather than after the warm-up, and nothing else can take the port meanwhile
    (connections wait in the backlog until the service starts)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as e:
        raise KgwalkError(f"serve: cannot resolve the host {host!r}: {e.strerror}") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a restart need not wait out TIME_WAIT
    try:
        sock.bind(address)
        sock.listen(2048)  # uvicorn's default backlog
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise PortInUse(f"serve: {host}:{port} is in use by another program: stop it, or choose another port "
                            "with --port (conf: serve.port)") from None
        raise KgwalkError(f"serve: cannot listen on {host}:{port}: {e.strerror}") from None
    return sock


def _free_memory() -> int:
    """Bytes of memory the system could give without swapping (Linux's MemAvailable: free pages
    and the page cache it can drop), or its free pages where it does not say; 0 where neither."""
    with contextlib.suppress(OSError, ValueError, StopIteration), open("/proc/meminfo") as meminfo:
        return int(next(line for line in meminfo if line.startswith("MemAvailable:")).split()[1]) * 1024
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


def preload(files: list[Path], free_bytes: int | None = None) -> int:
    """Read `files` once, so that the page cache holds them: Qdrant maps a sealed walks base on
    demand, and right after a build or a reboot a fresh server's first searches read it from disk
    (MetaQA's first 300 questions: walk search p99 18 ms against 2.4 ms once read;
    bench/results/first_queries.md). Returns the bytes read: none when the files exceed half of
    the memory the system has available (`free_bytes`; asked of the system when None), where the
    cache could not keep them and reading them would only evict other pages."""
    sizes = {}
    for f in files:
        with contextlib.suppress(FileNotFoundError):  # a refresh may drop an old generation meanwhile
            sizes[f] = f.stat().st_size
    if sum(sizes.values()) > (_free_memory() if free_bytes is None else free_bytes) // 2:
        return 0
    buffer, read = bytearray(1 << 20), 0
    for f in sizes:
        with contextlib.suppress(FileNotFoundError), open(f, "rb", buffering=0) as handle:
            while n := handle.readinto(buffer):
                read += n
    return read


def run_server(cfg: Config, host: str | None = None, port: int | None = None, addons: tuple[Addon, ...] = ()) -> None:
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
    cfg = dataclasses.replace(cfg, serve=dataclasses.replace(cfg.serve, host=host))  # the host it answers to (Host check)
    with _listen(host, port) as sock:
        check_kg_exists(cfg)  # after the port: a port in use is said first, with its own exit code
        with contextlib.closing(Retriever(cfg)) as retriever:
            # Warmed up here, so that a missing corpus ends in one line rather than inside uvicorn's startup.
            retriever.warm_up()
            shard_files = getattr(retriever.store, "shard_files", None)  # an embedded index (EdgeStore)
            if shard_files is not None:  # serving starts at once; searches get faster as the files are read
                searched = [retriever.nodes_collection] if retriever.walks_from_graph else None  # walk points unread: query.walk_search
                threading.Thread(target=preload, args=(shard_files(searched),), name="kgwalk-preload", daemon=True).start()
            port = sock.getsockname()[1]
            server = uvicorn.Server(uvicorn.Config(create_app(cfg, retriever, freeze_gc=True, addons=addons), host=host, port=port))
            print(f"kgwalk: serving {cfg.name!r} on http://{host}:{port}/ (API docs at /docs; Ctrl+C stops)", file=sys.stderr, flush=True)
            # uvicorn exits 3 when its startup fails, the code of a failed quality gate: said below instead
            with contextlib.suppress(KeyboardInterrupt, SystemExit):
                server.run(sockets=[sock])
            if not server.started:
                raise KgwalkError("serve: the service did not start (uvicorn's log above says why)")
