"""The Solver and Trainer contracts from paperplug.testing, on small cases."""

import numpy as np
import pytest

from paperplug.testing import SolverContract, TrainerContract


class TestSolver(SolverContract):
    component = "kgram"
    bad_params = {"seed": [-1, 0.5]}

    @pytest.fixture
    def solve_case(self):
        x = np.random.default_rng(0).integers(0, 3, size=(2, 40))
        return {"vocab_size": 3, "k": 2, "sequences": x}, {}

    def test_seeded(self, instance, solve_case):  # the value is a module: compare its output
        problem, kw = solve_case
        a, b = instance.solve(problem, seed=3, **kw), instance.solve(problem, seed=3, **kw)
        assert a.objective == b.objective <= 1e-8


class TestTrainer(TrainerContract):
    component = "kgram"
    params = {
        "steps": 3,
        "seq_len": 12,
        "d_model": 8,
        "eval_sequences": 4,
        "record_every": 1,
        "progress": False,
    }

    @pytest.fixture
    def fit_case(self):
        return (), {}
