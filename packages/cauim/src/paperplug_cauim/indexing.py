"""Vectorised index helpers shared by the samplers and objectives (sort-based: numpy's hashed
`unique` is slow on the large int64 keys used here)."""

from __future__ import annotations

import numpy as np


def concat_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of range(s, s + l) for each (s, l), vectorised."""
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return offsets + np.arange(total)


def unique_counts(values: np.ndarray, presorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, how often each occurs)."""
    if not presorted:
        values = np.sort(values)
    if not len(values):
        return values, np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate([[True], values[1:] != values[:-1]]))
    return values[starts], np.diff(np.append(starts, len(values)))


def sorted_member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """values ∈ pool elementwise, for a sorted `pool` (binary search)."""
    if not len(pool):
        return np.zeros(len(values), dtype=bool)
    position = np.minimum(np.searchsorted(pool, values), len(pool) - 1)
    return pool[position] == values
