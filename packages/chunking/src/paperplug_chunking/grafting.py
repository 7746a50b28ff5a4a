"""Grafting (paper §4): induce a chunk in the network by setting its subpopulation (a PA
template, a DSC state, a UCD prototype) during the forward pass, or freeze it, and measure how
the prediction of the associated next symbol or concept changes: the causal test of a chunk."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np
import torch

from paperplug.checks import argument_errors, check_array, check_scalar, check_tensor, check_type
from paperplug_chunking.capture import _module, model_inputs


def graft(
    model: torch.nn.Module,
    layer: str,
    values: Any = None,
    *,
    mask: Any = None,
    positions: Sequence[int] | None = None,
    freeze: bool = False,
) -> AbstractContextManager[None]:
    """Inside the block, the output of module `layer` has its neurons `mask` (all when None)
    set to `values` at token `positions` (all when None). With `freeze=True` the neurons are
    held at the values they take at the first position instead. A layer whose output is
    (batch, tokens, neurons) is indexed by token; a cell called once per step, with output
    (batch, neurons), counts its calls as positions. Tuple outputs: the first element."""
    module = _module(model, layer)
    check_type(freeze, "freeze", bool)
    if freeze == (values is not None):
        raise ValueError("give values to set, or freeze=True (not both)")
    vals = None if values is None else check_tensor(values, "values", ndim=(0, 1), min_samples=0)
    neurons = slice(None) if mask is None else check_tensor(mask, "mask", dtype="bool", ndim=1)
    pos = None if positions is None else check_array(positions, "positions", dtype="int", ndim=1)
    if pos is not None and (pos < 0).any():
        raise ValueError(f"positions must be token positions >= 0, got {pos.min()}")
    pos = None if pos is None else pos.tolist()
    state: dict[str, Any] = {"step": 0, "held": None}

    def hook(_m, _i, output):
        first = output[0] if isinstance(output, tuple) else output
        _fits_layer(first.shape[-1], neurons, vals, layer)
        new = first.clone()
        if new.ndim == 2:  # a step of a recurrent cell
            step = state["step"]
            state["step"] += 1
            if pos is not None and step not in pos:
                return None
            if freeze:
                if state["held"] is None:
                    state["held"] = new[:, neurons].clone()
                new[:, neurons] = state["held"]
            else:
                new[:, neurons] = vals.to(new.dtype)
        else:
            where = slice(None) if pos is None else pos
            if freeze:
                held = new[:, (pos or [0])[0]][:, neurons].clone()
                sub = new[:, where]
                sub[..., neurons] = held[:, None]
                new[:, where] = sub
            else:
                sub = new[:, where]
                sub[..., neurons] = vals.to(new.dtype)
                new[:, where] = sub
        return (new, *output[1:]) if isinstance(output, tuple) else new

    return _hooked(module, hook)


@contextmanager
def _hooked(module: torch.nn.Module, hook: Any) -> Iterator[None]:
    handle = module.register_forward_hook(hook)
    try:
        yield
    finally:
        handle.remove()


def _fits_layer(width: int, neurons: Any, vals: Any, layer: str) -> None:
    """The mask and values against the layer's width, known once it runs: a ValueError naming
    them, not torch's "expanded size" error from inside the hook."""
    if isinstance(neurons, torch.Tensor) and len(neurons) != width:
        raise ValueError(f"mask has {len(neurons)} entries, layer {layer!r} has {width} neurons")
    chosen = width if not isinstance(neurons, torch.Tensor) else int(neurons.sum())
    if vals is not None and vals.ndim == 1 and len(vals) != chosen:
        raise ValueError(
            f"values has {len(vals)} entries for the {chosen} neurons grafted in layer {layer!r}"
        )


def _logits(output: Any) -> torch.Tensor:
    return output.logits if hasattr(output, "logits") else output


def next_symbol_probs(model: torch.nn.Module, inputs: Any, position: int) -> np.ndarray:
    """The model's next-symbol distribution after token `position` (batch element 0)."""
    check_type(model, "model", torch.nn.Module, what="a torch.nn.Module")
    model_inputs(inputs)
    check_scalar(position, "position", "int", low=0)
    with torch.no_grad(), argument_errors("inputs", "what the model takes"):
        out = model(**inputs) if isinstance(inputs, dict) else model(inputs)
    logits = _logits(out)
    if logits.ndim != 3 or len(logits) == 0:
        raise ValueError(
            f"inputs must be a batch of sequences: the model gave logits {tuple(logits.shape)}"
        )
    check_scalar(position, "position", "int", low=0, high=logits.shape[1] - 1)
    return torch.softmax(logits[0, position].double(), -1).numpy()


def grafting_effect(
    model: torch.nn.Module,
    inputs: Any,
    layer: str,
    values: Any,
    *,
    position: int,
    target: int,
    mask: Any = None,
) -> dict[str, float]:
    """p(target next symbol) after `position` without and with the chunk grafted there."""
    before = next_symbol_probs(model, inputs, position)
    check_scalar(target, "target", "int", low=0, high=len(before) - 1)
    with graft(model, layer, values, mask=mask, positions=[position]):
        after = next_symbol_probs(model, inputs, position)
    return {
        "p_before": float(before[target]),
        "p_after": float(after[target]),
        "argmax_before": int(before.argmax()),
        "argmax_after": int(after.argmax()),
    }
