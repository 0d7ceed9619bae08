"""Chat LLMs behind one small interface: conversations in, one reply each out.

Three ways to reach a model, chosen by name: `vllm` (an in-process vLLM engine on a GPU worker),
`transformers` (Hugging Face generate, CPU or GPU), `openai` (any OpenAI-compatible endpoint:
`vllm serve`, a hosted API). The verbalizers use it; so can an answerer.
"""

from kgwalk.llm.backends import make_chat_model
from kgwalk.llm.base import ChatModel, Message

__all__ = ["ChatModel", "Message", "make_chat_model"]
