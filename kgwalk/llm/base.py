"""The chat-model interface and the settings check every backend shares (the factory that picks
a backend: kgwalk.llm.backends)."""

from __future__ import annotations

from typing import Protocol, get_args

from kgwalk.config import LLMBackend, LLMConf
from kgwalk.errors import KgwalkError
from kgwalk.llm.gguf import check_gguf_file, is_gguf

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}


class ChatModel(Protocol):
    def chat(self, conversations: list[list[Message]]) -> list[str]:
        """One reply per conversation, in order. A reply may be empty; failures that are not
        about one conversation (a bad endpoint, a bad key) raise KgwalkError."""
        ...


def required_model(backend: str, conf: LLMConf, setting: str) -> str:
    """conf.model, which every backend needs (`setting` as in check_llm_conf)."""
    if not conf.model:
        raise KgwalkError(f"{setting}.model: the {backend} backend needs a model name (--set {setting}.model=...)")
    return conf.model


def check_llm_conf(backend: str, conf: LLMConf, setting: str) -> None:
    """The settings errors a backend would hit, found without loading anything; `setting` names
    the config section in errors, e.g. 'verbalize.llm'. A backend named in conf was checked as it
    loaded; this check is for callers that name one in code."""
    if backend not in get_args(LLMBackend):
        raise KgwalkError(f"unknown LLM backend {backend!r} (available: {', '.join(get_args(LLMBackend))})")
    model = required_model(backend, conf, setting)
    if backend == "transformers" and is_gguf(model):
        check_gguf_file(model, setting)
    if backend == "openai" and not conf.base_url:
        raise KgwalkError(f"{setting}.base_url: the openai backend needs the endpoint, e.g. http://host:8000/v1")
    if conf.concurrency < 1 or conf.max_retries < 0:
        raise KgwalkError(f"{setting}: concurrency must be >= 1 and max_retries >= 0")
