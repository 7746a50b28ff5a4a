"""The Trainer contract from paperplug.testing, on a small case."""

import numpy as np
import pytest

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "prime"
    params = {"steps": 3, "hidden": 16, "progress": False}

    @pytest.fixture
    def fit_case(self):
        return (np.random.default_rng(0).integers(0, 5, size=(20, 6)),), {}
