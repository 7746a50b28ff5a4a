"""The embedded default, shared by demo.py and bench/run.py: networkx's Les Misérables graph
(77 nodes, unweighted), IC with p = 0.15, three covariates per node, a synthetic
heterogeneous effect that depends on exposure and can be negative, and 150 past random
campaigns observed with one potential outcome each."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from paperplug_cauim.exposure import active_exposure
from paperplug_cauim.network import DiffusionNetwork, from_networkx
from paperplug_cauim.worlds import LiveEdgeWorlds

P = 0.15
K = 5


@dataclass
class Scenario:
    network: DiffusionNetwork
    covariates: np.ndarray  # (n, 3)
    weights: np.ndarray  # (3,)

    def true_tau(self, nodes: np.ndarray, e: np.ndarray) -> np.ndarray:
        """τ_i(e) = tanh(x_i·w) + 1.5·(e − 0.3): heterogeneous, exposure-sensitive, negative for some."""
        return np.tanh(self.covariates[nodes] @ self.weights) + 1.5 * (np.asarray(e) - 0.3)

    def baseline_outcome(self, nodes: np.ndarray) -> np.ndarray:
        return self.covariates[nodes] @ np.array([0.5, -0.3, 0.2])


def les_miserables(seed: int = 0) -> Scenario:
    graph = nx.les_miserables_graph()
    for _, _, data in graph.edges(data=True):
        data.pop("weight", None)  # co-occurrence counts up to 31 are not probabilities
    rng = np.random.default_rng(seed)
    network = from_networkx(graph, p=P)
    return Scenario(network, rng.normal(size=(network.n, 3)), np.array([1.0, -1.0, 0.5]))


def past_campaigns(
    scenario: Scenario, n_campaigns: int = 150, size: int = K, seed: int = 0
) -> dict:
    """Observational records: for each past random campaign (one cascade each), every node's
    covariates, exposure, activation and outcome y = y0(x) + T·τ(x, e) + noise."""
    rng = np.random.default_rng(seed + 1)
    net = scenario.network
    worlds = LiveEdgeWorlds(net, n_campaigns, seed=seed + 2)
    rows = {"covariates": [], "exposure": [], "treated": [], "y": []}
    nodes = np.arange(net.n)
    for c in range(n_campaigns):
        seeds = rng.choice(net.n, size=size, replace=False)
        active = worlds.activated(seeds, c)
        e = active_exposure(net, active)
        y = (
            scenario.baseline_outcome(nodes)
            + active * scenario.true_tau(nodes, e)
            + rng.normal(0, 0.1, net.n)
        )
        rows["covariates"].append(scenario.covariates)
        rows["exposure"].append(e)
        rows["treated"].append(active)
        rows["y"].append(y)
    return {key: np.concatenate(value) for key, value in rows.items()}


def scale_graph(n: int = 10_000, m: int = 50_000, seed: int = 0) -> nx.Graph:
    """A random graph with n nodes and m edges (the scale run)."""
    return nx.gnm_random_graph(n, m, seed=seed)
