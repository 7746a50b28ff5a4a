"""The Explainer contract from paperplug.testing, on a small dual encoder."""

import numpy as np
import pytest

from paperplug.testing import ExplainerContract

W_A = np.linspace(-1, 1, 3 * 4).reshape(3, 4)
W_B = np.cos(np.arange(4 * 4)).reshape(4, 4)


def encode_a(mask):
    return np.tanh(mask @ W_A + 0.3)


def encode_b(mask):
    return np.tanh(mask @ W_B + 0.1)


class TestContract(ExplainerContract):
    component = "fixlip"
    params = {"budget_a": 8, "budget_b": 14, "random_state": 3}
    bad_params = {
        "max_memory_gib": [0, -1.0],
        "interactions": ["pairs"],
        "p": [0.0, 1.5],
        "max_order": [3, 0],
        "mode": ["owen"],
        "budget": [0, 2.5],
        "budget_a": [0],
        "budget_b": [-1],
        "random_state": [-1],
        "target": ["a"],
    }

    @pytest.fixture
    def explain_case(self):
        return (encode_a, encode_b), (3, 4), {}
