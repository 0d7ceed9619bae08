"""An MCP server over a kgwalk KG (`pip install 'kgwalk[mcp]'`): tools `search`, `answer`, `entity`, `status`.

    kgwalk mcp --name metaqa --warehouse warehouse     # over stdio, for an agent that starts it
    kgwalk serve --name metaqa --warehouse warehouse   # the same tools at /mcp (streamable HTTP), behind serve's API key

A tool's bad arguments, a retrieval the KG refuses, or an answer without an LLM come back as a
tool error (isError) with the one-line reason; the server goes on.
"""

# No `from __future__ import annotations`: the SDK reads the tools' annotations at runtime, and
# their limits come from the config (serve.max_k, query.max_question_chars).

import contextlib
import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any, Protocol

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field, ValidationError
from starlette.routing import BaseRoute

from kgwalk.config import Config
from kgwalk.errors import KgwalkError
from kgwalk.integrations.facts import EntityFacts, entity_facts
from kgwalk.integrations.source import LocalKg, WalkRecord, context_text, walk_records
from kgwalk.query import Answerer, Retriever
from kgwalk.query.answer import check_answer_conf
from kgwalk.query.lexicon import EntityLexicon
from kgwalk.refresh.status import status_data
from kgwalk.serve.app import Addon, Service

PATH = "/mcp"  # where `kgwalk serve` answers MCP
MAX_FACTS = 500  # facts per entity a call may ask for


class KgAccess(Protocol):
    """What the tools call: a KG in this process (`kgwalk mcp`) or the one `kgwalk serve` holds."""

    cfg: Config

    def retrieve(self, question: str, k_nodes: int | None, k_walks: int | None) -> dict[str, Any]:
        """The /retrieve JSON."""

    def answer(self, question: str) -> dict[str, Any]:
        """The /answer JSON; KgwalkError without an LLM."""

    def lexicon(self) -> EntityLexicon: ...

    def no_llm(self) -> str:
        """Why `answer` fails ("" where an LLM is configured)."""


class InProcess:
    """A Retriever over a built warehouse, and an Answerer where one is given; one call at a time."""

    def __init__(self, retriever: Retriever, answerer: Answerer | None = None) -> None:
        self.cfg = retriever.cfg
        self.answerer = answerer
        self._kg = LocalKg(retriever)
        self._why = "" if answerer is not None else _no_llm(self.cfg)

    @classmethod
    def open(cls, cfg: Config) -> "InProcess":
        """The KG of `cfg`, with an Answerer where answer.backend is set (its settings checked before the corpus opens)."""
        if cfg.answer.backend:
            check_answer_conf(cfg)
        retriever = Retriever(cfg)
        return cls(retriever, Answerer(cfg, retriever=retriever) if cfg.answer.backend else None)

    def retrieve(self, question: str, k_nodes: int | None, k_walks: int | None) -> dict[str, Any]:
        return self._kg.retrieve(question, k_nodes, k_walks)

    def answer(self, question: str) -> dict[str, Any]:
        if self.answerer is None:
            raise KgwalkError(self._why)
        with self._kg.lock:  # the answerer retrieves with the same Retriever
            return self.answerer.answer(question).to_json()

    def lexicon(self) -> EntityLexicon:
        return self._kg.retriever.lexicon

    def no_llm(self) -> str:
        return self._why

    def warm_up(self) -> None:
        with self._kg.lock:
            self._kg.retriever.warm_up()

    def close(self) -> None:
        self._kg.close()


def _no_llm(cfg: Config) -> str:
    """Why a KG given no Answerer has no answers."""
    try:
        check_answer_conf(cfg)
    except KgwalkError as e:
        return str(e)
    return "answer.backend is set, but this MCP server was made without an Answerer"


class Served:
    """The KG of a running `kgwalk serve`: its retriever under the service's lock, its answerer."""

    def __init__(self, cfg: Config, service: Service) -> None:
        self.cfg = cfg
        self.service = service

    def retrieve(self, question: str, k_nodes: int | None, k_walks: int | None) -> dict[str, Any]:
        return self.service.retriever.retrieve(question, k_nodes, k_walks).to_json()

    def answer(self, question: str) -> dict[str, Any]:
        return self.service.answer(question).to_json()

    def lexicon(self) -> EntityLexicon:
        inner = self.service.retriever.retriever
        if not isinstance(inner, Retriever):  # a service made around another Retrieves (tests) has no lexicon to share
            raise KgwalkError("entity lookups need the service's own Retriever")
        return inner.lexicon

    def no_llm(self) -> str:
        return "" if self.service.answerer is not None else self.service.no_llm


class Search(BaseModel):
    question: str
    context: str = Field(description="the walks as an answer prompt lists them, best first: each sentence with the rest of its answer set")
    walks: list[WalkRecord]


class Answered(Search):
    answer: str = Field(description="the LLM's reply")
    known: bool = Field(description="false when the LLM said it does not know")


class Entities(BaseModel):
    entities: list[EntityFacts] = Field(description="each entity with this label (usually one)")


class Status(BaseModel):
    name: str = Field(description="the KG these tools answer over")
    answer: bool = Field(description="whether `answer` has an LLM")
    no_answer_reason: str = Field(description="why `answer` fails, where it does")
    mode: str = Field(description="query.mode: walks, or ego (ego-graph lines)")
    k_nodes: int
    k_walks: int
    max_k: int
    tables: dict[str, Any] = Field(description="what `kgwalk status` says: table versions, what the corpus and index reflect, the last refresh")


def _searched(retrieval: dict[str, Any]) -> dict[str, Any]:
    records = walk_records(retrieval)
    return {"question": retrieval["question"], "context": context_text(records), "walks": records}


def _one_line(error: ValidationError) -> str:
    """Each bad argument and why, without the value sent."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.errors())


class _KgServer(MCPServer):
    """Tool errors in one line: a bad or unknown argument named with why, a KG's refusal with its reason."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arguments: dict[str, frozenset[str]] = {}  # per tool, the arguments it takes

    def add(self, fn: Callable[..., Any]) -> None:
        self.add_tool(fn)
        self.arguments[fn.__name__] = frozenset(inspect.signature(fn).parameters)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        unknown = sorted(set(arguments) - self.arguments.get(name, frozenset(arguments)))
        if unknown:
            takes = ", ".join(sorted(self.arguments[name])) or "none"
            raise ToolError(f"Error executing tool {name}: unknown argument {', '.join(unknown)} (it takes: {takes})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            cause = e.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(f"Error executing tool {name}: {_one_line(cause)}") from cause
            if isinstance(cause, KgwalkError):
                raise ToolError(f"Error executing tool {name}: {cause}") from cause
            raise


def mcp_server(kg: KgAccess) -> MCPServer:
    """The tools over `kg`, their limits the service's (serve.max_k, query.max_question_chars)."""
    cfg, q = kg.cfg, kg.cfg.query
    server = _KgServer(f"kgwalk-{cfg.name}", log_level="WARNING",
                       instructions=f"Facts of the knowledge graph {cfg.name!r}, retrieved with no LLM in the loop: `search` a question "
                                    "for walks (sentences, triples, answer sets), `entity` for an entity's facts by its label, `answer` "
                                    "for an LLM's answer where one is configured, `status` for what the KG holds.")
    Question = Annotated[str, Field(min_length=1, max_length=q.max_question_chars,  # noqa: N806 (a type)
                                    description=f"a question in plain words; naming an entity as the KG labels it, or in [brackets], helps (at most {q.max_question_chars} characters)")]
    KNodes = Annotated[int | None, Field(ge=1, le=cfg.serve.max_k, description=f"nodes to retrieve, 1..{cfg.serve.max_k} (default {q.k_nodes})")]  # noqa: N806
    KWalks = Annotated[int | None, Field(ge=1, le=cfg.serve.max_k, description=f"walks per node, 1..{cfg.serve.max_k} (default {q.k_walks})")]  # noqa: N806

    def search(question: Question, k_nodes: KNodes = None, k_walks: KWalks = None) -> Search:
        """Walk&Retrieve: the KG's nodes closest to the question, and of each the walks most similar to it, best first.
        Each walk is a sentence with its triples and relation path; `also` lists the other entities the same relation
        path reaches from the walk's root (the rest of a many-answer set)."""
        return Search(**_searched(kg.retrieve(question, k_nodes, k_walks)))

    def answer(question: Question) -> Answered:
        """An LLM's answer from the retrieved walks (one call, the Walk&Retrieve answer prompt), with the walks it was given.
        A tool error where the KG has no LLM configured (answer.backend)."""
        answered = kg.answer(question)
        return Answered(**_searched(answered), answer=answered["answer"], known=answered["known"])

    def entity(label: Annotated[str, Field(min_length=1, max_length=q.max_question_chars,
                                           description="the entity's label as the KG writes it (case and a parenthesized qualifier may differ)")],
               limit: Annotated[int, Field(ge=1, le=MAX_FACTS, description=f"facts to show per entity, 1..{MAX_FACTS}")] = 50) -> Entities:
        """An entity's one-step facts: every edge at it as (head, relation, tail) and as a sentence. A tool error where no entity has the label."""
        return Entities(entities=entity_facts(cfg, kg.lexicon(), label, limit))

    def status() -> Status:
        """What the KG holds and how it answers: its name, whether `answer` has an LLM, the retrieval defaults, table versions."""
        why = kg.no_llm()
        return Status(name=cfg.name, answer=not why, no_answer_reason=why, mode=q.mode, k_nodes=q.k_nodes, k_walks=q.k_walks,
                      max_k=cfg.serve.max_k, tables=status_data(cfg))

    for fn in (search, answer, entity, status):
        server.add(fn)
    return server


def run_stdio(cfg: Config) -> None:
    """`kgwalk mcp`: the tools over stdio until the client closes it. The corpus opens and warms up first, so that a
    missing one is a one-line error and the first call is not slow."""
    with contextlib.redirect_stdout(sys.stderr):  # stdout carries the protocol: what a library prints as it loads goes to stderr
        kg = InProcess.open(cfg)
    with contextlib.closing(kg):
        with contextlib.redirect_stdout(sys.stderr):
            kg.warm_up()
        anyio.run(mcp_server(kg).run_stdio_async)


def serve_addon(cfg: Config) -> Addon:
    """The tools at /mcp on `kgwalk serve` (streamable HTTP; stateless, JSON replies), behind its API key like its other
    endpoints. Without a key (loopback only) the SDK's DNS-rebinding guard admits loopback Host and Origin headers alone;
    with one the key is the guard, and any host name the service is reached by works."""

    def addon(service: Service, keyed: bool) -> tuple[list[BaseRoute], Callable[[], contextlib.AbstractAsyncContextManager[Any]]]:
        server = mcp_server(Served(cfg, service))
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if keyed else None
        app = server.streamable_http_app(streamable_http_path=PATH, stateless_http=True, json_response=True, transport_security=security)
        return list(app.routes), server.session_manager.run

    return addon

