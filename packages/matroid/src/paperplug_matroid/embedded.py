"""The embedded default's markets, shared by demo.py and bench/run.py: offline, seconds."""

from __future__ import annotations

import numpy as np

from paperplug_matroid.markets import random_market, worst_case_market

__all__ = ["contested_market", "random_market", "worst_case_market"]


def contested_market(n_agents: int = 60, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """n agents (60 by default), two acceptable jobs each: group A (half the agents) reaches a
    pool of jobs of its own (as many as its agents), groups B and C (a quarter each) compete
    for one small pool (2/15 of n jobs). Opportunity fairness caps λ* at the B ∪ C collision,
    and A pays for it (PoF ≈ 1.6 at every size)."""
    if n_agents < 8:
        raise ValueError(f"n_agents must be >= 8, got {n_agents}")
    rng = np.random.default_rng(seed)
    half, quarter = n_agents // 2, n_agents // 4
    shared = max(2, round(2 * n_agents / 15))
    pools = {
        "A": (n_agents - 2 * quarter, np.arange(0, half)),
        "B": (quarter, np.arange(half, half + shared)),
        "C": (quarter, np.arange(half, half + shared)),
    }
    rows, groups = [], []
    for group, (count, pool) in pools.items():
        for _ in range(count):
            row = np.zeros(half + shared, dtype=np.int8)
            row[rng.choice(pool, size=2, replace=False)] = 1
            rows.append(row)
            groups.append(group)
    return np.array(rows), groups
