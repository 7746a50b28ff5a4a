"""Stage 4, the paper's quality measures: sparseness (Gini), out-of-range sampling, deletion faithfulness."""

from __future__ import annotations

import math

import torch

from paperplug.checks import (
    argument_errors,
    check_callable,
    check_float_tensor,
    check_scalar,
)
from paperplug_adaptgrad.composition import check_fill
from paperplug_adaptgrad.noise_scale import check_range
from paperplug_adaptgrad.smoothing import Forward, check_targets


def gini(attributions: torch.Tensor) -> torch.Tensor:
    """Sparseness of each map: the Gini index of |values| over its flattened coordinates, in [0, 1).

    G = Σ_k (2k − d − 1)·a_(k) / (d·Σ a) with a sorted ascending (Hurley & Rickard); 0 for an
    all-zero map.
    """
    check_float_tensor(attributions, "attributions")
    a = attributions.detach().abs().reshape(len(attributions), -1).double().sort(dim=1).values
    d = a.shape[1]
    k = torch.arange(1, d + 1, dtype=a.dtype, device=a.device)
    total = a.sum(dim=1)
    g = ((2 * k - d - 1) * a).sum(dim=1) / (d * total)
    return torch.where(total > 0, g, torch.zeros_like(g))


def out_of_range_rate(samples: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> float:
    """Share of sampled coordinates outside [lo, hi]: the out-of-range sampling the paper bounds."""
    check_range(samples, lo, hi, "samples")
    return float(((samples < lo) | (samples > hi)).double().mean())


def expected_out_of_range_rate(
    x: torch.Tensor, sigma: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor
) -> float:
    """The exact mean of P(x_i + ε_i ∉ [lo, hi]) for ε_i ~ N(0, σ_i²); σ_i = 0 counts as never out."""
    check_range(x, lo, hi)
    check_float_tensor(sigma, "sigma", min_samples=0)
    if sigma.shape != x.shape or bool((sigma < 0).any()):
        raise ValueError(
            f"sigma must be non-negative and shaped like x {tuple(x.shape)}, got {tuple(sigma.shape)}"
        )
    x, sigma = x.double(), sigma.double().expand_as(x)
    lo, hi = lo.double().expand_as(x), hi.double().expand_as(x)
    s = sigma.clamp(min=torch.finfo(torch.float64).tiny)
    p = _normal_cdf((lo - x) / s) + _normal_cdf((x - hi) / s)
    return float(torch.where(sigma > 0, p, torch.zeros_like(p)).mean())


def _normal_cdf(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * torch.erfc(-z / math.sqrt(2.0))


@torch.no_grad()
def deletion_curve(
    forward: Forward,
    x: torch.Tensor,
    attributions: torch.Tensor,
    targets: torch.Tensor,
    *,
    steps: int = 20,
    fill: float | torch.Tensor = 0.0,
    batch_size: int | None = None,
) -> torch.Tensor:
    """Target-class probability as the most-attributed coordinates are set to `fill`, (batch, steps+1).

    Coordinates are removed in order of decreasing signed attribution, a fraction k/steps at step k;
    a faithful map makes the probability fall fast.
    """
    check_callable(forward, "forward")
    check_float_tensor(x, "x")
    check_float_tensor(attributions, "attributions")
    targets = check_targets(targets, len(x))
    check_scalar(steps, "steps", "int", low=1)
    check_scalar(batch_size, "batch_size", "int", low=1, allow_none=True)
    check_fill(fill, "fill", x)
    if attributions.shape != x.shape:
        raise ValueError(
            f"attributions {tuple(attributions.shape)} must be shaped like x {tuple(x.shape)}"
        )
    b, d = len(x), x[0].numel()
    order = attributions.reshape(b, -1).argsort(dim=1, descending=True, stable=True)
    rank = torch.empty_like(order).scatter_(1, order, torch.arange(d, device=x.device).expand(b, d))
    cut = torch.round(torch.linspace(0, d, steps + 1, device=x.device)).long()
    removed = (rank[None] < cut[:, None, None]).reshape(
        steps + 1, *x.shape
    )  # (steps+1, batch, ...)
    filler = torch.as_tensor(fill, dtype=x.dtype, device=x.device).expand_as(x)
    probes = torch.where(removed, filler, x).reshape(-1, *x.shape[1:])
    step = batch_size or len(probes)
    with argument_errors("x", "the shape the model takes"):
        probs = torch.cat(
            [forward(probes[i : i + step]).softmax(dim=1) for i in range(0, len(probes), step)]
        )
    if int(targets.max()) >= probs.shape[1]:
        raise ValueError(f"targets: class {int(targets.max())} out of range for {probs.shape[1]}")
    return probs.gather(1, targets.repeat(steps + 1)[:, None]).reshape(steps + 1, b).T


def deletion_auc(curve: torch.Tensor) -> torch.Tensor:
    """Area under each deletion curve over the removed fraction in [0, 1] (trapezoid); lower is better."""
    check_float_tensor(curve, "curve", ndim=2)
    if curve.shape[1] < 2:
        raise ValueError(f"curve needs at least 2 points per row, got {curve.shape[1]}")
    return torch.trapezoid(curve, dx=1.0 / (curve.shape[1] - 1), dim=1)
