"""The paper's six adequacy bins over [0, 1]."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_type

BIN_EDGES = (0.10, 0.25, 0.50, 0.75, 0.90)
BIN_NAMES = ("irrelevant", "weak", "marginal", "moderate", "high", "precise")  # low to high


def adequacy_bin(scores: object, name: str = "scores") -> np.ndarray:
    """Bin index 0 (irrelevant, < 0.10) .. 5 (precise, >= 0.90) of each score in [0, 1]."""
    check_type(name, "name", str)
    if not name:
        raise ValueError("name must be a non-empty string (the argument's name)")
    values = check_array(scores, name, min_samples=0)
    if ((values < 0) | (values > 1)).any():
        raise ValueError(
            f"{name} must be adequacy scores in [0, 1], got values from {values.min():.4g} "
            f"to {values.max():.4g}"
        )
    return np.searchsorted(BIN_EDGES, values, side="right")
