"""Input checks shared by the stages: raised at the door, naming the argument."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_array


def activations(H: Any, name: str = "activations") -> np.ndarray:
    """A (tokens, neurons) float array, finite, copied (never a view of the caller's data)."""
    if hasattr(H, "detach"):
        H = H.detach().cpu().numpy()
    try:
        return check_array(H, dtype=np.float64, copy=True, input_name=name)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def positions(pos: Any, n: int, name: str = "positions") -> np.ndarray:
    """Sorted unique integer token positions inside [0, n)."""
    arr = np.asarray(pos)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of token positions")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"{name} must lie in [0, {n}), got [{arr.min()}, {arr.max()}]")
    return np.unique(arr)


def positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)
