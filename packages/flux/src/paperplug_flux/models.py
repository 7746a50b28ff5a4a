"""Model plumbing shared by the stages: the named latent layer, one client's
local SGD (optionally FedProx's proximal term) and its accuracy.

Any torch module works; FLUX reads the latents z at the layer the caller names (§3.1: the
penultimate representation of the global model).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

from paperplug import seeded_torch
from paperplug.checks import (
    argument_errors,
    check_callable,
    check_scalar,
    check_tensor,
    check_type,
)


def check_latent_layer(model: nn.Module, latent_layer: str) -> nn.Module:
    """The submodule named `latent_layer`, or a ValueError listing the names there are."""
    check_type(latent_layer, "latent_layer", str, what="the name of a submodule, e.g. 'hidden'")
    names = dict(model.named_modules())
    if latent_layer not in names or latent_layer == "":
        raise ValueError(
            f"latent_layer {latent_layer!r} is not a submodule; there are {sorted(n for n in names if n)}"
        )
    return names[latent_layer]


def build_model(
    model_fn: Callable[[], nn.Module],
    latent_layer: str,
    probe: torch.Tensor | None = None,
    *,
    seed: int = 0,
) -> nn.Module:
    """model_fn() under `seed`, checked: an nn.Module with the submodule `latent_layer` that
    takes `probe` (a few of the first client's samples; an error names train_sets)."""
    check_callable(model_fn, "model_fn", what="callable returning a torch nn.Module")
    check_type(latent_layer, "latent_layer", str, what="the name of a submodule")
    with seeded_torch(seed):
        model = model_fn()
    check_type(model, "model_fn()", nn.Module, what="a torch nn.Module")
    check_latent_layer(model, latent_layer)
    if probe is not None:
        with argument_errors("train_sets", "every client's samples must fit model_fn()'s input"):
            model_latents(model, latent_layer, probe)
    return model


@torch.no_grad()
def latents(
    model: nn.Module, latent_layer: str, x: torch.Tensor, batch_size: int = 512
) -> torch.Tensor:
    """The flattened output of `latent_layer` for every row of x (model in eval mode)."""
    check_type(model, "model", nn.Module)
    x = check_tensor(x, "x", dtype="numeric")
    if x.is_complex() or not (x.is_floating_point() or x.dtype == torch.long):
        raise TypeError(f"x must hold real inputs, got {x.dtype}")
    check_scalar(batch_size, "batch_size", "int", low=1)
    with argument_errors("x", "the input the model takes"):
        return model_latents(model, latent_layer, x, batch_size)


@torch.no_grad()
def model_latents(
    model: nn.Module, latent_layer: str, x: torch.Tensor, batch_size: int = 512
) -> torch.Tensor:
    """`latents` on data the caller checked (its errors name the caller's argument)."""
    layer = check_latent_layer(model, latent_layer)
    out: list[torch.Tensor] = []
    handle = layer.register_forward_hook(lambda _m, _i, o: out.append(o.detach().flatten(1)))
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(x), batch_size):
            model(x[start : start + batch_size])
    finally:
        handle.remove()
        model.train(was_training)
    if not out:
        raise ValueError(f"latent_layer {latent_layer!r} is never called in the model's forward")
    return torch.cat(out).float()


@torch.no_grad()
def _sgd_step(
    params: list[torch.Tensor], velocity: list[torch.Tensor], lr: float, momentum: float
) -> None:
    """Heavy-ball SGD, as torch.optim.SGD(lr, momentum) without dampening or Nesterov:
    v <- momentum·v + g; w <- w - lr·v. Written out because building a torch optimizer
    imports torch._dynamo, several seconds on a small CPU, once per process."""
    for p, v in zip(params, velocity, strict=True):
        if p.grad is None:
            continue
        v.mul_(momentum).add_(p.grad)
        p.sub_(lr * v)


def local_train(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    lr: float,
    momentum: float,
    batch_size: int,
    generator: torch.Generator,
    proximal_mu: float = 0.0,
) -> float:
    """Local SGD on one client (the paper's client update, §4: SGD with momentum, cross-entropy).

    With `proximal_mu > 0` the loss adds (mu/2)·||w - w_global||² (FedProx's client side).
    Returns the mean training loss of the last epoch."""
    params = [p for p in model.parameters() if p.requires_grad]
    anchor = [p.detach().clone() for p in params] if proximal_mu > 0 else None
    velocity = [torch.zeros_like(p) for p in params]
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    last = 0.0
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        total, seen = 0.0, 0
        for start in range(0, len(x), batch_size):
            idx = order[start : start + batch_size]
            model.zero_grad(set_to_none=True)
            loss = loss_fn(model(x[idx]), y[idx])
            if anchor is not None:
                prox = sum(((p - a) ** 2).sum() for p, a in zip(params, anchor, strict=True))
                loss = loss + 0.5 * proximal_mu * prox
            loss.backward()
            _sgd_step(params, velocity, lr, momentum)
            total += float(loss.detach()) * len(idx)
            seen += len(idx)
        last = total / seen
    return last


@torch.no_grad()
def predict_labels(model: nn.Module, x: torch.Tensor, batch_size: int = 512) -> torch.Tensor:
    """Argmax class of every row (model in eval mode)."""
    was_training = model.training
    model.eval()
    try:
        return torch.cat(
            [model(x[s : s + batch_size]).argmax(1) for s in range(0, len(x), batch_size)]
        )
    finally:
        model.train(was_training)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """Fraction of rows classified correctly."""
    return float((predict_labels(model, x) == y).float().mean())
