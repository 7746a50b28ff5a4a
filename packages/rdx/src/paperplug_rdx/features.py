"""Representations from models (RDX's input): the output of a named layer of any torch module
(a forward hook), or a hidden state of a Hugging Face model by name or path."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug.checks import argument_errors, check_data, check_scalar, check_type
from paperplug.extras import requires_extra

with requires_extra("paperplug-rdx", "torch", "features from torch models"):
    import torch


def layer_features(
    model: torch.nn.Module, inputs: Any, layer: str, *, batch_size: int = 256
) -> np.ndarray:
    """(n, dim): the flattened output of `model.get_submodule(layer)` for each input row."""
    check_type(model, "model", torch.nn.Module, what="a torch module")
    check_type(layer, "layer", str, what="a module name (str)")
    check_scalar(batch_size, "batch_size", "int", low=1)
    try:
        module = model.get_submodule(layer)
    except AttributeError as exc:
        names = [n for n, _ in model.named_modules() if n][:20]
        raise ValueError(f"model has no layer {layer!r}; layers include {names}") from exc
    x = torch.as_tensor(check_data(inputs, "inputs", dtype="numeric"))
    dtype = next(model.parameters()).dtype
    captured: list[torch.Tensor] = []
    hook = module.register_forward_hook(
        lambda m, i, o: captured.append((o[0] if isinstance(o, tuple) else o).detach())
    )
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), argument_errors("inputs", "rows the model takes"):
            for start in range(0, len(x), batch_size):
                model(x[start : start + batch_size].to(dtype if x.is_floating_point() else x.dtype))
    finally:
        hook.remove()
        model.train(was_training)
    return torch.cat([c.reshape(c.shape[0], -1) for c in captured]).double().numpy()


def hf_hidden_states(model: Any, inputs: Any, layer: int = -1, *, tokenizer: Any = None,
                     pool: str = "mean", batch_size: int = 32) -> np.ndarray:  # fmt: skip
    """(n, dim): a Hugging Face model's hidden state `layer` (by name or path, or loaded),
    mean-pooled over tokens (pool="mean") or the first token ("first"), for texts or
    pixel_values."""
    with requires_extra("paperplug-rdx", "hf", "hidden states of Hugging Face models"):
        from transformers import AutoModel, AutoTokenizer

    if isinstance(model, str):
        tokenizer = tokenizer or AutoTokenizer.from_pretrained(model)
        model = AutoModel.from_pretrained(model)
    out = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(inputs), batch_size):
            chunk = inputs[start : start + batch_size]
            if isinstance(chunk[0], str):
                if tokenizer is None:
                    raise ValueError("texts need the model's tokenizer (tokenizer=...)")
                batch = tokenizer(list(chunk), return_tensors="pt", padding=True, truncation=True)
            else:
                batch = {"pixel_values": torch.as_tensor(np.asarray(chunk), dtype=torch.float32)}
            hidden = model(**batch, output_hidden_states=True).hidden_states[layer]  # (b, t, h)
            if pool == "first":
                out.append(hidden[:, 0])
            else:
                mask = batch.get("attention_mask", torch.ones(hidden.shape[:2]))[..., None].to(
                    hidden.dtype
                )
                out.append((hidden * mask).sum(1) / mask.sum(1))
    return torch.cat(out).double().numpy()
