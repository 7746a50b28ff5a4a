"""Individual treatment effects that depend on exposure (paper §3): τ_i(e), with e the share
of i's in-neighbours activated. An estimate is cached on an exposure grid and interpolated."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from paperplug.checks import check_array, check_callable, check_scalar
from paperplug_cauim.network import DiffusionNetwork, check_name, check_network, check_nodes

TauFn = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (node indices, exposures) -> τ


def active_exposure(network: DiffusionNetwork, active: np.ndarray) -> np.ndarray:
    """e_i = active in-neighbours of i / in-degree of i (0 for a node with none), (n,)."""
    check_network(network)
    active = check_array(active, "active", dtype="bool", shape=(network.n,))
    counts = np.asarray(network.adjacency.T @ active.astype(np.int32)).ravel()
    return np.divide(
        counts, network.in_degree, out=np.zeros(network.n), where=network.in_degree > 0
    )


class ExposureGrid:
    """τ̂_i(e) cached at `points` exposures 0, 1/(points−1), ..., 1 for every node and read back
    by linear interpolation: an estimator is called n·points times once, never inside search."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = check_array(values, "values", shape=(None, None))
        if self.values.shape[1] < 2:
            raise ValueError(
                f"values must have at least 2 exposure points, got {self.values.shape}"
            )

    @classmethod
    def from_function(cls, tau: TauFn, n: int, points: int = 11, name: str = "tau") -> ExposureGrid:
        """τ called once on every (node, grid exposure) pair; `name` is how errors call it."""
        check_callable(tau, "tau", what="function tau(nodes, exposures)")
        check_scalar(n, "n", "int", low=1)
        check_scalar(points, "points", "int", low=2)
        check_name(name)
        grid = np.linspace(0.0, 1.0, points)
        nodes = np.repeat(np.arange(n), points)
        values = tau(nodes, np.tile(grid, n))
        values = check_array(values, f"the values {name} returned", ndim=1, min_samples=0)
        if values.shape != (n * points,):
            raise ValueError(
                f"{name} must return one effect per (node, exposure) pair: called on "
                f"{n * points} pairs, it returned shape {values.shape}"
            )
        return cls(values.reshape(n, points))

    def __call__(self, nodes: np.ndarray, e: np.ndarray) -> np.ndarray:
        nodes = check_nodes(nodes, self.values.shape[0], "nodes", min_len=0)
        e = check_array(e, "e", ndim=1, min_samples=0)
        if e.shape != nodes.shape:
            raise ValueError(
                f"e must hold one exposure per entry of nodes: shapes {e.shape} and {nodes.shape}"
            )
        points = self.values.shape[1] - 1
        position = np.clip(e, 0.0, 1.0) * points
        low = np.minimum(position.astype(np.int64), points - 1)
        frac = position - low
        return self.values[nodes, low] * (1 - frac) + self.values[nodes, low + 1] * frac
