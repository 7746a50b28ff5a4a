"""The Trainer contract from paperplug.testing on a small case, with the bad-input battery on
`fit` and on the calls of a fitted model (`nelbo`, `sample`), and before fit."""

import numpy as np
import pytest

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "prime"
    params = {"steps": 3, "hidden": 16, "progress": False}
    bad_params = {
        "vocab_size": [1, 2.5],
        "seq_len": [0, 2.5],
        "ell": [0, 1.5],
        "shuffle": ["yes"],
        "schedule": ["cosine"],
        "objective": ["elbo"],
        "backbone": ["rnn"],
        "d_embed": [0],
        "hidden": [0, 8.5],
        "layers": [0],
        "heads": [0],
        "dropout": [-0.1, 1.0],
        "steps": [0, 2.5],
        "batch_size": [0],
        "lr": [0.0, -1.0, float("nan")],
        "seed": [-1, 1.5],
        "device": ["no-such-device"],
    }
    # the fitted calls' own parameters (seed: the constructor takes one too)
    call_bad_params = {"n_t": [0, 2.5], "n": [0, 2.5], "nfe": [0, 1.5], "seed": [-1, 0.5]}

    @pytest.fixture
    def fit_case(self):
        return (np.random.default_rng(0).integers(0, 5, size=(20, 6)),), {}

    def fitted_calls(self, case):
        (tokens,), _ = case
        return {"nelbo": ((tokens,), {"n_t": 2, "seed": 0}), "sample": ((2,), {"nfe": 2})}

    def test_the_battery_covers_the_fitted_calls(self, installed_pm, instance, fit_case):
        keys = {v.key for v in self.battery(installed_pm, instance, fit_case)}
        for key in ("nelbo:n_t=0", "nelbo:tokens:width", "nelbo:not-fitted", "sample:n=0",
                    "sample:nfe=1.5", "sample:not-fitted", "ell=0", "tokens:dtype"):  # fmt: skip
            assert key in keys, key
