"""Which interactions the regression fits (§3, "interaction lookup"): every subset of size
≤ k of all players, or, for large patch grids, the cross-modal pairs only (image × text)."""

from __future__ import annotations

from itertools import combinations

import numpy as np

from paperplug.checks import check_scalar, check_type

Interaction = tuple[int, ...]


def interaction_lookup(
    n: int, max_order: int = 2, *, n_a: int | None = None, crossmodal_only: bool = False
) -> list[Interaction]:
    """The fitted subsets, ordered by size then lexicographically: (), (0,), ..., (0, 1), ...

    With `crossmodal_only` (needs `n_a`, the first modality's size) the second-order terms are
    the n_a · (n - n_a) pairs (i, j), i < n_a <= j: the paper's lookup for ViT-B/16 grids."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(max_order, (int, np.integer)) or not 0 <= max_order <= n:
        raise ValueError(f"max_order must be an integer in [0, n={n}], got {max_order!r}")
    check_type(crossmodal_only, "crossmodal_only", bool)
    if n_a is not None:
        check_scalar(n_a, "n_a", "int", low=1, high=n - 1)
    if crossmodal_only and max_order != 2:
        raise ValueError("crossmodal_only is the order-2 image x text lookup: max_order must be 2")
    lookup: list[Interaction] = [()]
    for order in range(1, min(max_order, n) + 1):
        if crossmodal_only and order == 2:
            if n_a is None or not 0 < n_a < n:
                raise ValueError("crossmodal_only needs n_a with 0 < n_a < n")
            lookup += [(i, j) for i in range(n_a) for j in range(n_a, n)]
        else:
            lookup += list(combinations(range(n), order))
    return lookup


def design_matrix(coalitions: np.ndarray, lookup: list[Interaction]) -> np.ndarray:
    """X[t, s] = Π_{i∈S_s} 1[i ∈ T_t] (the Möbius basis of the regression), float64."""
    coalitions = np.asarray(coalitions, dtype=bool)
    x = np.empty((coalitions.shape[0], len(lookup)))
    for s, subset in enumerate(lookup):
        if not subset:
            x[:, s] = 1.0
        elif len(subset) == 1:
            x[:, s] = coalitions[:, subset[0]]
        else:
            x[:, s] = coalitions[:, list(subset)].all(axis=1)
    return x


def all_coalitions(n: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Coalitions start..stop-1 of {0, 1}^n, bit i of the integer = player i, bool (m, n)."""
    if n > 30:
        raise ValueError(f"enumerating 2^{n} coalitions is out of reach; sample instead")
    stop = 2**n if stop is None else stop
    ids = np.arange(start, stop, dtype=np.int64)
    return ((ids[:, None] >> np.arange(n)) & 1).astype(bool)
