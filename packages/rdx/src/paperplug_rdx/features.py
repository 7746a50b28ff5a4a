"""Representations from models (RDX's input): the output of a named layer of any torch module
(a forward hook), or a hidden state of a Hugging Face model by name or path."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug.checks import (
    argument_errors,
    check_array,
    check_callable,
    check_choice,
    check_data,
    check_scalar,
    check_sequence,
    check_type,
)
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


def hf_hidden_states(
    model: Any,
    inputs: Any,
    layer: int = -1,
    *,
    tokenizer: Any = None,
    pool: str = "mean",
    batch_size: int = 32,
) -> np.ndarray:
    """(n, dim): a Hugging Face model's hidden state `layer` (by name or path, or loaded),
    mean-pooled over tokens (pool="mean") or the first token ("first"), for texts or
    pixel_values."""
    with requires_extra("paperplug-rdx", "hf", "hidden states of Hugging Face models"):
        from transformers import AutoModel, AutoTokenizer

    check_choice(pool, "pool", ("mean", "first"))
    check_scalar(batch_size, "batch_size", "int", low=1)
    if tokenizer is not None:
        check_callable(tokenizer, "tokenizer", what="tokenizer")
    texts = isinstance(inputs, (list, tuple)) and bool(inputs) and isinstance(inputs[0], str)
    if texts:
        inputs = check_sequence(inputs, "inputs", str, what="texts")
    else:
        inputs = check_array(inputs, "inputs", ndim=4)  # pixel values (n, channels, h, w)
    if isinstance(model, str):
        tokenizer = tokenizer or AutoTokenizer.from_pretrained(model)
        model = AutoModel.from_pretrained(model)
    check_type(model, "model", torch.nn.Module, what="a Hugging Face model or its name")
    n_layers = getattr(getattr(model, "config", None), "num_hidden_layers", None)
    check_scalar(
        layer, "layer", "int", low=None if n_layers is None else -n_layers - 1, high=n_layers
    )
    if texts and tokenizer is None:
        raise ValueError("texts need the model's tokenizer (tokenizer=...)")
    out = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(inputs), batch_size):
            chunk = inputs[start : start + batch_size]
            if texts:
                batch = tokenizer(list(chunk), return_tensors="pt", padding=True, truncation=True)
            else:
                batch = {"pixel_values": torch.as_tensor(chunk, dtype=torch.float32)}
            try:
                hidden = model(**batch, output_hidden_states=True).hidden_states[layer]
            except ValueError as exc:  # (b, t, h); transformers' own shape errors
                raise ValueError(f"inputs do not fit the model: {exc}") from exc
            if pool == "first":
                out.append(hidden[:, 0])
            else:
                mask = batch.get("attention_mask", torch.ones(hidden.shape[:2]))[..., None].to(
                    hidden.dtype
                )
                out.append((hidden * mask).sum(1) / mask.sum(1))
    return torch.cat(out).double().numpy()
