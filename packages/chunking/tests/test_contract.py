"""The Explainer contract from paperplug.testing, for each method, on planted activations."""

import numpy as np
import pytest

from paperplug.testing import ExplainerContract


def planted_activations():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(300, 6))
    pos = np.arange(5, 300, 15)
    H[pos, :3] = 2.0
    return H, pos


class TestContractPA(ExplainerContract):
    component = "chunking"
    params = {"method": "pa"}

    @pytest.fixture
    def explain_case(self):
        H, pos = planted_activations()
        return None, H, {"target": pos}


class TestContractUCD(ExplainerContract):
    component = "chunking"
    params = {"method": "ucd", "n_chunks": 4, "epochs": 3}

    @pytest.fixture
    def explain_case(self):
        return None, planted_activations()[0], {}


class TestContractDSC(ExplainerContract):
    component = "chunking"
    params = {"method": "dsc", "n_bins": 3}

    @pytest.fixture
    def explain_case(self):
        H, pos = planted_activations()
        return None, H, {"target": [int(p in set(pos.tolist())) for p in range(len(H))]}
