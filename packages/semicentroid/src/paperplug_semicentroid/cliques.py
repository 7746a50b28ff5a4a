"""Exact search for a clique of a given size: the combinatorial kernel of the exact MCC and of
the core/FJR auditor (both reduce to "is there an m-clique in a threshold graph?")."""

from __future__ import annotations

import time

import numpy as np

from paperplug.checks import check_array, check_scalar


class SearchTimeout(Exception):
    """Raised when an exact search runs past its deadline."""


def check_deadline(deadline: float | None) -> None:
    """Raise SearchTimeout once time.perf_counter() has passed `deadline` (None: no limit). The
    searches call it in every loop that can repeat, so a time limit holds within a small slack."""
    if deadline is not None and time.perf_counter() > deadline:
        raise SearchTimeout


def _k_core(adj: np.ndarray, size: int) -> np.ndarray:
    """Indices of vertices that survive repeated removal of those with degree < size - 1."""
    alive = np.ones(adj.shape[0], dtype=bool)
    while True:
        deg = (adj & alive).sum(axis=1)
        drop = alive & (deg < size - 1)
        if not drop.any():
            return np.flatnonzero(alive)
        alive &= ~drop


def _color_bound(cand: int, nbr: list[int]) -> int:
    """Greedy colouring of the candidate set: the number of colours bounds its largest clique."""
    colors, rest = 0, cand
    while rest:
        colors += 1
        avail = rest
        while avail:
            v = (avail & -avail).bit_length() - 1
            rest &= ~(1 << v)
            avail &= ~nbr[v] & ~(1 << v)
    return colors


def find_clique(adj: np.ndarray, size: int, deadline: float | None = None) -> list[int] | None:
    """A clique of `size` vertices in the boolean adjacency `adj` (V, V), or None if none exists.

    Only vertices with adj[v, v] True may be used. Branch and bound over bitsets after a
    (size-1)-core reduction; raises SearchTimeout past `deadline` (a time.perf_counter() value)."""
    adj = check_array(adj, "adj", dtype="bool", ndim=2)
    if adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adj must be square (V, V), got shape {adj.shape}")
    check_scalar(size, "size", "int", low=0)
    check_scalar(deadline, "deadline", allow_none=True)
    return clique_search(adj, size, deadline)


def clique_search(adj: np.ndarray, size: int, deadline: float | None) -> list[int] | None:
    """`find_clique` on checked arguments (the searches' inner loop)."""
    check_deadline(deadline)
    if size <= 0:
        return []
    usable = np.flatnonzero(np.diag(adj))
    if len(usable) < size:
        return None
    if size == 1:
        return [int(usable[0])]
    adj = adj[np.ix_(usable, usable)]
    np.fill_diagonal(adj, False)
    core = _k_core(adj, size)
    if len(core) < size:
        return None
    adj, keep = adj[np.ix_(core, core)], usable[core]
    order = np.argsort(adj.sum(axis=1), kind="stable")  # low degree first
    sub = adj[np.ix_(order, order)]
    packed = np.packbits(sub, axis=1, bitorder="little")
    nbr = [int.from_bytes(row.tobytes(), "little") for row in packed]
    calls = [0]

    def extend(depth: int, cand: int) -> list[int] | None:
        if depth == size:
            return []
        calls[0] += 1
        if calls[0] % 32 == 0:
            check_deadline(deadline)
        if depth + cand.bit_count() < size:
            return None
        if size - depth > 2 and depth + _color_bound(cand, nbr) < size:
            return None
        while cand:
            if depth + cand.bit_count() < size:
                return None
            v = (cand & -cand).bit_length() - 1
            cand &= ~(1 << v)
            found = extend(depth + 1, cand & nbr[v])
            if found is not None:
                return [v, *found]
        return None

    found = extend(0, (1 << len(keep)) - 1)
    return None if found is None else sorted(int(keep[order[v]]) for v in found)
