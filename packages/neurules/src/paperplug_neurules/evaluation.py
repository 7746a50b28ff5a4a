"""The datasets of the embedded default and a cross-validation helper shared by demo and bench."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

from paperplug_neurules.planted import planted_rule_data


def datasets() -> dict[str, tuple[np.ndarray, np.ndarray, list[str]]]:
    """breast_cancer, wine, iris (scikit-learn, offline) and the planted rule list."""
    out = {}
    for name, loader in (
        ("breast_cancer", load_breast_cancer),
        ("wine", load_wine),
        ("iris", load_iris),
    ):
        data = loader()
        out[name] = (data.data, data.target, [str(f).replace(" ", "_") for f in data.feature_names])
    X, y = planted_rule_data(seed=0)
    out["planted"] = (X, y, [f"x{i}" for i in range(X.shape[1])])
    return out


def cross_validate(
    fit: Callable[
        [np.ndarray, np.ndarray, list[str]], tuple[Callable[[np.ndarray], np.ndarray], int, int]
    ],
    X: np.ndarray,
    y: np.ndarray,
    names: list[str],
    *,
    n_splits: int = 3,
    seed: int = 0,
) -> dict[str, float]:
    """Stratified k-fold; `fit` returns (predict, n_rules, n_conditions). Means and stds."""
    rows = []
    for train, test in StratifiedKFold(n_splits, shuffle=True, random_state=seed).split(X, y):
        start = time.perf_counter()
        predict, n_rules, n_conditions = fit(X[train], y[train], names)
        seconds = time.perf_counter() - start
        pred = predict(X[test])
        rows.append(
            (
                accuracy_score(y[test], pred),
                f1_score(y[test], pred, average="weighted"),
                n_rules,
                n_conditions,
                seconds,
            )
        )
    table = np.array(rows, dtype=float)
    keys = ("accuracy", "f1", "rules", "conditions", "seconds")
    return {k: float(v) for k, v in zip(keys, table.mean(axis=0), strict=True)} | {
        f"{k}_std": float(v) for k, v in zip(keys[:2], table[:, :2].std(axis=0), strict=True)
    }
