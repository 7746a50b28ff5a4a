"""The embedded default, shared by demo.py and bench/run.py: scikit-learn's digits as sequences
of 64 pixel intensities (17 levels, 0–16), split 80/20, and a digit classifier that judges
samples."""

from __future__ import annotations

import numpy as np

from paperplug.extras import requires_extra

VOCAB = 17
ELLS = (1, 2, 3, 5)


def digit_tokens(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train tokens, test tokens, train labels, test labels): (n, 64) ints in [0, 16]."""
    with requires_extra("paperplug-prime", "demo", "the embedded default"):
        from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(X))
    cut = int(0.8 * len(X))
    X = X.astype(np.int64)
    return X[order[:cut]], X[order[cut:]], y[order[:cut]], y[order[cut:]]


def digit_classifier(X: np.ndarray, y: np.ndarray) -> object:
    """A logistic-regression digit classifier on intensities / 16 (judges samples)."""
    with requires_extra("paperplug-prime", "demo", "the embedded default"):
        from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=2000).fit(X / 16.0, y)


def sample_quality(clf: object, samples: np.ndarray) -> tuple[float, float]:
    """Mean max-probability of the classifier on the samples, and the share it is ≥ 0.9 on."""
    p = clf.predict_proba(samples / 16.0).max(1)
    return float(p.mean()), float((p >= 0.9).mean())
