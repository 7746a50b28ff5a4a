"""Small federated cases shared by the tests (kept cheap: the whole suite runs on one thread)."""

from __future__ import annotations

import numpy as np
import torch
from paperplug_flux.embedded import load_clients, make_mlp

SMALL = {"n_train": 100, "n_test": 30, "n_unseen": 40}
# short schedule of the embedded default's local training (lr 0.05, batch 16)
LOCAL = {"lr": 0.05, "batch_size": 16, "local_epochs": 2, "momentum": 0.9}


def small_split(shift: str, seed: int):
    return load_clients(shift, seed, **SMALL)


def tiny_clients(n_clients: int = 4, n: int = 24, seed: int = 0):
    """A few tiny digits clients (for the contract and input checks)."""
    split = load_clients(
        "P(X)",
        seed,
        clients_per_cluster=max(1, n_clients // 3 + 1),
        n_train=n,
        n_test=8,
        n_unseen=8,
    )
    return split.train[:n_clients], split.test[:n_clients]


def assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k].numpy(), b[k].numpy()), k


class Boom(torch.nn.Module):
    """The embedded MLP whose training step raises: a client that fails (importable by name, so
    the simulation engine's and the SuperNodes' processes build it too)."""

    def __init__(self):
        super().__init__()
        self.net = make_mlp()

    def forward(self, x):
        if self.training:
            raise RuntimeError("boom: client data is corrupt")
        return self.net(x)
