"""The embedded default, shared by demo.py and bench/run.py: scikit-learn's digits (offline)
split over 12 training clients in 3 hidden clusters plus 6 unseen clients (2 per cluster),
under one of the four shifts of the paper (§4), and a 64-64-10 MLP whose hidden ReLU is the
latent layer.

- P(X) (feature shift): cluster 0 as is, 1 mirrored left-right, 2 intensity-inverted.
- P(Y) (label shift): cluster 0 sees digits 0-3, 1 sees 4-6, 2 sees 7-9.
- P(Y|X) (concept shift, same X): cluster k labels digit d as (d + 3k) mod 10.
- P(X|Y) (concept shift, same Y): cluster 1 mirrors the even digits, cluster 2 inverts the odd.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from torch import nn

SHIFTS = ("P(X)", "P(Y)", "P(Y|X)", "P(X|Y)")
LATENT_LAYER = "latent"
N_CLASSES = 10


def make_mlp() -> nn.Module:
    """64 -> 64 -> 10 MLP; the ReLU named "latent" gives FLUX its 64-d latents."""
    return nn.Sequential(
        OrderedDict(
            [
                ("fc1", nn.Linear(64, 64)),
                (LATENT_LAYER, nn.ReLU()),
                ("head", nn.Linear(64, N_CLASSES)),
            ]
        )
    )


@dataclass(frozen=True)
class FederatedSplit:
    """Clients of one shift: train/test (X, y) per known client, (X, y) per unseen client and
    the hidden cluster of each."""

    shift: str
    train: list[tuple[np.ndarray, np.ndarray]]
    test: list[tuple[np.ndarray, np.ndarray]]
    unseen: list[tuple[np.ndarray, np.ndarray]]
    clusters: np.ndarray
    unseen_clusters: np.ndarray


def _transform(x: np.ndarray, y: np.ndarray, shift: str, k: int) -> tuple[np.ndarray, np.ndarray]:
    img = x.reshape(-1, 8, 8).copy()
    y = y.copy()
    if shift == "P(X)":
        if k == 1:
            img = img[:, :, ::-1]
        elif k == 2:
            img = 1.0 - img
    elif shift == "P(Y|X)":
        y = (y + 3 * k) % N_CLASSES
    elif shift == "P(X|Y)":
        if k == 1:
            even = y % 2 == 0
            img[even] = img[even][:, :, ::-1]
        elif k == 2:
            odd = y % 2 == 1
            img[odd] = 1.0 - img[odd]
    return np.ascontiguousarray(img.reshape(-1, 64), dtype=np.float32), y.astype(np.int64)


def load_clients(
    shift: str,
    seed: int = 0,
    *,
    clients_per_cluster: int = 4,
    unseen_per_cluster: int = 2,
    n_train: int = 150,
    n_test: int = 30,
    n_unseen: int = 40,
) -> FederatedSplit:
    """The clients of one shift type. Pixels are scaled to [0, 1]; each client draws its own
    samples without replacement from its cluster's pool (train and test disjoint; clients, and
    clusters, may share images)."""
    if shift not in SHIFTS:
        raise ValueError(f"shift must be one of {SHIFTS}, got {shift!r}")
    from sklearn.datasets import load_digits

    digits = load_digits()
    x_all, y_all = digits.data.astype(np.float32) / 16.0, digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    label_sets = {0: range(0, 4), 1: range(4, 7), 2: range(7, 10)}
    train, test, unseen, clusters, unseen_clusters = [], [], [], [], []
    for k in range(3):
        pool = (
            np.flatnonzero(np.isin(y_all, list(label_sets[k])))
            if shift == "P(Y)"
            else np.arange(len(y_all))
        )
        if n_train + n_test > len(pool) or n_unseen > len(pool):
            raise ValueError(
                f"cluster {k}'s pool holds {len(pool)} samples; a client needs {n_train + n_test}"
            )
        for _ in range(clients_per_cluster):
            part = rng.choice(pool, size=n_train + n_test, replace=False)
            train.append(_transform(x_all[part[:n_train]], y_all[part[:n_train]], shift, k))
            test.append(_transform(x_all[part[n_train:]], y_all[part[n_train:]], shift, k))
            clusters.append(k)
        for _ in range(unseen_per_cluster):
            part = rng.choice(pool, size=n_unseen, replace=False)
            unseen.append(_transform(x_all[part], y_all[part], shift, k))
            unseen_clusters.append(k)
    return FederatedSplit(shift, train, test, unseen, np.array(clusters), np.array(unseen_clusters))


ROUNDS = 20
# Local training of the embedded default. The paper's lr 0.005 with batch 64 gives 150-sample
# clients 3 steps an epoch and no learning in 20 rounds; lr 0.05 with batch 16 does (README,
# "Choices"). Warm-up is capped at 8 rounds: 8 global + 12 clustered rounds.
FLUX_KW = {"lr": 0.05, "batch_size": 16, "local_epochs": 2, "momentum": 0.9, "max_warmup_rounds": 8}
