"""Stratified cross-validation shared by the demo and the benchmark: one row of scores per fold."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

from paperplug.harness import Timer

# fit(X_train, y_train, feature_names) -> (predict, n_rules, n_conditions)
Fit = Callable[
    [np.ndarray, np.ndarray, list[str]], tuple[Callable[[np.ndarray], np.ndarray], int, int]
]


def cross_validate(
    fit: Fit,
    X: np.ndarray,
    y: np.ndarray,
    names: list[str],
    *,
    n_splits: int = 3,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Stratified k-fold (shuffled with `seed`): per fold, accuracy, weighted F1, the model's
    rules and conditions, and the fit time in seconds."""
    folds = []
    for train, test in StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(X, y):
        with Timer() as timer:
            predict, n_rules, n_conditions = fit(X[train], y[train], names)
        pred = predict(X[test])
        folds.append(
            {
                "accuracy": float(accuracy_score(y[test], pred)),
                "f1": float(f1_score(y[test], pred, average="weighted")),
                "rules": float(n_rules),
                "conditions": float(n_conditions),
                "seconds": timer.seconds,
            }
        )
    return folds
