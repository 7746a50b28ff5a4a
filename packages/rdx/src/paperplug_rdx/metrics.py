"""Metrics (RDX §4): the binary success rate of a grid and its mean, and linear CKA between two
representations (the standard and the debiased estimator)."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_consistent_length, check_scalar, check_seed
from paperplug_rdx.validation import check_items, check_square


def _pair(X: np.ndarray, Y: np.ndarray, min_items: int) -> tuple[np.ndarray, np.ndarray]:
    """Two representations of the same items, at least `min_items` of them."""
    X = check_array(X, "X", ndim=2, min_samples=min_items)
    Y = check_array(Y, "Y", ndim=2, min_samples=min_items)
    check_consistent_length(X=X, Y=Y)
    return X, Y


def bsr(grid: np.ndarray, D_close: np.ndarray, D_far: np.ndarray) -> float:
    """Binary success rate: the share of ordered pairs (i ≠ j) of the grid that the model said
    to consider them similar puts closer (neighbourhood ranks) than the other model does."""
    D_close = check_square(D_close, "D_close")
    D_far = check_square(D_far, "D_far", len(D_close))
    grid = check_items(grid, "grid", len(D_close))
    if len(grid) < 2:
        return float("nan")
    i, j = np.meshgrid(grid, grid, indexing="ij")
    off = i != j
    return float(np.mean(D_close[i[off], j[off]] < D_far[i[off], j[off]]))


def mbsr(values: list[float]) -> float:
    """Mean BSR over grids, ignoring grids too small to score (NaN)."""
    values = check_array(values, "values", ndim=1, finite=False, min_samples=0)
    if np.isinf(values).any() or (values < 0).any() or (values > 1).any():
        raise ValueError("values must be success rates in [0, 1] (NaN for a grid not scored)")
    finite = [v for v in values if np.isfinite(v)]
    return float(np.mean(finite)) if finite else float("nan")


def linear_cka(X: np.ndarray, Y: np.ndarray) -> float:
    """Linear CKA = ‖Yᵀ X‖²_F / (‖Xᵀ X‖_F ‖Yᵀ Y‖_F) on centred features (no n × n matrix)."""
    X, Y = _pair(X, Y, 2)
    X, Y = X - X.mean(0), Y - Y.mean(0)
    return float(np.linalg.norm(Y.T @ X) ** 2 / (np.linalg.norm(X.T @ X) * np.linalg.norm(Y.T @ Y)))


def debiased_cka(X: np.ndarray, Y: np.ndarray, max_items: int = 3000, seed: int = 0) -> float:
    """Linear CKA with the unbiased HSIC estimator (Song et al. 2012), as RDX's alignment uses;
    on a seeded subsample of `max_items` items beyond that (it needs n × n Gram matrices)."""
    X, Y = _pair(X, Y, 4)
    check_scalar(max_items, "max_items", "int", low=4)
    check_seed(seed, "seed", allow_none=False)
    if len(X) > max_items:
        keep = np.sort(np.random.default_rng(seed).choice(len(X), max_items, replace=False))
        X, Y = X[keep], Y[keep]

    def hsic(K: np.ndarray, L: np.ndarray) -> float:
        n = len(K)
        K, L = K.copy(), L.copy()
        np.fill_diagonal(K, 0)
        np.fill_diagonal(L, 0)
        ones = np.ones(n)
        term = (K * L).sum() + (ones @ K @ ones) * (ones @ L @ ones) / ((n - 1) * (n - 2))
        term -= 2 / (n - 2) * (ones @ K @ L @ ones)
        return term / (n * (n - 3))

    K, L = X @ X.T, Y @ Y.T
    return float(hsic(K, L) / np.sqrt(hsic(K, K) * hsic(L, L)))
