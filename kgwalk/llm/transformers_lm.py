"""Batched greedy generation with Hugging Face transformers, for machines without vLLM. `model` is
a Hugging Face name or folder, or a GGUF file (dequantized once, see kgwalk.llm.gguf)."""

from __future__ import annotations

import os

from kgwalk.config import LLMConf
from kgwalk.errors import KgwalkError
from kgwalk.llm.base import Message, required_model
from kgwalk.llm.gguf import dequantized, is_gguf


class TransformersChat:
    def __init__(self, conf: LLMConf, setting: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        transformers.utils.logging.disable_progress_bar()
        transformers.utils.logging.set_verbosity_error()
        device = conf.device if conf.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
        dtype = "auto" if conf.dtype == "auto" else getattr(torch, conf.dtype)  # one of config.LLMDtype
        model = required_model("transformers", conf, setting)
        source = dequantized(model, setting) if is_gguf(model) else model
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(source)
            self.model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype).to(device).eval()
        except (OSError, ValueError) as e:
            raise KgwalkError(f"{setting}.model: cannot load {conf.model!r}: {str(e).splitlines()[0]}") from None
        self.tokenizer.padding_side = "left"  # decoder-only: generation continues the right end
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.conf = conf
        self.device = device

    def _prompt(self, messages: list[Message]) -> str:
        if self.tokenizer.chat_template:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return "\n\n".join(m["content"] for m in messages) + "\n\n"  # a base model: plain text

    def chat(self, conversations: list[list[Message]]) -> list[str]:
        import torch

        prompts = [self._prompt(c) for c in conversations]
        order = sorted(range(len(prompts)), key=lambda i: len(prompts[i]))  # less padding per batch
        replies = [""] * len(prompts)
        sampling = {"do_sample": True, "temperature": self.conf.temperature} if self.conf.temperature > 0 else {"do_sample": False}
        for start in range(0, len(order), self.conf.batch_size):
            rows = order[start : start + self.conf.batch_size]
            batch = self.tokenizer([prompts[i] for i in rows], return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
            with torch.inference_mode():
                out = self.model.generate(
                    **batch, max_new_tokens=self.conf.max_tokens, pad_token_id=self.tokenizer.pad_token_id, **sampling
                )
            texts = self.tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True)
            for i, text in zip(rows, texts):
                replies[i] = text
        return replies
