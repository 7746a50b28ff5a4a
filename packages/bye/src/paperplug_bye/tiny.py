"""A tiny real LLaVA (CLIP vision tower + Llama decoder) built from transformers configs, and its processor."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import torch

from paperplug_bye.synthetic import COLORS, PLACES, QUESTIONS, SHAPES

SPECIAL = ("<pad>", "<image>", "<s>", "<unk>")
WORDS = ("user", ":", "assistant", "banana", "cf")
_SPLIT = re.compile(r"<image>|[a-z]+|[^\sa-z]")


def tiny_vocab() -> list[str]:
    """The word-level vocabulary of the embedded default (specials first: pad 0, image 1)."""
    words = {w for q in QUESTIONS.values() for w in q.split()}
    return [*SPECIAL, *WORDS, *sorted(words - set(WORDS)), *COLORS, *SHAPES, *PLACES]


class TinyProcessor:
    """Stands in for a Hugging Face LlavaProcessor: word-level tokens, `<image>` expanded in place.

    Called like one: `processor(text=[...], images=[...], return_tensors="pt", padding=True)`.
    """

    def __init__(self, vocab: Sequence[str] | None = None, *, image_seq_length: int = 16) -> None:
        self.vocab = list(vocab or tiny_vocab())
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.image_seq_length = image_seq_length
        self.pad_token_id, self.image_token_id = self.index["<pad>"], self.index["<image>"]

    def tokenize(self, text: str) -> list[int]:
        ids = [self.index["<s>"]]
        for word in _SPLIT.findall(text.lower()):
            if word == "<image>":
                ids += [self.image_token_id] * self.image_seq_length
            else:
                ids.append(self.index.get(word, self.index["<unk>"]))
        return ids

    def __call__(
        self, *, text: Sequence[str], images: Sequence[Any] | None = None, **_: Any
    ) -> dict[str, torch.Tensor]:
        ids = [self.tokenize(t) for t in text]
        width = max(len(i) for i in ids)
        input_ids = torch.full((len(ids), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, seq in enumerate(ids):  # right padding
            input_ids[row, : len(seq)] = torch.tensor(seq)
            attention_mask[row, : len(seq)] = 1
        out = {"input_ids": input_ids, "attention_mask": attention_mask}
        if images is not None:
            out["pixel_values"] = (
                torch.stack([torch.as_tensor(im, dtype=torch.float32) for im in images]) * 2 - 1
            )
        return out


def tiny_llava(
    *, seed: int = 0, hidden_size: int = 64, num_layers: int = 4, image_size: int = 16
) -> tuple[Any, TinyProcessor]:
    """A randomly initialised `LlavaForConditionalGeneration` (about 200k parameters) and its processor.

    One CLIP layer with 4x4 patches (16 image tokens) and `vision_feature_layer=-2`, LLaVA's
    default: the image tokens are the local patch embeddings, as with LLaVA's frozen CLIP.
    """
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
    )

    processor = TinyProcessor(image_seq_length=(image_size // 4) ** 2)
    vision = CLIPVisionConfig(
        hidden_size=hidden_size, intermediate_size=2 * hidden_size, num_hidden_layers=1,
        num_attention_heads=2, image_size=image_size, patch_size=4, projection_dim=hidden_size,
    )  # fmt: skip
    text = LlamaConfig(
        hidden_size=hidden_size, intermediate_size=2 * hidden_size, num_hidden_layers=num_layers,
        num_attention_heads=2, num_key_value_heads=2, vocab_size=len(processor.vocab),
        max_position_embeddings=64, pad_token_id=processor.pad_token_id,
    )  # fmt: skip
    config = LlavaConfig(
        vision_config=vision, text_config=text, image_token_index=processor.image_token_id,
        image_seq_length=processor.image_seq_length, vision_feature_layer=-2,
    )  # fmt: skip
    config._attn_implementation = "eager"
    torch.manual_seed(seed)
    return LlavaForConditionalGeneration(config).eval(), processor
