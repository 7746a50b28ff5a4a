"""The Solver and Trainer contracts from paperplug.testing, on small cases; the battery on the
public functions and modules a user calls directly."""

import numpy as np
import pytest
import torch
from paperplug_kgram import KGramTransformer, bayes_nll, conditional_kgram, verify
from paperplug_kgram.markov import predictor_nll

from paperplug.testing import SolverContract, TrainerContract, assert_rejects_bad_input


class TestSolver(SolverContract):
    component = "kgram"
    bad_params = {"seed": [-1, 0.5], "base": [2.0, -1.0], "alpha": [-0.5], "beta": [0.0, -1.0]}

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
    bad_params = {
        "n_layers": [0],
        "d_model": [0],
        "vocab_size": [1],
        "order": [0],
        "seq_len": [2],  # order + 2 = 3 is the shortest that trains
        "batch_size": [0],
        "steps": [0],
        "lr": [0.0, -1.0],
        "weight_decay": [-0.1],
        "alpha": [0.0],
        "record_every": [0],
        "eval_sequences": [0],
        "device": ["no-such-device"],
        "X": [np.full((4, 12), 3), np.zeros((4, 2), dtype=int)],  # an id >= vocab_size; too short
    }
    reasons = {"seed": "any int seeds numpy's generator"}

    @pytest.fixture
    def fit_case(self):
        return (), {}


X = np.random.default_rng(1).integers(0, 3, size=(2, 12))


def test_the_construction_rejects_what_it_cannot_build():
    """issue 48: KGramTransformer(3, k=0), k=2.5 and vocab_size=1 built a module silently."""
    assert_rejects_bad_input(
        KGramTransformer,
        (3, 2),
        {"max_len": 16},
        bad_params={
            "vocab_size": [1, 0],
            "k": [0, -1],
            "base": [2.0, 1.5],
            "alpha": [-0.1],
            "beta": [0.0],
            "max_len": [0],
            "dtype": ["float64"],
        },
    )


def test_the_estimators_and_scores_reject_bad_input():
    """issue 48: verify with a float for the construction raised an AttributeError."""
    model = KGramTransformer(3, 2, max_len=16)
    assert_rejects_bad_input(verify, (model, X), width=False)
    probs = conditional_kgram(X, 3, 2, alpha=1.0)
    assert_rejects_bad_input(predictor_nll, (X, probs), width=False)
    assert_rejects_bad_input(
        conditional_kgram,
        (X, 3, 2),
        bad_params={"vocab_size": [1, 2], "k": [0], "alpha": [-1.0]},
        width=False,
    )
    assert_rejects_bad_input(
        bayes_nll,
        (X, 3, 2),
        bad_params={"vocab_size": [1], "k": [0], "alpha": [-1.0]},
        width=False,
    )
    with pytest.raises(TypeError, match="model"):
        verify(1.5, X)
    with pytest.raises(ValueError, match="probs"):
        predictor_nll(X, probs[..., :2])
    assert predictor_nll(torch.as_tensor(X), probs) == pytest.approx(bayes_nll(X, 3, 2, 1.0))
