"""Closed forms the faithful index is checked against (§3): the Möbius transform, the
p-weighted Banzhaf interaction index I_p(S) = Σ_{T⊇S} p^{|T|-|S|} m(T) (the top-order
terms of FWBII) and the weighted Banzhaf values, by enumeration of all 2^n coalitions."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_callable, check_scalar
from paperplug_fixlip.lookup import all_coalitions

MAX_PLAYERS = 24  # 2^24 coalitions: what enumerating them all takes in memory and time


def game_table(value_fn, n: int) -> np.ndarray:
    """ν on every coalition, indexed by the coalition's bitmask (bit i = player i)."""
    check_callable(value_fn, "value_fn", what="callable coalitions -> values")
    check_scalar(n, "n", "int", low=1, high=MAX_PLAYERS)
    values = np.asarray(value_fn(all_coalitions(n)), dtype=float).reshape(-1)
    if values.shape != (2**n,):
        raise ValueError(f"value_fn must return 2^{n} values")
    return values


def moebius_transform(table: np.ndarray) -> np.ndarray:
    """m(S) = Σ_{T⊆S} (-1)^{|S|-|T|} ν(T), for every bitmask S (O(n 2^n))."""
    m = check_array(table, "table", ndim=1, min_samples=2, copy=True)
    n = int(np.log2(len(m)))
    if 2**n != len(m):
        raise ValueError(f"table must hold 2^n values (one per coalition), got {len(m)}")
    for i in range(n):
        m = m.reshape(-1, 2, 2**i)  # axis 1 = bit i
        m[:, 1, :] -= m[:, 0, :]
        m = m.reshape(-1)
    return m


def weighted_banzhaf_interactions(table: np.ndarray, p: float) -> np.ndarray:
    """I_p(S) = Σ_{T⊇S} p^{|T|-|S|} m(T) for every bitmask S: the p-weighted Banzhaf
    interaction index (I_p({i}) is the weighted Banzhaf value of i)."""
    check_scalar(p, "p", low=0.0, high=1.0, inclusive="neither")
    a = moebius_transform(table)
    n = int(np.log2(len(a)))
    for i in range(n):
        a = a.reshape(-1, 2, 2**i)
        a[:, 0, :] += p * a[:, 1, :]
        a = a.reshape(-1)
    return a


def weighted_banzhaf_values(table: np.ndarray, p: float) -> np.ndarray:
    """WBV_i = E_{T∼μ_p on N∖i}[ν(T∪i) − ν(T)], shape (n,)."""
    index = weighted_banzhaf_interactions(table, p)
    n = int(np.log2(len(index)))
    return np.array([index[1 << i] for i in range(n)])
