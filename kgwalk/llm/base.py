"""The chat-model interface and the factory that picks a backend."""

from __future__ import annotations

from typing import Protocol

from kgwalk.config import LLMConf
from kgwalk.errors import KgwalkError

Message = dict[str, str]  # {"role": "system" | "user" | "assistant", "content": ...}
BACKENDS = ("vllm", "transformers", "openai")


class ChatModel(Protocol):
    def chat(self, conversations: list[list[Message]]) -> list[str]:
        """One reply per conversation, in order. A reply may be empty; failures that are not
        about one conversation (a bad endpoint, a bad key) raise KgwalkError."""
        ...


def make_chat_model(backend: str, conf: LLMConf, setting: str) -> ChatModel:
    """`setting` names the config section in errors, e.g. 'verbalize.llm'."""
    if not conf.model:
        raise KgwalkError(f"{setting}.model: the {backend} backend needs a model name (--set {setting}.model=...)")
    if backend == "openai":
        from kgwalk.llm.openai_api import OpenAIChat

        return OpenAIChat(conf, setting)
    if backend == "transformers":
        from kgwalk.llm.transformers_lm import TransformersChat

        return TransformersChat(conf, setting)
    if backend == "vllm":
        from kgwalk.llm.vllm_engine import VLLMChat

        return VLLMChat(conf, setting)
    raise KgwalkError(f"unknown LLM backend {backend!r} (available: {', '.join(BACKENDS)})")
