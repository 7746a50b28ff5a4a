"""Stage 3, composition: gradient methods built on a gradient operator, so AdaptGrad can wrap any of them.

Each base method takes the operator it differentiates with: the plain `class_gradient`, or a
`SmoothedGradient` around it (SmoothGrad / AdaptGrad), as the paper composes them.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from paperplug.checks import check_callable, check_float_tensor, check_scalar
from paperplug_adaptgrad.noise_scale import check_broadcast
from paperplug_adaptgrad.smoothing import GradientOperator, check_targets

BaseMethod = Callable[..., torch.Tensor]  # (gradient, x, targets, **kw) -> attribution like x


def _check_call(gradient: GradientOperator, x: torch.Tensor, targets: torch.Tensor) -> None:
    check_callable(gradient, "gradient")
    check_float_tensor(x, "x")
    check_targets(targets, len(x))


def check_fill(value: float | torch.Tensor, name: str, x: torch.Tensor) -> None:
    """`value` a real number or a finite float tensor that broadcasts to `x`."""
    if not isinstance(value, torch.Tensor):
        check_scalar(value, name)
        return
    check_float_tensor(value, name, min_samples=0)
    check_broadcast(value, name, x)


def vanilla_gradient(
    gradient: GradientOperator, x: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """The gradient of the target logit (Simonyan et al.); smoothed when `gradient` is."""
    _check_call(gradient, x, targets)
    return gradient(x, targets)


def gradient_x_input(
    gradient: GradientOperator, x: torch.Tensor, targets: torch.Tensor
) -> torch.Tensor:
    """Gradient × Input: the (smoothed) gradient at x times x itself."""
    _check_call(gradient, x, targets)
    return gradient(x, targets) * x


def integrated_gradients(
    gradient: GradientOperator,
    x: torch.Tensor,
    targets: torch.Tensor,
    *,
    baseline: float | torch.Tensor = 0.0,
    n_steps: int = 50,
) -> torch.Tensor:
    """IG: (x − x') times the mean (smoothed) gradient on x' + α(x − x'), α = 0, 1/n, …, 1.

    All n+1 path points go to `gradient` in one call, so smoothing batches over them too.
    """
    _check_call(gradient, x, targets)
    check_scalar(n_steps, "n_steps", "int", low=1)
    check_fill(baseline, "baseline", x)
    base = torch.as_tensor(baseline, dtype=x.dtype, device=x.device).expand_as(x)
    alphas = torch.linspace(0.0, 1.0, n_steps + 1, dtype=x.dtype, device=x.device)
    alphas = alphas.reshape(-1, *[1] * x.dim())
    path = base + alphas * (x - base)  # (steps+1, batch, ...)
    grads = gradient(path.reshape(-1, *x.shape[1:]), targets.repeat(n_steps + 1))
    return grads.reshape(path.shape).mean(dim=0) * (x - base)


BASE_METHODS: dict[str, BaseMethod] = {
    "gradient": vanilla_gradient,
    "gradient_x_input": gradient_x_input,
    "integrated_gradients": integrated_gradients,
}
