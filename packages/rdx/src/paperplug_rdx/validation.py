"""Checks shared by RDX's public functions: representations, (n, n) matrices over the items,
item indices."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from paperplug.checks import check_array


def check_square(D: Any, name: str, n: int | None = None) -> np.ndarray:
    """A finite (n, n) float array over the items (any n >= 1 where `n` is None)."""
    D = check_array(D, name, ndim=2)
    if D.shape[0] != D.shape[1] or (n is not None and D.shape[0] != n):
        want = "square" if n is None else f"({n}, {n})"
        raise ValueError(f"{name} must be {want} (one row and column per item), got {D.shape}")
    return D


def check_affinity(A: Any, name: str = "A") -> Any:
    """A square, finite, non-negative affinity matrix, dense or scipy sparse (kept sparse)."""
    if sparse.issparse(A):
        if A.shape[0] != A.shape[1] or A.shape[0] == 0:
            raise ValueError(f"{name} must be square and non-empty, got {A.shape}")
        values = check_array(A.data, name, min_samples=0)
        if (values < 0).any():
            raise ValueError(f"{name} must be non-negative (affinities)")
        return A
    A = check_square(A, name)
    if (A < 0).any():
        raise ValueError(f"{name} must be non-negative (affinities)")
    return A


def check_items(items: Any, name: str, n: int, *, min_items: int = 1) -> np.ndarray:
    """Distinct item indices in [0, n), at least `min_items`."""
    items = check_array(items, name, dtype="int", ndim=1, min_samples=min_items)
    if items.min() < 0 or items.max() >= n:
        raise ValueError(f"{name} must hold item indices in [0, {n})")
    if len(np.unique(items)) != len(items):
        raise ValueError(f"{name} must hold distinct item indices")
    return items
