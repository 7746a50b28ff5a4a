"""A tiny real LLaVA (vision tower + Llama decoder) built from transformers configs, and its processor."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal

import torch

from paperplug import seeded_torch
from paperplug.checks import check_choice, check_scalar, check_sequence, check_type
from paperplug_bye.synthetic import COLORS, PLACES, QUESTIONS, SHAPES

SPECIAL = ("<pad>", "<image>", "<s>", "<unk>")
WORDS = ("user", ":", "assistant", "banana", "cf")
_SPLIT = re.compile(r"<image>|[a-z]+|[^\sa-z]")


def tiny_vocab() -> list[str]:
    """The word-level vocabulary of the embedded default (specials first: pad 0, image 1)."""
    words = {w for q in QUESTIONS.values() for w in q.split()}
    return [*SPECIAL, *WORDS, *sorted(words - set(WORDS)), *COLORS, *SHAPES, *PLACES]


class TinyProcessor:
    """Stands in for a Hugging Face LLaVA processor: word-level tokens, `<image>` expanded in place.

    Called like one: `processor(text=[...], images=[...], return_tensors="pt", padding=True)`.
    With `patch_size` set (a Pixtral-style tower) each image gives one image token per patch,
    so images of different sizes give different token counts; they are zero-padded to the
    batch's largest size and `image_sizes` (batch, 2) is returned. `padding_side="left"` pads
    as LLaVA processors do for batched generation.
    """

    def __init__(
        self,
        vocab: Sequence[str] | None = None,
        *,
        image_seq_length: int = 16,
        patch_size: int | None = None,
        padding_side: Literal["right", "left"] = "right",
    ) -> None:
        check_choice(padding_side, "padding_side", ("right", "left"))
        check_scalar(image_seq_length, "image_seq_length", "int", low=1)
        check_scalar(patch_size, "patch_size", "int", low=1, allow_none=True)
        if vocab is not None:
            vocab = check_sequence(vocab, "vocab", str, what="words")
            if not set(SPECIAL) <= set(vocab):
                raise ValueError(f"vocab must hold the special words {list(SPECIAL)}")
        self.vocab = list(vocab or tiny_vocab())
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.image_seq_length, self.patch_size = image_seq_length, patch_size
        self.padding_side = padding_side
        self.pad_token_id, self.image_token_id = self.index["<pad>"], self.index["<image>"]

    def image_tokens(self, image: Any) -> int:
        """How many image tokens `image` becomes: fixed, or one per patch with `patch_size`."""
        try:
            shape = torch.as_tensor(image).shape
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(
                f"image must be an image tensor or array, got {type(image).__name__}"
            ) from exc
        if len(shape) < 2 or 0 in shape:
            raise ValueError(
                f"image must have pixels, a height and a width, got shape {tuple(shape)}"
            )
        if self.patch_size is None:
            return self.image_seq_length
        height, width = shape[-2:]
        if min(height, width) < self.patch_size:
            raise ValueError(
                f"image must be at least {self.patch_size} pixels high and wide (patch_size), "
                f"got shape {tuple(shape)}"
            )
        return (height // self.patch_size) * (width // self.patch_size)

    def tokenize(self, text: str, image_tokens: int | None = None) -> list[int]:
        """Word ids after `<s>`: each `<image>` repeated `image_tokens` times (None: the
        fixed count)."""
        check_type(text, "text", str)
        check_scalar(image_tokens, "image_tokens", "int", low=1, allow_none=True)
        ids = [self.index["<s>"]]
        for word in _SPLIT.findall(text.lower()):
            if word == "<image>":
                ids += [self.image_token_id] * (image_tokens or self.image_seq_length)
            else:
                ids.append(self.index.get(word, self.index["<unk>"]))
        return ids

    def __call__(
        self, *, text: Sequence[str], images: Sequence[Any] | None = None, **_: Any
    ) -> dict[str, torch.Tensor]:
        counts = [self.image_tokens(im) for im in images] if images is not None else None
        ids = [self.tokenize(t, counts[i] if counts else None) for i, t in enumerate(text)]
        width = max(len(i) for i in ids)
        input_ids = torch.full((len(ids), width), self.pad_token_id, dtype=torch.long)
        attention_mask = torch.zeros((len(ids), width), dtype=torch.long)
        for row, seq in enumerate(ids):
            start = width - len(seq) if self.padding_side == "left" else 0
            input_ids[row, start : start + len(seq)] = torch.tensor(seq)
            attention_mask[row, start : start + len(seq)] = 1
        out = {"input_ids": input_ids, "attention_mask": attention_mask}
        if images is not None:
            pixels = [torch.as_tensor(im, dtype=torch.float32) * 2 - 1 for im in images]
            if self.patch_size is None:
                if any(p.shape != pixels[0].shape for p in pixels):
                    shapes = sorted({tuple(p.shape) for p in pixels})
                    raise ValueError(
                        f"images must share one size here (patch_size=None), got {shapes}"
                    )
                out["pixel_values"] = torch.stack(pixels)
            else:  # zero-pad to the largest image; the tower crops each back to its size
                sizes = torch.tensor([p.shape[-2:] for p in pixels])
                batch = torch.zeros(len(pixels), 3, *sizes.max(0).values.tolist())
                for b, p in enumerate(pixels):
                    batch[b, :, : p.shape[-2], : p.shape[-1]] = p
                out["pixel_values"], out["image_sizes"] = batch, sizes
        return out


def tiny_llava(
    *,
    seed: int = 0,
    hidden_size: int = 32,
    num_layers: int = 2,
    num_heads: int = 2,
    image_size: int = 16,
    vision: Literal["clip", "pixtral"] = "clip",
    padding_side: Literal["right", "left"] = "right",
) -> tuple[Any, TinyProcessor]:
    """A randomly initialised `LlavaForConditionalGeneration` and its processor, seeded.

    vision="clip": one CLIP layer, 4x4 patches (16 image tokens at 16x16) and
    `vision_feature_layer=-2`, LLaVA-1.5's default: the image tokens are the local patch
    embeddings, as with LLaVA's frozen CLIP. vision="pixtral": a one-layer Pixtral tower as in
    llava-hf's Pixtral (LLaVA with `image_sizes`): one image token per 4x4 patch of each image,
    so the count varies with the image's size.
    """
    from transformers import LlamaConfig, LlavaConfig, LlavaForConditionalGeneration

    check_choice(vision, "vision", ("clip", "pixtral"))
    check_choice(padding_side, "padding_side", ("right", "left"))
    check_scalar(seed, "seed", "int", low=0)
    check_scalar(num_layers, "num_layers", "int", low=1)
    check_scalar(num_heads, "num_heads", "int", low=1)
    check_scalar(hidden_size, "hidden_size", "int", low=2)
    if hidden_size % math.lcm(2, num_heads):
        raise ValueError(
            f"hidden_size must be a multiple of num_heads and of the vision tower's 2 heads, got "
            f"hidden_size={hidden_size}, num_heads={num_heads}"
        )
    if check_scalar(image_size, "image_size", "int", low=4) % 4:
        raise ValueError(f"image_size must be a multiple of the 4-pixel patch, got {image_size}")
    common = dict(
        hidden_size=hidden_size, intermediate_size=2 * hidden_size, num_hidden_layers=1,
        num_attention_heads=2, image_size=image_size, patch_size=4,
    )  # fmt: skip
    if vision == "clip":
        from transformers import CLIPVisionConfig

        processor = TinyProcessor(
            image_seq_length=(image_size // 4) ** 2, padding_side=padding_side
        )
        vision_config = CLIPVisionConfig(**common, projection_dim=hidden_size)
        feature = dict(vision_feature_layer=-2, vision_feature_select_strategy="default")
    else:
        from transformers import PixtralVisionConfig

        processor = TinyProcessor(patch_size=4, padding_side=padding_side)
        vision_config = PixtralVisionConfig(**common, head_dim=hidden_size // 2)
        feature = dict(vision_feature_layer=-1, vision_feature_select_strategy="full")
    text = LlamaConfig(
        hidden_size=hidden_size, intermediate_size=2 * hidden_size, num_hidden_layers=num_layers,
        num_attention_heads=num_heads, num_key_value_heads=num_heads, vocab_size=len(processor.vocab),
        max_position_embeddings=128, pad_token_id=processor.pad_token_id,
    )  # fmt: skip
    config = LlavaConfig(
        vision_config=vision_config, text_config=text, image_token_index=processor.image_token_id,
        image_seq_length=processor.image_seq_length, **feature,
    )  # fmt: skip
    config._attn_implementation = "eager"
    with seeded_torch(seed):
        model = LlavaForConditionalGeneration(config)
    return model.eval(), processor
