"""The linear datamodeling score (LDS), as the field defines it (dattri.metric.lds): for each
test point, the Spearman correlation over M subsets S_m between Σ_{i∈S_m} τ(z, i) and the
target f_{S_m}(z) of a model trained on S_m; averaged over test points."""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from paperplug.checks import check_array


def lds(scores: np.ndarray, subsets: np.ndarray, values: np.ndarray) -> tuple[float, np.ndarray]:
    """scores (n_train, n_test); subsets (M, n_train) bool; values (M, n_test) → (mean, per test)."""
    scores = check_array(scores, "scores", ndim=2)
    subsets = check_array(subsets, "subsets", dtype="bool", shape=(None, scores.shape[0]))
    values = check_array(values, "values", shape=(len(subsets), scores.shape[1]))
    predicted = subsets.astype(float) @ scores  # (M, n_test)
    per_test = np.array(
        [spearmanr(predicted[:, j], values[:, j]).statistic for j in range(scores.shape[1])]
    )
    return float(np.nanmean(per_test)), per_test
