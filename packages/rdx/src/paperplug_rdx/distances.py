"""Distances within one representation (RDX §3.1): neighbourhood ranks (the default), distances
divided by their maximum, or local scaling."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from paperplug.checks import check_array, check_scalar

METHODS = ("neighborhood", "max_normalized", "local_scaling")


def neighborhood_ranks(R: np.ndarray) -> np.ndarray:
    """D(i, j) = rank of j among i's Euclidean neighbours (0 for i itself): invariant to any
    rotation, scaling or other monotone change of distances. Ties keep index order."""
    R = check_array(R, "R", ndim=2)
    order = np.argsort(cdist(R, R), axis=1, kind="stable")
    ranks = np.empty_like(order)
    ranks[np.arange(len(R))[:, None], order] = np.arange(len(R))[None, :]
    return ranks.astype(np.float64)


def max_normalized(R: np.ndarray) -> np.ndarray:
    """Euclidean distances between the rows of R, divided by the largest (so in [0, 1])."""
    R = check_array(R, "R", ndim=2)
    D = cdist(R, R)
    return D / D.max() if D.max() > 0 else D


def local_scaling(R: np.ndarray, k: int = 7) -> np.ndarray:
    """d_ij² / (σ_i σ_j), σ_i the distance to i's k-th neighbour (Zelnik-Manor & Perona)."""
    R = check_array(R, "R", ndim=2)
    check_scalar(k, "k", "int", low=1)
    D = cdist(R, R)
    sigma = np.sort(D, axis=1)[:, min(k, len(R) - 1)]
    sigma = np.where(sigma > 0, sigma, 1.0)
    return D**2 / np.outer(sigma, sigma)


def distances(R: np.ndarray, method: str = "neighborhood") -> np.ndarray:
    if method == "neighborhood":
        return neighborhood_ranks(R)
    if method == "max_normalized":
        return max_normalized(R)
    if method == "local_scaling":
        return local_scaling(R)
    raise ValueError(f"distance must be one of {METHODS}, got {method!r}")
