"""The role contract from paperplug.testing, on a small case."""

import numpy as np
import pytest
from paperplug_semicentroid import SemiCentroidInstance

from paperplug.testing import SolverContract


class TestContract(SolverContract):
    component = "semicentroid"
    params = {"mcc": "exact"}
    bad_params = {
        "mcc": ["ball"],
        "audit": ["full"],
        "audit_time_limit": [-1.0],
        "seed": [0.5],
        "n_clusters": [0],
        "lam": [1.5, -0.1],
        "metric": [3],
        "metric_m": [3],
        "centers": [np.array([["a"]])],
    }

    @pytest.fixture
    def solve_case(self):
        X = np.random.default_rng(0).normal(size=(12, 3))
        return SemiCentroidInstance.from_points(X, 3, lam=0.5), {}
