"""Federations the package's own code did not build (issue 36): scikit-learn's digits split
here, not by `embedded.py`, into 12 clients of 40-220 training samples (sizes drawn per seed),
4 hidden clusters of 3 clients, with transforms written here: a 90° rotation, a fixed pixel
permutation and a contrast squeeze (0.25 + 0.5 x), where embedded.py mirrors and inverts.

- "P(X)": cluster 0 as is, 1 rotated, 2 pixel-permuted, 3 contrast-squeezed.
- "P(Y)": cluster k draws 85 % of its samples from its digits {0,1,2}, {3,4,5}, {6,7}, {8,9}
  and 15 % from the rest (overlapping label distributions; embedded.py's are disjoint).
- "P(Y|X)": cluster k relabels digit d by identity, d xor 1, 9 - d, (d + 5) mod 10.
- "P(X|Y)": cluster 1 rotates digits 0-4, 2 permutes the pixels of 5-9, 3 squeezes the
  contrast of the even digits.
- "iid": 12 clients of one distribution (one cluster), sizes as above.

The bench (`bench/run.py --federations`) runs the full ten-seed sweep on the same builder.
"""

from __future__ import annotations

import numpy as np
from sklearn.datasets import load_digits

SHIFTS = ("P(X)", "P(Y)", "P(Y|X)", "P(X|Y)", "iid")
N_CLIENTS, N_CLUSTERS, N_TEST = 12, 4, 30
SIZES = (40, 220)
PERMUTATION = np.random.default_rng(77).permutation(64)
LABEL_GROUPS = ([0, 1, 2], [3, 4, 5], [6, 7], [8, 9])
RELABEL = (np.arange(10), np.arange(10) ^ 1, 9 - np.arange(10), (np.arange(10) + 5) % 10)


def _rotate(x: np.ndarray) -> np.ndarray:
    return np.rot90(x.reshape(-1, 8, 8), 1, axes=(1, 2)).reshape(-1, 64)


def _squeeze(x: np.ndarray) -> np.ndarray:
    return 0.25 + 0.5 * x


def _transform(x: np.ndarray, y: np.ndarray, shift: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = x.copy(), y.copy()
    if shift == "P(X)":
        x = [x, _rotate(x), x[:, PERMUTATION], _squeeze(x)][k]
    elif shift == "P(Y|X)":
        y = RELABEL[k][y]
    elif shift == "P(X|Y)":
        if k == 1:
            m = y < 5
            x[m] = _rotate(x[m])
        elif k == 2:
            m = y >= 5
            x[m] = x[m][:, PERMUTATION]
        elif k == 3:
            m = y % 2 == 0
            x[m] = _squeeze(x[m])
    return np.ascontiguousarray(x, dtype=np.float32), y


def federation(shift: str, seed: int):
    """(train, test, clusters): per-client (X, y) pairs and the hidden cluster of each client."""
    digits = load_digits()
    x_all, y_all = digits.data.astype(np.float32) / 16.0, digits.target.astype(np.int64)
    rng = np.random.default_rng(1000 + seed)
    clusters = np.zeros(N_CLIENTS, int) if shift == "iid" else np.arange(N_CLIENTS) % N_CLUSTERS
    sizes = rng.integers(SIZES[0], SIZES[1] + 1, N_CLIENTS)
    train, test = [], []
    for k, n in zip(clusters, sizes, strict=True):
        p = None
        if shift == "P(Y)":
            mine = np.isin(y_all, LABEL_GROUPS[k])
            p = np.where(mine, 0.85 / mine.sum(), 0.15 / (~mine).sum())
        idx = rng.choice(len(y_all), n + N_TEST, replace=False, p=p)
        x, y = _transform(x_all[idx], y_all[idx], shift, int(k))
        train.append((x[:n], y[:n]))
        test.append((x[n:], y[n:]))
    return train, test, clusters
