"""Evaluation on a balanced test set: per-class accuracy, balanced accuracy, and accuracy on the
many-, medium- and few-shot classes; the L1 error of an estimated marginal."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_consistent_length, check_scalar


def shot_groups(n_classes: int = 10) -> dict[str, list[int]]:
    """Classes by training frequency (class 0 the most frequent): many 3, medium 4, few 3."""
    few = max(1, round(0.3 * n_classes))
    return {"many": list(range(few)), "medium": list(range(few, n_classes - few)),
            "few": list(range(n_classes - few, n_classes))}  # fmt: skip


def per_class_accuracy(pred: np.ndarray, y: np.ndarray, n_classes: int = 10) -> np.ndarray:
    return np.array(
        [np.mean(pred[y == c] == c) if (y == c).any() else np.nan for c in range(n_classes)]
    )


def report(pred: np.ndarray, y: np.ndarray, n_classes: int = 10) -> dict[str, float]:
    """Balanced accuracy and the accuracy on the many-, medium- and few-shot classes."""
    check_scalar(n_classes, "n_classes", "int", low=2)
    pred = check_array(pred, "pred", dtype="int", ndim=1)
    y = check_array(y, "y", dtype="int", ndim=1)
    check_consistent_length(pred=pred, y=y)
    for name, labels in (("pred", pred), ("y", y)):
        if ((labels < 0) | (labels >= n_classes)).any():
            raise ValueError(f"{name} must hold classes in 0..{n_classes - 1}")
    acc = per_class_accuracy(pred, y, n_classes)
    out = {"balanced": float(np.nanmean(acc))}
    for name, classes in shot_groups(n_classes).items():
        out[name] = float(np.nanmean(acc[classes]))
    return out
