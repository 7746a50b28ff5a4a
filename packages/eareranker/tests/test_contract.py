"""The Trainer contract from paperplug.testing, on planted embeddings."""

import numpy as np
import pytest

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "eareranker"
    params = {"n_expand": 2, "d_model": 16, "layers": 1, "heads": 2, "epochs": 2, "progress": False}

    @pytest.fixture
    def fit_case(self):
        rng = np.random.default_rng(0)
        q, d = rng.normal(size=(64, 8)), rng.normal(size=(64, 8))
        return (q, d, rng.random(64)), {}
