"""A-CauIM (paper §4.2): seeds found by gradient ascent on a differentiable proxy of the causal
objective, then the top-k. The proxy is our reading of the paper (its exact form could not be
retrieved; see the README): a mean-field independent cascade of T steps from soft seed
weights, each node's expected exposure from its in-neighbours' activation probabilities."""

from __future__ import annotations

import time

import numpy as np
import torch

from paperplug import seeded_torch
from paperplug_cauim.exposure import ExposureGrid
from paperplug_cauim.greedy import SeedSelection
from paperplug_cauim.network import DiffusionNetwork


def mean_field(network: DiffusionNetwork, x: torch.Tensor, steps: int) -> torch.Tensor:
    """Activation probabilities (n,) after `steps` rounds: P_v ← 1 − (1 − x_v)·Π_{u→v}(1 − p_uv·P_u)."""
    src = torch.as_tensor(network.source)
    dst = torch.as_tensor(network.target)
    prob = torch.as_tensor(network.prob, dtype=x.dtype)
    P = x
    for _ in range(steps):
        log_miss = torch.log1p(-(prob * P[src]).clamp(max=1 - 1e-12))
        none = torch.zeros_like(x).index_add(0, dst, log_miss)
        P = 1 - (1 - x) * torch.exp(none)
    return P


def _interp(grid: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """τ̂_v(e_v) from each node's grid row, differentiable in e."""
    points = grid.shape[1] - 1
    position = e.clamp(0, 1) * points
    low = position.detach().floor().long().clamp(max=points - 1)
    frac = position - low
    rows = torch.arange(len(e))
    return grid[rows, low] * (1 - frac) + grid[rows, low + 1] * frac


def a_cauim(
    network: DiffusionNetwork,
    tau: ExposureGrid,
    k: int,
    *,
    steps: int = 150,
    lr: float = 0.1,
    cascade_steps: int = 4,
    seed: int = 0,
) -> SeedSelection:
    """Top-k seed logits θ after `steps` Adam steps on F(θ) = Σ_v (P_v − x_v)·τ̂_v(ē_v), with
    x = min(1, k·sigmoid(θ)/Σ sigmoid(θ)), P the mean-field activation, ē_v the mean of P over
    v's in-neighbours (seeds' own effects are left out, as in G-CauIM)."""
    n = network.n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"k must be an int in 1..{n}, got {k!r}")
    start = time.perf_counter()
    grid = torch.as_tensor(tau.values, dtype=torch.float64)
    src, dst = torch.as_tensor(network.source), torch.as_tensor(network.target)
    degree = torch.as_tensor(network.in_degree, dtype=torch.float64).clamp(min=1)
    with seeded_torch(seed):
        theta = (0.01 * torch.randn(n, dtype=torch.float64)).requires_grad_()
    moment, second = torch.zeros_like(theta), torch.zeros_like(theta)  # Adam (β = 0.9, 0.999)
    history = []
    for step in range(1, steps + 1):
        weights = torch.sigmoid(theta)
        x = (k * weights / weights.sum()).clamp(max=1.0)
        P = mean_field(network, x, cascade_steps)
        e = torch.zeros(n, dtype=torch.float64).index_add(0, dst, P[src]) / degree
        objective = ((P - x) * _interp(grid, e)).sum()
        (grad,) = torch.autograd.grad(objective, theta)
        with torch.no_grad():  # ascent: θ ← θ + lr·m̂/(√v̂ + ε)
            moment.mul_(0.9).add_(grad, alpha=0.1)
            second.mul_(0.999).addcmul_(grad, grad, value=0.001)
            theta += lr * (moment / (1 - 0.9**step)) / ((second / (1 - 0.999**step)).sqrt() + 1e-8)
        history.append(objective.item())
    seeds = torch.topk(theta.detach(), k).indices.tolist()
    return SeedSelection(
        seeds, [], steps, time.perf_counter() - start, "A-CauIM", {"proxy": history}
    )
