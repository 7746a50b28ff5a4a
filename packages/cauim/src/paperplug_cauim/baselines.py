"""The baselines the paper compares with: influence maximisation on plain spread (CELF, the
same greedy with τ ≡ 1 and seeds counted), highest degree, highest estimated effect (uplift
top-k, ignoring diffusion), and random seeds."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_scalar, check_seed, check_type
from paperplug_cauim.exposure import ExposureGrid
from paperplug_cauim.greedy import SeedSelection, g_cauim
from paperplug_cauim.network import DiffusionNetwork, check_network
from paperplug_cauim.objective import CausalObjective
from paperplug_cauim.worlds import LiveEdgeWorlds


def _ones(nodes: np.ndarray, e: np.ndarray) -> np.ndarray:
    return np.ones(len(nodes))


def celf_spread(network: DiffusionNetwork, worlds: LiveEdgeWorlds, k: int) -> SeedSelection:
    """CELF on the expected number of activated nodes (classic IM)."""
    selection = g_cauim(CausalObjective(network, _ones, worlds, exclude_seeds=False), k)
    selection.method = "CELF (spread)"
    return selection


def top_degree(network: DiffusionNetwork, k: int) -> SeedSelection:
    """The k nodes of highest out-degree (ties by node order): the classic heuristic."""
    check_scalar(k, "k", "int", low=1, high=check_network(network).n)
    out_degree = np.bincount(network.source, minlength=network.n)
    seeds = np.argsort(-out_degree, kind="stable")[:k].tolist()
    return SeedSelection(seeds, [], 0, 0.0, "degree")


def top_effect(tau: ExposureGrid, k: int, exposure: float = 0.3) -> SeedSelection:
    """The k nodes with the largest estimated effect at a typical exposure (uplift top-k)."""
    check_type(tau, "tau", ExposureGrid, what="an ExposureGrid (see ExposureGrid.from_function)")
    n = tau.values.shape[0]
    check_scalar(k, "k", "int", low=1, high=n)
    check_scalar(exposure, "exposure", low=0, high=1)
    values = tau(np.arange(n), np.full(n, exposure))
    return SeedSelection(np.argsort(-values, kind="stable")[:k].tolist(), [], 0, 0.0, "ITE top-k")


def random_seeds(network: DiffusionNetwork, k: int, seed: int) -> SeedSelection:
    """k distinct nodes drawn uniformly from `seed`: the floor every method should beat."""
    check_scalar(k, "k", "int", low=1, high=check_network(network).n)
    check_seed(seed, allow_none=False)
    seeds = np.random.default_rng(seed).choice(network.n, size=k, replace=False).tolist()
    return SeedSelection(seeds, [], 0, 0.0, "random")
