"""Activation capture (paper §2, "population activity"): the hidden states the chunking
methods read, from forward hooks on any named torch module or from a Hugging Face model's
`output_hidden_states`, as numpy arrays of shape (tokens, neurons) with token positions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperplug.checks import (
    argument_errors,
    check_array,
    check_data,
    check_sequence,
    check_type,
)
from paperplug.extras import requires_extra

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json")


def _module(model: torch.nn.Module, layer: str, name: str = "layer") -> torch.nn.Module:
    check_type(model, "model", torch.nn.Module, what="a torch.nn.Module")
    check_type(layer, name, str, what="a module name (str)")
    modules = dict(model.named_modules())
    if layer not in modules:
        raise ValueError(
            f"{name}: {layer!r} is not a module of the model; e.g. {list(modules)[1:6]}"
        )
    return modules[layer]


def model_inputs(inputs: Any) -> Any:
    """What a model is called with: a tensor (or array) of finite numbers, or a dict of them
    (keyword arguments), checked and named `inputs`."""
    if isinstance(inputs, dict):
        for key, value in inputs.items():
            check_data(value, f"inputs[{key!r}]", dtype="numeric")
        return inputs
    if not isinstance(inputs, torch.Tensor):
        raise TypeError(
            f"inputs must be a tensor or a dict of tensors, got {type(inputs).__name__}"
        )
    check_data(inputs, "inputs", dtype="numeric")
    return inputs


def _first_tensor(output: Any) -> torch.Tensor:
    """A module's activation: the tensor itself, or the first element of a tuple output
    (transformers blocks and nn.RNN return tuples)."""
    tensor = output[0] if isinstance(output, tuple | list) else output
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"the layer's output is {type(tensor).__name__}, not a tensor")
    return tensor


def capture_activations(
    model: torch.nn.Module, inputs: Any, layers: str | Sequence[str]
) -> dict[str, np.ndarray]:
    """Run `model(inputs)` (or `model(**inputs)` for a dict) once, under no_grad, and return
    each named layer's output flattened to (tokens, neurons); the batch axis, if any, comes
    first, so row b * T + t is token t of sequence b. A module called once per step (a
    recurrent cell, output batch × neurons) has its calls stacked as the token axis."""
    check_type(model, "model", torch.nn.Module, what="a torch.nn.Module")
    names = [layers] if isinstance(layers, str) else check_sequence(layers, "layers", str)
    model_inputs(inputs)
    store: dict[str, list[torch.Tensor]] = {name: [] for name in names}
    handles = []
    for name in names:
        module = _module(model, name, "layers")

        def hook(_m, _i, output, name=name):
            store[name].append(_first_tensor(output).detach())

        handles.append(module.register_forward_hook(hook))
    try:
        with torch.no_grad(), argument_errors("inputs", "what the model takes"):
            model(**inputs) if isinstance(inputs, dict) else model(inputs)
    finally:
        for handle in handles:
            handle.remove()
    out = {}
    for name in names:
        calls = store[name]
        if not calls:
            raise ValueError(f"layer {name!r} was not called by the forward pass")
        t = calls[0] if len(calls) == 1 else torch.stack(calls, -2)
        out[name] = t.reshape(-1, t.shape[-1]).float().cpu().numpy()
    return out


def load_hf_model(name_or_path: str | torch.nn.Module) -> tuple[torch.nn.Module, Any]:
    """A Hugging Face model and its tokenizer (None when the folder has none) by name or
    local path, offline (`local_files_only`); a model object is returned as is."""
    return _load(name_or_path, "name_or_path")


def _load(name_or_path: str | torch.nn.Module, name: str) -> tuple[torch.nn.Module, Any]:
    if isinstance(name_or_path, torch.nn.Module):
        return name_or_path, None
    if not isinstance(name_or_path, str) or not name_or_path:
        raise TypeError(f"{name} must be a torch module or a model name / path (str)")
    with requires_extra("paperplug-chunking", "hf", "Hugging Face models by name or path"):
        from transformers import AutoModel, AutoTokenizer

    try:
        model = AutoModel.from_pretrained(name_or_path, local_files_only=True)
    except OSError as exc:
        raise ValueError(f"{name}: no model {name_or_path!r} found offline: {exc}") from None
    folder = Path(name_or_path)
    if folder.is_dir() and not any((folder / f).exists() for f in TOKENIZER_FILES):
        return model.eval(), None
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, local_files_only=True)
    except (OSError, ValueError):
        tokenizer = None
    return model.eval(), tokenizer


def hf_hidden_states(
    model: str | torch.nn.Module, inputs: str | Any, *, tokenizer: Any = None
) -> tuple[np.ndarray, list[str] | None]:
    """All layers' hidden states of one sequence, shape (layers + 1, tokens, neurons), from
    `output_hidden_states`, and the tokens (when a tokenizer is known). `inputs` is a text
    (needs a tokenizer) or a 1-D sequence of token ids."""
    model, found = _load(model, "model")
    tokenizer = tokenizer if tokenizer is not None else found
    if tokenizer is not None and not hasattr(tokenizer, "convert_ids_to_tokens"):
        raise TypeError(
            f"tokenizer must be a Hugging Face tokenizer, got {type(tokenizer).__name__}"
        )
    if isinstance(inputs, str):
        if tokenizer is None:
            raise ValueError("a text input needs a tokenizer; pass token ids or tokenizer=")
        ids = tokenizer(inputs, return_tensors="pt")["input_ids"]
    else:
        ids = torch.as_tensor(check_array(inputs, "inputs", dtype="int", ndim=1))[None]
    with torch.no_grad(), argument_errors("inputs", "token ids of the model's vocabulary"):
        out = model(input_ids=ids, output_hidden_states=True)
    states = np.stack([h[0].float().cpu().numpy() for h in out.hidden_states])
    tokens = tokenizer.convert_ids_to_tokens(ids[0]) if tokenizer is not None else None
    return states, tokens
