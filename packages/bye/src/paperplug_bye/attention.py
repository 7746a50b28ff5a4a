"""Stage 1, attention extraction (paper §3.2): the last prompt token's attention over the image tokens.

One prefill per batch with eager attention (SDPA returns no weights). A forward hook on each
decoder layer's attention keeps only the needed row, heads averaged, so memory stays at
(batch, layers, tokens) instead of (batch, layers, heads, tokens, tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import torch

from paperplug.checks import (
    argument_errors,
    check_callable,
    check_scalar,
    check_sequence,
    check_tensor,
    check_type,
)
from paperplug_bye.prompting import (
    PROMPT_TEMPLATE,
    check_model,
    check_processor,
    check_rows,
    check_template,
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
        f"config ({type(config).__name__}) names no image_token_id / image_token_index; pass "
        "image_token_mask=a callable(batch) -> bool tensor (batch, seq)"
    )


def image_token_mask(input_ids: torch.Tensor, token_id: int) -> torch.Tensor:
    """Bool mask (batch, seq) of the image-token positions: `input_ids == token_id`."""
    input_ids = check_tensor(input_ids, "input_ids", dtype="int", ndim=2)
    return input_ids == check_scalar(token_id, "token_id", "int", low=0)


def decoder_attentions(model: Any) -> list[torch.nn.Module]:
    """The self-attention module of each LLM decoder layer, in order."""
    check_model(model)
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else None
    layers = getattr(decoder, "layers", None)
    if layers is None or not all(hasattr(layer, "self_attn") for layer in layers):
        raise TypeError(
            f"cannot find decoder layers with self_attn in {type(model).__name__}; "
            "pass layers=[attention modules] to the extractor"
        )
    return [layer.self_attn for layer in layers]


def eager_attention(model: Any) -> AbstractContextManager[None]:
    """Force eager attention (the only kind that returns weights) and restore the previous one."""
    return _eager(check_model(model))


@contextmanager
def _eager(model: Any) -> Iterator[None]:
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
    attention_mask = check_tensor(attention_mask, "attention_mask", dtype="bool", ndim=2)
    if not bool(attention_mask.any(1).all()):
        raise ValueError("attention_mask has a row with no real token")
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
    modules = decoder_attentions(model) if layers is None else _modules(layers)
    batch = _checked_batch(batch)
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
        with eager_attention(model), argument_errors("batch", "the model's inputs"):
            try:
                model(**to_device(batch, device), use_cache=False)
            except ValueError as exc:  # transformers' own check of the inputs
                raise ValueError(f"batch does not fit the model: {exc}") from exc
    finally:
        for h in handles:
            h.remove()
    return torch.stack(rows, 1)  # (batch, layers, seq), on the CPU


def _modules(layers: Any) -> list[torch.nn.Module]:
    return check_sequence(layers, "layers", torch.nn.Module, what="attention modules")


def _checked_batch(batch: Any) -> dict[str, Any]:
    """A processor's batch: input_ids (batch, seq) integers, an attention_mask of their shape,
    pixel_values finite; checked copies."""
    batch = dict(check_type(batch, "batch", Mapping, what="a processor's outputs"))
    if "input_ids" not in batch:
        raise ValueError("batch lacks 'input_ids'")
    ids = check_tensor(batch["input_ids"], "batch['input_ids']", dtype="numeric", ndim=2)
    if ids.is_floating_point() or ids.dtype == torch.bool:
        raise TypeError(f"batch['input_ids'] must hold token ids (integers), got {ids.dtype}")
    if "attention_mask" in batch:
        name = "batch['attention_mask']"
        mask = check_tensor(batch["attention_mask"], name, dtype="numeric", shape=tuple(ids.shape))
        if mask.is_floating_point() or not bool(((mask == 0) | (mask == 1)).all()):
            raise TypeError("batch['attention_mask'] must hold 0/1 integers")
    if "pixel_values" in batch:
        check_tensor(batch["pixel_values"], "batch['pixel_values']", ndim=4)
    return batch


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
        check_model(model)
        check_processor(processor)
        check_template(template)
        if image_token_mask is not None:
            check_callable(image_token_mask, "image_token_mask")
        check_scalar(batch_size, "batch_size", "int", low=1)
        if layers is not None:
            layers = _modules(layers)
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
