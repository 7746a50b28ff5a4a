"""The embedded default, shared by demo.py and bench/run.py: scikit-learn's digits (1000 train,
100 validation, 100 test), an MLP 64-256-256-10, full-data checkpoints, and the ground truth of
the LDS — the test margins of models trained on random 50% subsets (cached after the first run
under ~/.cache/paperplug/grass)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from paperplug import seeded_torch
from paperplug.extras import requires_extra
from paperplug_grass.gradients import target_values


@dataclass
class Digits:
    X: np.ndarray
    y: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def digits(seed: int = 0) -> Digits:
    with requires_extra("paperplug-grass", "demo", "the embedded default"):
        from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(X))
    X = (X / 16.0).astype(np.float32)
    a, b, c = order[:1000], order[1000:1100], order[1100:1200]
    return Digits(X[a], y[a], X[b], y[b], X[c], y[c])


def mlp(seed: int = 0, width: int = 256) -> nn.Module:
    with seeded_torch(seed):
        return nn.Sequential(
            nn.Linear(64, width),
            nn.ReLU(),
            nn.Linear(width, width),
            nn.ReLU(),
            nn.Linear(width, 10),
        )


def train(
    X: np.ndarray, y: np.ndarray, seed: int = 0, epochs: int = 20, width: int = 256
) -> nn.Module:
    """Adam 1e-3, batch 64, `epochs` passes; seeded, the caller's generator untouched."""
    model = mlp(seed, width)
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.long)
    gen = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        for idx in torch.randperm(len(Xt), generator=gen).split(64):
            loss = nn.functional.cross_entropy(model(Xt[idx]), yt[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval()


def ground_truth(
    data: Digits,
    n_models: int = 100,
    seed: int = 0,
    cache: bool = True,
    width: int = 256,
    epochs: int = 20,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(subsets (M, n_train) bool, validation margins (M, n_val), test margins (M, n_test)) of
    M models each trained on a random half of the training set."""
    root = Path(os.environ.get("PAPERPLUG_CACHE", Path.home() / ".cache" / "paperplug")) / "grass"
    path = root / f"digits-lds-M{n_models}-seed{seed}-w{width}-e{epochs}.npz"
    if cache and path.exists():
        saved = np.load(path)
        return saved["subsets"], saved["val"], saved["test"]
    rng = np.random.default_rng(seed + 1000)
    n = len(data.X)
    subsets = np.zeros((n_models, n), bool)
    val, test = [], []
    for m in range(n_models):
        subsets[m, rng.choice(n, n // 2, replace=False)] = True
        model = train(data.X[subsets[m]], data.y[subsets[m]], 10_000 + m, epochs, width)
        with torch.no_grad():
            for X, y, out in ((data.X_val, data.y_val, val), (data.X_test, data.y_test, test)):
                logits = model(torch.as_tensor(X))
                out.append(target_values(logits, torch.as_tensor(y, dtype=torch.long)).numpy())
    result = subsets, np.array(val), np.array(test)
    if cache:
        root.mkdir(parents=True, exist_ok=True)
        np.savez(path, subsets=result[0], val=result[1], test=result[2])
    return result
