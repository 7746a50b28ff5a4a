"""The role contracts from paperplug.testing: the decode-stage Defense and the Solver."""

from dataclasses import dataclass

import numpy as np
import pytest

from paperplug.testing import DefenseContract, SolverContract


@dataclass
class CannedModel:
    """A ChatModel (a dataclass, so the contract can check it was not mutated)."""

    reply: str = "Water is wet. The sky is blue."

    def chat(self, messages, **kw):
        return self.reply


def keyword_scorer(prompt, prefix, claim):
    return float("bomb" in claim)


class TestDefenseContract(DefenseContract):
    component = "csd"
    params = {"scorer": keyword_scorer, "tau": 0.5}
    bad_params = {
        "tau": [-0.1, 1.5],
        "budget": [-1, 1.5],
        "depth": [-1],
        "min_tokens": [0],
        "max_claim_tokens": [0],
        "refusal": [3],
        "scorer": [3],
    }
    reasons = {"seed": "any int seeds the resampling"}

    @pytest.fixture
    def defense_case(self):
        return CannedModel(), None


class TestSolverContract(SolverContract):
    component = "csd"
    params = {"delta": 0.1}
    bad_params = {"delta": [0.0, 1.0], "method": ["wilson"], "seed": [0.5]}

    @pytest.fixture
    def solve_case(self):
        losses = (np.random.default_rng(0).random((80, 3)) < [0.0, 0.05, 0.4]).astype(float)
        return {"losses": losses, "taus": [0.2, 0.5, 0.8], "alpha": 0.2}, {}
