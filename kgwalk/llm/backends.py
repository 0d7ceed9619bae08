"""The factory that picks a chat backend by name; each backend loads only when chosen."""

from __future__ import annotations

from kgwalk.config import LLMConf
from kgwalk.llm.base import ChatModel, check_llm_conf


def make_chat_model(backend: str, conf: LLMConf, setting: str) -> ChatModel:
    check_llm_conf(backend, conf, setting)
    if backend == "openai":
        from kgwalk.llm.openai_api import OpenAIChat

        return OpenAIChat(conf, setting)
    if backend == "transformers":
        from kgwalk.llm.transformers_lm import TransformersChat

        return TransformersChat(conf, setting)
    from kgwalk.llm.vllm_engine import VLLMChat

    return VLLMChat(conf, setting)
