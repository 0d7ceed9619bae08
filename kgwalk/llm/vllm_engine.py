"""vLLM's offline engine on a GPU worker: `LLM.chat` over a batch of conversations, greedy, with
prefix caching so the shared instructions at the head of every prompt are computed once.

Kept thin on purpose: it follows vLLM's documented offline API (LLM, SamplingParams, LLM.chat)
and nothing else, since vLLM cannot be installed on our CPU build machines to test more.
"""

from __future__ import annotations

from kgwalk.config import LLMConf
from kgwalk.errors import KgwalkError
from kgwalk.llm.base import Message


class VLLMChat:
    def __init__(self, conf: LLMConf, setting: str) -> None:
        try:
            from vllm import LLM, SamplingParams
        except ImportError:
            raise KgwalkError(
                f"{setting}: the vllm backend needs vLLM on the GPU workers: pip install 'kgwalk[vllm]' there"
            ) from None
        args = {"enable_prefix_caching": True, **conf.engine_args}
        self.llm = LLM(model=conf.model, **args)
        self.params = SamplingParams(temperature=conf.temperature, max_tokens=conf.max_tokens)

    def chat(self, conversations: list[list[Message]]) -> list[str]:
        outputs = self.llm.chat(conversations, self.params, use_tqdm=False)
        return [o.outputs[0].text if o.outputs else "" for o in outputs]
