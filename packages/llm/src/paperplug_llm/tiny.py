"""Tiny random transformers models built offline from configs, for tests and embedded defaults.

`build_tiny_model`: a Llama chat model with a byte-level tokenizer and a chat template,
saved with `save_pretrained` so it loads by path. `build_tiny_decoder`: a decoder of any
supported family over any vocabulary size (a monitor's or a scorer's backbone). Seconds to
build; weights drawn from `seed` without touching the caller's random state.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from paperplug import seeded_torch
from paperplug.checks import check_choice, check_scalar, check_type
from paperplug.extras import requires_extra

CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def build_tiny_tokenizer() -> Any:
    """A byte-level tokenizer: 256 byte tokens, no merges, ChatML special tokens and template."""
    with requires_extra("paperplug-llm", "hf", "the tiny test models"):
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
    """(model, tokenizer): a random LlamaForCausalLM over the tiny tokenizer (4 attention
    heads: `hidden_size` a multiple of 4); saved to the folder `path` if given."""
    if path is not None:
        check_type(path, "path", (str, os.PathLike), what="a folder (a str or a path)")
        if Path(path).is_file():
            raise ValueError(f"path={os.fspath(path)!r} is a file: give a folder to save into")
    check_scalar(seed, "seed", "int", low=0)
    check_scalar(hidden_size, "hidden_size", "int", low=4)
    if hidden_size % 4:
        raise ValueError(f"hidden_size must be a multiple of 4 (the heads), got {hidden_size}")
    check_scalar(layers, "layers", "int", low=1)
    with requires_extra("paperplug-llm", "hf", "the tiny test models"):
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
    with seeded_torch(seed):
        model = LlamaForCausalLM(config).eval()
    if path is not None:
        model.save_pretrained(path)
        tok.save_pretrained(path)
    return model, tok


FAMILIES = ("qwen2", "llama", "gpt2")


def build_tiny_decoder(
    vocab_size: int,
    *,
    family: str = "qwen2",
    hidden_size: int = 128,
    num_layers: int = 2,
    num_heads: int = 4,
    max_positions: int = 1024,
    causal_lm: bool = False,
    seed: int = 0,
) -> Any:
    """A random decoder (`Qwen2Model`, `LlamaModel`, `GPT2Model`; with `causal_lm`, the
    `...ForCausalLM` with its LM head) of the given size, built from a config."""
    check_scalar(vocab_size, "vocab_size", "int", low=2)
    check_choice(family, "family", FAMILIES)
    for name, value in (("hidden_size", hidden_size), ("num_layers", num_layers)):
        check_scalar(value, name, "int", low=1)
    check_scalar(num_heads, "num_heads", "int", low=1)
    check_scalar(max_positions, "max_positions", "int", low=1)
    check_type(causal_lm, "causal_lm", bool)
    check_scalar(seed, "seed", "int", low=0)
    if hidden_size % num_heads:
        raise ValueError(
            f"hidden_size must be divisible by num_heads, got {hidden_size} and {num_heads}"
        )
    with requires_extra("paperplug-llm", "hf", "the tiny test models"):
        import transformers

    if family == "gpt2":
        config = transformers.GPT2Config(
            vocab_size=vocab_size, n_embd=hidden_size, n_layer=num_layers, n_head=num_heads,
            n_positions=max_positions, pad_token_id=0,
        )  # fmt: skip
        cls = transformers.GPT2LMHeadModel if causal_lm else transformers.GPT2Model
    else:  # qwen2 or llama
        kind = {"qwen2": "Qwen2", "llama": "Llama"}[family]
        config = getattr(transformers, f"{kind}Config")(
            vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
            num_hidden_layers=num_layers, num_attention_heads=num_heads,
            num_key_value_heads=max(1, num_heads // 2), max_position_embeddings=max_positions,
            pad_token_id=0, tie_word_embeddings=False,
        )  # fmt: skip
        cls = getattr(transformers, f"{kind}ForCausalLM" if causal_lm else f"{kind}Model")
    with seeded_torch(seed):
        return cls(config).eval()
