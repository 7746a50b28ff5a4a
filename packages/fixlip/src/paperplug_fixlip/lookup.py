"""Which interactions the regression fits (§3, "interaction lookup"): every subset of size
≤ k of all players, or, for large patch grids, the cross-modal pairs only (image × text)."""

from __future__ import annotations

from itertools import combinations, pairwise

import numpy as np

from paperplug.checks import check_array, check_scalar, check_sequence, check_type

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


def check_lookup(
    lookup: list[Interaction], name: str = "lookup", n: int | None = None, players: str = "players"
) -> list[Interaction]:
    """`lookup` as a list of distinct interactions, each a tuple of player indices >= 0 in
    increasing order (below `n`, the count of `players`, when given)."""
    items = check_sequence(lookup, name, (tuple, list), what="tuples of player indices")
    out = []
    for i, subset in enumerate(items):
        for j in subset:
            check_scalar(j, f"{name}[{i}]", "int", low=0)
        if any(a >= b for a, b in pairwise(subset)):
            raise ValueError(f"{name}[{i}] must list players in increasing order, got {subset!r}")
        out.append(tuple(int(j) for j in subset))
    if len(set(out)) < len(out):
        raise ValueError(f"{name} must hold distinct interactions: one is listed twice")
    top = max((s[-1] for s in out if s), default=-1)
    if n is not None and top >= n:
        raise ValueError(f"{name} names player {top}, beyond the {n} {players}")
    return out


def design_matrix(coalitions: np.ndarray, lookup: list[Interaction]) -> np.ndarray:
    """X[t, s] = Π_{i∈S_s} 1[i ∈ T_t] (the Möbius basis of the regression), float64."""
    coalitions = check_array(coalitions, "coalitions", dtype="bool", ndim=2)
    lookup = check_lookup(lookup, n=coalitions.shape[1], players="columns of coalitions")
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
