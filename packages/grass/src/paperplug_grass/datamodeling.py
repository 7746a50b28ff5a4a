"""The linear datamodeling score (LDS), as the field defines it (dattri.metric.lds): for each
test point, the Spearman correlation over M subsets S_m between Σ_{i∈S_m} τ(z, i) and the
target f_{S_m}(z) of a model trained on S_m; averaged over test points."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr


def lds(scores: np.ndarray, subsets: np.ndarray, values: np.ndarray) -> tuple[float, np.ndarray]:
    """scores (n_train, n_test); subsets (M, n_train) bool; values (M, n_test) → (mean, per test)."""
    scores, subsets, values = np.asarray(scores), np.asarray(subsets, bool), np.asarray(values)
    if subsets.ndim != 2 or subsets.shape[1] != scores.shape[0]:
        raise ValueError(f"subsets must be (M, {scores.shape[0]}) booleans, got {subsets.shape}")
    if values.shape != (subsets.shape[0], scores.shape[1]):
        raise ValueError(
            f"values must be (M={subsets.shape[0]}, n_test={scores.shape[1]}), got {values.shape}"
        )
    predicted = subsets.astype(float) @ scores  # (M, n_test)
    per_test = np.array(
        [spearmanr(predicted[:, j], values[:, j]).statistic for j in range(scores.shape[1])]
    )
    return float(np.nanmean(per_test)), per_test
