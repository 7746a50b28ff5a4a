"""The Explainer contract from paperplug.testing, for each method, on planted activations."""

from typing import ClassVar

import numpy as np
import pytest

from paperplug.testing import ExplainerContract

#: with model=None the inputs are activations: any number of neurons is valid (no model to fit)
ANY_WIDTH = {"inputs:width": "activations (tokens, neurons) of any width are valid: model=None"}


def planted_activations():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(300, 6))
    pos = np.arange(5, 300, 15)
    H[pos, :3] = 2.0
    return H, pos


class TestContractPA(ExplainerContract):
    component = "chunking"
    params: ClassVar[dict] = {"method": "pa"}
    bad_params: ClassVar[dict] = {
        "method": ["sae"],
        "n_train": [0, 2.5, 100],  # 100 occurrences of 20
        "offset": [3, 0.5],
        "taus": [[], [1.0, -1.0], 3.0],
        "threshold": ["loo"],
        "fpr": [1.0, -0.1],
        "layer": [2.5],
    }
    accepts: ClassVar[dict] = ANY_WIDTH

    @pytest.fixture
    def explain_case(self):
        H, pos = planted_activations()
        return None, H, {"target": pos}


class TestContractUCD(ExplainerContract):
    component = "chunking"
    params: ClassVar[dict] = {"method": "ucd", "n_chunks": 4, "epochs": 3}
    bad_params: ClassVar[dict] = {
        "n_chunks": [0, 2.5, 1000],  # 1000 chunks of 300 activations
        "epochs": [0],
        "lr": [0.0, "fast"],
        "batch_size": [0],
        "method": ["sae"],
        "layer": [2.5],
        "target": [[0, 1]],  # an unsupervised method reads none
    }
    accepts: ClassVar[dict] = ANY_WIDTH

    @pytest.fixture
    def explain_case(self):
        return None, planted_activations()[0], {}


class TestContractDSC(ExplainerContract):
    component = "chunking"
    params: ClassVar[dict] = {"method": "dsc", "n_bins": 3}
    bad_params: ClassVar[dict] = {
        "n_bins": [0, 2.5],
        "n_iter": [-1],
        "top_k": [0],
        "min_freq": [0],
        "max_neurons": [0, 4],  # 4 < the 6 neurons
        "target": [[0, 1]],  # two symbols for 300 tokens
        "method": ["sae"],
        "layer": [2.5],
    }
    accepts: ClassVar[dict] = ANY_WIDTH

    @pytest.fixture
    def explain_case(self):
        H, pos = planted_activations()
        return None, H, {"target": [int(p in set(pos.tolist())) for p in range(len(H))]}
