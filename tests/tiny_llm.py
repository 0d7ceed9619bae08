"""A tiny randomly initialised chat model that a test builds and saves itself: the real
transformers code path, with meaningless text (no LLM weights can be downloaded here)."""

from __future__ import annotations

from pathlib import Path

# Jinja chat template in the usual shape: role-tagged turns, then the assistant's turn to speak.
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)


def build_tiny_chat_model(folder: Path, words: list[str], seed: int = 0, layers: int = 2, hidden: int = 32) -> str:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>"]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(specials + words))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<|end|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocab), hidden_size=hidden, intermediate_size=hidden * 2, num_hidden_layers=layers,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
        pad_token_id=vocab["<pad>"], eos_token_id=vocab["<|end|>"], bos_token_id=vocab["<|end|>"],
    )
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
