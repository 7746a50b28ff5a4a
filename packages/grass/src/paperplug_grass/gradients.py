"""Per-sample gradients of a target function (paper §2): any torch model through `torch.func`
(vmap over grad), or, for linear layers, the two factors of each sample's weight gradient —
the layer input a (with a ones column for the bias) and the output gradient δ — captured by
hooks, so the d_out × d_in gradient itself is never formed."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

TARGETS = ("margin", "loss")


def target_values(logits: torch.Tensor, y: torch.Tensor, target: str = "margin") -> torch.Tensor:
    """Per-sample target: TRAK's margin log p_y − log(1 − p_y) (the correct logit minus the
    log-sum-exp of the others), or the cross-entropy loss."""
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if target == "loss":
        return nn.functional.cross_entropy(logits, y, reduction="none")
    correct = logits.gather(-1, y.view(-1, 1)).squeeze(-1)
    is_y = torch.arange(logits.shape[-1], device=logits.device) == y.unsqueeze(-1)  # vmap-safe
    others = logits.masked_fill(is_y, float("-inf"))
    return correct - torch.logsumexp(others, -1)


def per_sample_gradients(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, target: str = "margin"
) -> torch.Tensor:
    """(B, p): each sample's gradient of its target over every trainable parameter."""
    from torch.func import functional_call, grad, vmap

    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}

    def one(p: dict, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        out = functional_call(model, p, (x.unsqueeze(0),))
        return target_values(out, t.unsqueeze(0), target).squeeze(0)

    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, X, y)
    return torch.cat([g.reshape(len(X), -1) for g in grads.values()], 1)


def linear_layers(model: nn.Module) -> list[str]:
    return [name for name, m in model.named_modules() if isinstance(m, nn.Linear)]


def linear_factors(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    target: str = "margin",
    layers: Sequence[str] | None = None,
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """For each linear layer: (a (B, T, d_in + 1), δ (B, T, d_out)), the sample's weight
    gradient being Σ_t δ_t a_tᵀ. Only layer outputs get gradients: no weight gradient exists."""
    modules = dict(model.named_modules())
    names = list(layers) if layers is not None else linear_layers(model)
    for name in names:
        if not isinstance(modules.get(name), nn.Linear):
            raise ValueError(f"{name!r} is not a linear layer of the model")
    inputs: dict[str, torch.Tensor] = {}
    outputs: dict[str, torch.Tensor] = {}

    def hook(name: str):
        def capture(module: nn.Module, args: tuple, out: torch.Tensor) -> None:
            inputs[name], outputs[name] = args[0].detach(), out

        return capture

    handles = [modules[n].register_forward_hook(hook(n)) for n in names]
    try:
        with torch.enable_grad():
            Xg = X.detach()
            logits = model(Xg)
            values = target_values(logits, y, target)
            deltas = torch.autograd.grad(values.sum(), [outputs[n] for n in names])
    finally:
        for h in handles:
            h.remove()
    out = []
    for n, d in zip(names, deltas, strict=True):
        a = inputs[n]
        a = torch.cat([a, torch.ones_like(a[..., :1])], -1)
        if a.ndim == 2:  # one position per sample
            a, d = a.unsqueeze(1), d.unsqueeze(1)
        out.append((a, d.detach()))
    return out
