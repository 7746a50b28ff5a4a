"""Stratified cross-validation shared by the demo and the benchmark: one row of scores per fold."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

from paperplug.checks import (
    check_array,
    check_callable,
    check_consistent_length,
    check_scalar,
    check_sequence,
)
from paperplug.harness import Timer
from paperplug_neurules.classifier import _check_labels

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
    check_callable(fit, "fit")
    X = check_array(X, "X", ndim=2)
    _check_labels(y, "y")
    check_consistent_length(X=X, y=y)
    if len(check_sequence(names, "names", str, what="feature names")) != X.shape[1]:
        raise ValueError(f"names has {len(names)} names for the {X.shape[1]} features of X")
    check_scalar(n_splits, "n_splits", "int", low=2, high=len(X))
    check_scalar(seed, "seed", "int", low=0)
    y = np.asarray(y)
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
