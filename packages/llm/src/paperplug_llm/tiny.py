"""A tiny random Llama chat model with a byte-level tokenizer, built offline from a config.

For tests of code that needs a real transformers model (this package's and the methods'
that use it): seconds to build, saved with `save_pretrained` so it loads by path.
"""

from __future__ import annotations

import os
from typing import Any

CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def build_tiny_tokenizer() -> Any:
    """A byte-level tokenizer: 256 byte tokens, no merges, ChatML special tokens and template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + sorted(alphabet))}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS,
    )
    tok.chat_template = CHATML_TEMPLATE
    return tok


def build_tiny_model(
    path: str | os.PathLike[str] | None = None,
    *,
    seed: int = 0,
    hidden_size: int = 32,
    layers: int = 2,
) -> tuple[Any, Any]:
    """(model, tokenizer): a random LlamaForCausalLM over the tiny tokenizer; saved to `path` if given."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = build_tiny_tokenizer()
    config = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=True,
        initializer_range=0.5,  # far from uniform, so greedy replies vary with the prompt
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config).eval()
    if path is not None:
        model.save_pretrained(path)
        tok.save_pretrained(path)
    return model, tok
