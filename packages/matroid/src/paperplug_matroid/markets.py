"""The paper's regimes: the adversarial family that makes the bound C − 1 tight, and random
markets (Erdős–Rényi agent–resource graphs, agents coloured at random) where the price of
fairness tends to 1 as the market grows unless one group dominates (paper §4–5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from paperplug.checks import check_array, check_scalar, check_seed, check_sequence, check_type
from paperplug_matroid.characterisation import fair_point
from paperplug_matroid.matroids import TransversalMatroid


def worst_case_market(M: int) -> tuple[TransversalMatroid, list[int]]:
    """Two singleton groups whose only resource is the same one, and a third group of M agents
    with private resources: λ* = 1/2 (the pair collides), PoF = 2(M+1)/(M+2) → 2 = C − 1."""
    check_scalar(M, "M", "int", low=0)
    biadjacency = np.zeros((M + 2, M + 1), dtype=np.int8)
    biadjacency[0, 0] = biadjacency[1, 0] = 1
    biadjacency[np.arange(2, M + 2), np.arange(1, M + 1)] = 1
    return TransversalMatroid(biadjacency), [0, 1] + [2] * M


def random_market(
    n_agents: int, n_resources: int, p: float, rng: np.random.Generator
) -> TransversalMatroid:
    """An Erdős–Rényi bipartite market: each agent–resource edge present with probability p."""
    check_scalar(n_agents, "n_agents", "int", low=1)
    check_scalar(n_resources, "n_resources", "int", low=1)
    check_scalar(p, "p", low=0, high=1)
    check_type(rng, "rng", np.random.Generator)
    return TransversalMatroid(rng.random((n_agents, n_resources)) < p)


def random_colouring(n: int, shares: Sequence[float], rng: np.random.Generator) -> np.ndarray:
    """Each agent's group drawn independently with probabilities `shares`."""
    check_scalar(n, "n", "int", low=0)
    shares = _shares(shares)
    check_type(rng, "rng", np.random.Generator)
    return rng.choice(len(shares), size=n, p=shares)


def _shares(shares: Sequence[float]) -> np.ndarray:
    shares = check_array(shares, "shares", ndim=1)
    if (shares < 0).any() or not np.isclose(shares.sum(), 1):
        raise ValueError(f"shares must be non-negative and sum to 1, got {shares.tolist()}")
    return shares


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
    sizes = check_sequence(sizes, "sizes", int, what="market sizes (ints)")
    if any(isinstance(n, bool) or n < 1 for n in sizes):
        raise ValueError(f"sizes must be ints >= 1, got {sizes}")
    _shares(shares)
    check_scalar(resources_per_agent, "resources_per_agent", low=0, inclusive="neither")
    check_scalar(degree, "degree", low=0, inclusive="neither")
    check_scalar(trials, "trials", "int", low=1)
    check_seed(seed, allow_none=False)
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
