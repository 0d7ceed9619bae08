"""The verbalizer interface: a batch of walks (Arrow) in, one sentence per walk out."""

from __future__ import annotations

from typing import Protocol

import pyarrow as pa

from kgwalk.config import VerbalizeConf
from kgwalk.errors import KgwalkError


class Verbalizer(Protocol):
    name: str

    def verbalize(self, walks: pa.Table) -> tuple[pa.Array, pa.Array]:
        """(sentence, source) per row of `walks` (columns node_labels, rel_labels, inverse);
        source says where each sentence came from: template, llm or fallback."""
        ...


def check_verbalize_conf(conf: VerbalizeConf) -> None:
    """The settings errors a run would hit, found before any model loads (the verbalizer's name
    is one of config.VerbalizerName, checked as the config loads)."""
    if conf.verbalizer == "template":
        return
    from kgwalk.llm.base import check_llm_conf
    from kgwalk.verbalize.llm import prompt_texts

    check_llm_conf(conf.verbalizer, conf.llm, "verbalize.llm")
    if conf.actors < 1 or conf.num_gpus < 0:
        raise KgwalkError("verbalize.actors must be >= 1 and verbalize.num_gpus >= 0")
    prompt_texts(conf.prompt)


def make_verbalizer(conf: VerbalizeConf) -> Verbalizer:
    """The configured verbalizer. An LLM verbalizer loads its model here: build it once per actor."""
    from kgwalk.verbalize.template import TemplateVerbalizer

    check_verbalize_conf(conf)
    if conf.verbalizer == "template":
        return TemplateVerbalizer(conf.phrases)
    from kgwalk.llm import make_chat_model
    from kgwalk.verbalize.llm import LLMVerbalizer

    return LLMVerbalizer(make_chat_model(conf.verbalizer, conf.llm, "verbalize.llm"), conf)
