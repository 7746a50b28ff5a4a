"""The Explainer contract from paperplug.testing, on a small case."""

from typing import ClassVar

import numpy as np
import pytest
import torch

from paperplug import seeded_torch
from paperplug.testing import ExplainerContract


class TestContract(ExplainerContract):
    component = "grass"
    params: ClassVar[dict] = {"kind": "factgrass", "k": 16}
    bad_params: ClassVar[dict] = {
        "kind": ["fjlt"],
        "k": [0, 2.5],
        "blowup": [0, 1.5],
        "seed": [-1],
        "target": ["accuracy"],
        "damping": [0.0, -1.0],
        "trak_weighting": ["yes"],
        "preconditioner": ["diag"],
        "layers": [["1"], "0", ["missing"]],  # a ReLU, a bare string, no such module
        "batch_size": [0],
    }

    @pytest.fixture
    def explain_case(self):
        with seeded_torch(0):
            model = torch.nn.Sequential(
                torch.nn.Linear(5, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)
            )
        rng = np.random.default_rng(0)
        X, y = rng.normal(size=(20, 5)).astype(np.float32), rng.integers(0, 3, 20)
        return model, (X[:4], y[:4]), {"train": (X, y)}
