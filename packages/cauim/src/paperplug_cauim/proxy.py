"""A-CauIM (paper §4.2): seeds found by gradient ascent on a differentiable proxy of the causal
objective, then the top-k. The proxy is our reading of the paper (its exact form could not be
retrieved; see the README): a mean-field independent cascade of T steps from soft seed
weights, each node's expected exposure from its in-neighbours' activation probabilities.

numpy only: the gradient is derived by hand (reverse mode through the T mean-field steps) and
checked against finite differences in the tests, so the package installs without torch.
"""

from __future__ import annotations

import time

import numpy as np

from paperplug_cauim.exposure import ExposureGrid
from paperplug_cauim.greedy import SeedSelection
from paperplug_cauim.network import DiffusionNetwork

EDGE_CAP = 1 - 1e-12  # p·P below 1, so log(1 − p·P) stays finite


def mean_field(network: DiffusionNetwork, x: np.ndarray, steps: int) -> np.ndarray:
    """Activation probabilities (n,) after `steps` rounds: P_v ← 1 − (1 − x_v)·Π_{u→v}(1 − p_uv·P_u)."""
    return _forward(network, x, steps)[-1]


def _forward(network: DiffusionNetwork, x: np.ndarray, steps: int) -> list[np.ndarray]:
    """[P_0 = x, P_1, ..., P_T] of the mean-field cascade."""
    P = [x]
    for _ in range(steps):
        hit = np.minimum(network.prob * P[-1][network.source], EDGE_CAP)  # (arcs,)
        none = np.bincount(network.target, weights=np.log1p(-hit), minlength=network.n)
        P.append(1 - (1 - x) * np.exp(none))
    return P


def _interp(grid: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """τ̂_v(e_v) from each node's grid row, and its derivative in e (0 where e is clipped)."""
    points = grid.shape[1] - 1
    position = np.clip(e, 0.0, 1.0) * points
    low = np.minimum(np.floor(position).astype(np.int64), points - 1)
    frac = position - low
    rows = np.arange(len(e))
    slope = (grid[rows, low + 1] - grid[rows, low]) * points * ((e >= 0) & (e <= 1))
    return grid[rows, low] * (1 - frac) + grid[rows, low + 1] * frac, slope


def proxy_objective(
    network: DiffusionNetwork, grid: np.ndarray, k: int, theta: np.ndarray, cascade_steps: int
) -> tuple[float, np.ndarray]:
    """F(θ) = Σ_v (P_v − x_v)·τ̂_v(ē_v) and its gradient dF/dθ, with x = min(1, k·σ(θ)/Σσ(θ)),
    P the mean-field activation after `cascade_steps` rounds, ē_v the mean of P over v's
    in-neighbours (seeds' own effects left out, as in G-CauIM)."""
    src, dst, prob = network.source, network.target, network.prob
    n = network.n
    degree = np.maximum(network.in_degree, 1).astype(np.float64)
    w = 1 / (1 + np.exp(-theta))
    raw = k * w / w.sum()
    x = np.minimum(raw, 1.0)
    P = _forward(network, x, cascade_steps)
    e = (network.in_neighbours.T @ P[-1]) / degree  # distinct in-neighbours (a multigraph's too)
    tau, slope = _interp(grid, e)
    objective = float(((P[-1] - x) * tau).sum())
    # reverse mode: F's gradient in P_T and x, then back through the T rounds
    g_e = (P[-1] - x) * slope
    g_P = tau + network.adjacency @ (g_e / degree)
    g_x = -tau
    for t in range(cascade_steps, 0, -1):
        hit_raw = prob * P[t - 1][src]
        hit = np.minimum(hit_raw, EDGE_CAP)
        none = np.bincount(dst, weights=np.log1p(-hit), minlength=n)
        survive = np.exp(none)  # P_t = 1 − (1 − x)·survive
        g_x += g_P * survive
        g_none = -g_P * (1 - x) * survive
        g_hit = -g_none[dst] / (1 - hit) * (hit_raw <= EDGE_CAP)
        g_P = np.bincount(src, weights=g_hit * prob, minlength=n)
    g_x += g_P  # P_0 = x
    g_raw = g_x * (raw <= 1.0)
    g_w = k / w.sum() * g_raw - k / w.sum() ** 2 * float((g_raw * w).sum())
    return objective, g_w * w * (1 - w)


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
    """Top-k seed logits θ after `steps` Adam steps (β = 0.9, 0.999) of ascent on the proxy
    F(θ) (`proxy_objective`), from θ ~ N(0, 0.01²) drawn from `seed`."""
    n = network.n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= n:
        raise ValueError(f"k must be an int in 1..{n}, got {k!r}")
    start = time.perf_counter()
    grid = np.asarray(tau.values, dtype=np.float64)
    theta = 0.01 * np.random.default_rng(seed).standard_normal(n)
    moment, second = np.zeros(n), np.zeros(n)
    history = []
    for step in range(1, steps + 1):
        objective, grad = proxy_objective(network, grid, k, theta, cascade_steps)
        moment = 0.9 * moment + 0.1 * grad
        second = 0.999 * second + 0.001 * grad * grad
        theta = theta + lr * (moment / (1 - 0.9**step)) / (
            np.sqrt(second / (1 - 0.999**step)) + 1e-8
        )
        history.append(objective)
    seeds = np.argsort(-theta, kind="stable")[:k].tolist()
    return SeedSelection(
        seeds, [], steps, time.perf_counter() - start, "A-CauIM", {"proxy": history}
    )
