"""The Trainer contract from paperplug.testing, on a small case."""

import numpy as np
import pytest

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "nesy"
    params = {"epochs": 2, "hidden": 8, "progress": False, "test_mitigation": "carot"}
    bad_params = {
        "train_mitigation": ["ot"],
        "epochs": [0, 1.5],
        "lr": [0.0],
        "val_fraction": [1.0, -0.1],
        "marginal": ["gold", [0.5, 0.5], "naive"],
        "naive_gamma": [(0.05,), (0.05, 1.5)],
        "naive_epochs": [-1],
        "test_prior": ["balanced"],
        "lp_scope": ["epoch"],
        "sigma": ["no-such-function"],
        "M": [0, 2.5],
        "n_classes": [1],
        "test_mitigation": ["ot"],
        "model": [3],
        "hidden": [0],
        "warmup_epochs": [-1],
        "batch_size": [0],
        "seed": [-1],
        "device": ["no-such-device"],
    }

    @pytest.fixture
    def fit_case(self):
        rng = np.random.default_rng(0)
        bags = rng.normal(size=(40, 3, 5)).astype(np.float32)
        return (bags, rng.integers(0, 10, size=40)), {}
