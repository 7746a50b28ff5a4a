"""The embedded default, shared by demo.py and bench/run.py: two small MLPs on scikit-learn's
digits, the second trained with every 5 relabelled as 3 (a planted difference: it has no
reason to separate 3 from 5), compared on 500 digits from {3, 5, 8}; and synthetic
representations with a planted merge, for the kNN mode at scale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug import seeded_torch
from paperplug.extras import requires_extra

CLASSES = (3, 5, 8)


@dataclass
class Pair:
    """Two representations of the same items, the items' labels and images."""

    R0: np.ndarray
    R1: np.ndarray
    labels: np.ndarray
    images: np.ndarray  # (n, 8, 8)
    models: tuple[Any, Any]  # torch modules
    inputs: np.ndarray  # (n, 64), what the models read


def _torch() -> Any:
    with requires_extra("paperplug-rdx", "demo", "the embedded models"):
        import torch
    return torch


def mlp() -> Any:
    """The embedded torch MLP: 64 → 128 → 32 → 10."""
    nn = _torch().nn
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32), nn.ReLU(), nn.Linear(32, 10)
    )


def train(X: np.ndarray, y: np.ndarray, seed: int, epochs: int = 30) -> Any:
    torch = _torch()
    nn = torch.nn
    with seeded_torch(seed):
        model = mlp()
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
        Xt, yt = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y)
        generator = torch.Generator().manual_seed(seed)
        for _ in range(epochs):
            for idx in torch.randperm(len(X), generator=generator).split(64):
                loss = nn.functional.cross_entropy(model(Xt[idx]), yt[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    return model.eval()


def digits_pair(seed: int = 0, n_items: int = 500) -> Pair:
    """Model 0 on the true labels, model 1 with 5 relabelled as 3; the 32-unit hidden layer
    ("3", the second ReLU) of each on `n_items` digits from {3, 5, 8}."""
    with requires_extra("paperplug-rdx", "demo", "the embedded default"):
        from sklearn.datasets import load_digits

    from paperplug_rdx.features import layer_features

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    model0 = train(X, y, seed)
    model1 = train(X, np.where(y == 5, 3, y), seed)
    rng = np.random.default_rng(seed)
    items = np.sort(rng.choice(np.flatnonzero(np.isin(y, CLASSES)), n_items, replace=False))
    R0, R1 = (layer_features(m, X[items].astype(np.float32), "3") for m in (model0, model1))
    return Pair(
        R0, R1, y[items], X[items].reshape(-1, 8, 8), (model0, model1), X[items].astype(np.float32)
    )


def planted_mixture(
    n: int, seed: int = 0, dim: int = 16, k: int = 10
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R0, R1, labels): k well separated Gaussian clusters in R0; R1 is the same points with
    clusters 3 and 5 moved onto one centre (the planted merge), rotated and rescaled."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=6.0, size=(k, dim))
    labels = rng.integers(0, k, size=n)
    noise = rng.normal(size=(n, dim))
    R0 = centres[labels] + noise
    merged = centres.copy()
    merged[5] = merged[3]
    rotation = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    R1 = (merged[labels] + noise) @ rotation * 2.0  # the same items, only 3 and 5 now together
    return R0, R1, labels
