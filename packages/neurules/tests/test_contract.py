"""The role contract from paperplug.testing, on a small case: registered, builds through
paperplug.load, fit returns self with a history, caller's data and global RNG state untouched."""

import numpy as np
import pytest
from paperplug_neurules import planted_rule_data

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "neurules"
    params = {"n_epochs": 30, "batch_size": 200, "random_state": 0}
    bad_params = {
        "n_epochs": [0, 2.5],
        "lr": [0.0, -1.0],
        "min_support": [1.5],
        "anneal_factor": [0.5],
        "freeze_heads": [-0.1],
        "init_quantile": [-0.1, 0.7],
        "class_weight": ["auto"],
        "n_rules": [0, 2.5],
        "batch_size": [0],
        "lambda_support": [-1.0],
        "predicate_temp": [0.0],
        "selector_temp": [0.0],
        "eps": [-1.0],
        "head_init": [-1.0],
        "random_state": [-1, 2.5],
        "sample_weight": [np.ones(3), np.full(200, -1.0)],  # 3 weights for 200 rows; negative
        "feature_names": [["a"]],  # one name for two features
    }

    @pytest.fixture
    def fit_case(self):
        X, y = planted_rule_data(n=200, seed=3)
        return (X, y), {}


class TestContractWithoutSeed(TestContract):
    """random_state=None draws fresh entropy, never from numpy's global generator."""

    params = {"n_epochs": 5, "batch_size": 200, "random_state": None}
