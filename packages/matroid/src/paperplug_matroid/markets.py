"""The paper's regimes: the adversarial family that makes the bound C − 1 tight, and random
markets (Erdős–Rényi agent–resource graphs, agents coloured at random) where the price of
fairness tends to 1 as the market grows unless one group dominates (paper §4–5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paperplug_matroid.characterisation import fair_point
from paperplug_matroid.matroids import TransversalMatroid


def worst_case_market(M: int) -> tuple[TransversalMatroid, list[int]]:
    """Two singleton groups whose only resource is the same one, and a third group of M agents
    with private resources: λ* = 1/2 (the pair collides), PoF = 2(M+1)/(M+2) → 2 = C − 1."""
    if isinstance(M, bool) or not isinstance(M, int) or M < 0:
        raise ValueError(f"M must be a non-negative int, got {M!r}")
    biadjacency = np.zeros((M + 2, M + 1), dtype=np.int8)
    biadjacency[0, 0] = biadjacency[1, 0] = 1
    biadjacency[np.arange(2, M + 2), np.arange(1, M + 1)] = 1
    return TransversalMatroid(biadjacency), [0, 1] + [2] * M


def random_market(
    n_agents: int, n_resources: int, p: float, rng: np.random.Generator
) -> TransversalMatroid:
    """An Erdős–Rényi bipartite market: each agent–resource edge present with probability p."""
    if n_agents < 1 or n_resources < 1 or not 0 <= p <= 1:
        raise ValueError(
            f"need n_agents, n_resources >= 1 and p in [0, 1], got {n_agents}, {n_resources}, {p}"
        )
    return TransversalMatroid(rng.random((n_agents, n_resources)) < p)


def random_colouring(n: int, shares: Sequence[float], rng: np.random.Generator) -> np.ndarray:
    """Each agent's group drawn independently with probabilities `shares`."""
    shares = np.asarray(shares, dtype=float)
    if shares.ndim != 1 or len(shares) < 1 or (shares < 0).any() or not np.isclose(shares.sum(), 1):
        raise ValueError(f"shares must be non-negative and sum to 1, got {shares.tolist()}")
    return rng.choice(len(shares), size=n, p=shares)


@dataclass
class TrendPoint:
    """Mean and spread of the PoF over random markets of one size."""

    n_agents: int
    mean_pof: float
    max_pof: float
    share_equal_to_one: float  # fraction of markets with PoF = 1 exactly


def random_colouring_trend(
    sizes: Sequence[int],
    shares: Sequence[float],
    *,
    resources_per_agent: float = 1.0,
    degree: float = 3.0,
    trials: int = 50,
    seed: int = 0,
) -> list[TrendPoint]:
    """PoF of random markets coloured at random, as the market grows: n agents,
    ⌈resources_per_agent·n⌉ resources, mean degree `degree` (edge probability degree / m)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        m = max(1, int(np.ceil(resources_per_agent * n)))
        pofs = []
        for _ in range(trials):
            market = random_market(n, m, min(1.0, degree / m), rng)
            pofs.append(fair_point(market, random_colouring(n, shares, rng)).exact["pof"])
        values = np.array([float(v) for v in pofs])
        out.append(
            TrendPoint(
                n, float(values.mean()), float(values.max()), float(np.mean([v == 1 for v in pofs]))
            )
        )
    return out
