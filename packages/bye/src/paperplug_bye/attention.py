"""Stage 1, attention extraction (paper §3.2): the last prompt token's attention over the image tokens.

One prefill per batch with eager attention (SDPA returns no weights). A forward hook on each
decoder layer's attention keeps only the needed row, heads averaged, so memory stays at
(batch, layers, tokens) instead of (batch, layers, heads, tokens, tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from paperplug_bye.prompting import (
    PROMPT_TEMPLATE,
    check_rows,
    encode_prompts,
    model_device,
    to_device,
)

ImageTokenMask = Callable[[Mapping[str, torch.Tensor]], torch.Tensor]


def image_token_id(config: Any) -> int:
    """The placeholder id of image tokens from a model config (LLaVA: `image_token_index`)."""
    for name in ("image_token_id", "image_token_index"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    raise ValueError(
        f"{type(config).__name__} names no image_token_id / image_token_index; pass image_token_mask="
        "a callable(batch) -> bool tensor (batch, seq)"
    )


def image_token_mask(input_ids: torch.Tensor, token_id: int) -> torch.Tensor:
    """Bool mask (batch, seq) of the image-token positions: `input_ids == token_id`."""
    if not isinstance(input_ids, torch.Tensor) or input_ids.ndim != 2:
        raise ValueError("input_ids must be a 2-D tensor (batch, seq)")
    return input_ids == token_id


def decoder_attentions(model: Any) -> list[torch.nn.Module]:
    """The self-attention module of each LLM decoder layer, in order."""
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
    layers = getattr(decoder, "layers", None)
    if layers is None or not all(hasattr(layer, "self_attn") for layer in layers):
        raise TypeError(
            f"cannot find decoder layers with self_attn in {type(model).__name__}; "
            "pass layers=[attention modules] to the extractor"
        )
    return [layer.self_attn for layer in layers]


@contextmanager
def eager_attention(model: Any) -> Iterator[None]:
    """Force eager attention (the only kind that returns weights) and restore the previous one."""
    previous = getattr(getattr(model, "config", None), "_attn_implementation", "eager")
    if previous != "eager":
        if not hasattr(model, "set_attn_implementation"):
            raise ValueError(
                f"{type(model).__name__} uses {previous!r} attention: load it with attn_implementation='eager'"
            )
        model.set_attn_implementation("eager")
    try:
        yield
    finally:
        if previous != "eager":
            model.set_attn_implementation(previous)


def last_token_positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """Index of the last real token in each row, for left or right padding."""
    width = attention_mask.shape[1]
    return width - 1 - attention_mask.flip(1).long().argmax(1)


@torch.no_grad()
def last_token_attention(
    model: Any,
    batch: Mapping[str, torch.Tensor],
    *,
    layers: Sequence[torch.nn.Module] | None = None,
) -> torch.Tensor:
    """(batch, layers, seq): head-averaged attention of the last prompt token over every key."""
    modules = list(layers) if layers is not None else decoder_attentions(model)
    mask = batch.get("attention_mask")
    if mask is None:
        mask = torch.ones_like(batch["input_ids"])
    device = model_device(model)
    last = last_token_positions(mask).to(device)
    rows: list[torch.Tensor | None] = [None] * len(modules)

    def keep_row(index: int) -> Callable[..., None]:
        def hook(_module: Any, _args: Any, output: Any) -> None:
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None:
                raise RuntimeError(
                    "the attention layer returned no weights: eager attention is required"
                )
            picked = weights[torch.arange(weights.shape[0]), :, last, :]  # (batch, heads, seq)
            rows[index] = picked.float().mean(1).cpu()

        return hook

    handles = [m.register_forward_hook(keep_row(i)) for i, m in enumerate(modules)]
    try:
        with eager_attention(model):
            model(**to_device(batch, device), use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return torch.stack(rows, 1)  # (batch, layers, seq), on the CPU


class AttentionExtractor:
    """Image-token attention rows of a fine-tuned MLLM for every row of a VQA dataset.

    `image_token_mask` defaults to `input_ids == config.image_token_index`; pass a callable
    `(batch) -> bool (batch, seq)` for models with variable image-token counts.
    """

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        template: str = PROMPT_TEMPLATE,
        image_token_mask: ImageTokenMask | None = None,
        batch_size: int = 16,
        layers: Sequence[torch.nn.Module] | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self.model, self.processor, self.template = model, processor, template
        self.image_token_mask, self.batch_size, self.layers = image_token_mask, batch_size, layers

    def _mask(self, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
        if self.image_token_mask is not None:
            return self.image_token_mask(batch).bool()
        return image_token_mask(batch["input_ids"], image_token_id(self.model.config))

    def extract(self, dataset: Sequence[Mapping[str, Any]]) -> list[torch.Tensor]:
        """Per row, a (layers, image tokens) tensor of raw attention weights on its image tokens."""
        rows = check_rows(dataset)
        out: list[torch.Tensor] = []
        for start in range(0, len(rows), self.batch_size):
            batch = encode_prompts(
                self.processor, rows[start : start + self.batch_size], self.template
            )
            att = last_token_attention(
                self.model, batch, layers=self.layers
            )  # (batch, layers, seq)
            mask = self._mask(batch)
            for b in range(att.shape[0]):
                if not mask[b].any():
                    raise ValueError(f"row {start + b} has no image token in its prompt")
                out.append(att[b][:, mask[b]])
        return out
