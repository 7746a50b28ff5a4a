"""The Trainer contract from paperplug.testing on planted embeddings, with the bad-input battery
on `fit`, on the calls of a fitted reranker (`score`, `rerank`) and before fit."""

import numpy as np
import pytest

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "eareranker"
    params = {"n_expand": 2, "d_model": 16, "layers": 1, "heads": 2, "epochs": 2, "progress": False}
    bad_params = {
        "n_expand": [0, 2.5],
        "d_model": [0, 16.5],
        "layers": [0],
        "heads": [0, 3],  # 3 does not divide d_model = 16
        "causal": ["yes"],
        "readout": ["mean", "cls"],  # "cls" under the default causal mask sees nothing
        "interaction": [1],
        "cosine_residual": [1],
        "dropout": [-0.1, 1.0],
        "alpha": [-1.0, float("nan")],
        "rank_weight": [-0.5, float("inf")],
        "lr": [0.0, -1.0],
        "weight_decay": [-0.1],
        "epochs": [0, 2.5],
        "batch_size": [0],
        "patience": [0],
        "val_fraction": [1.0, -0.1],
        "seed": [-1, 1.5],
        "device": ["no-such-device"],
        "progress": ["no"],
        "groups": [np.arange(3)],  # 3 query ids for 64 pairs
    }
    # the fitted calls' own parameters
    call_bad_params = {"k": [0, -1, 2.5], "min_score": [-0.1, 1.5, float("nan")]}

    @pytest.fixture
    def fit_case(self):
        rng = np.random.default_rng(0)
        q, d = rng.normal(size=(64, 8)), rng.normal(size=(64, 8))
        return (q, d, rng.random(64)), {}

    def fitted_calls(self, case):
        (q, d, _), _ = case
        return {"score": ((q, d), {}), "rerank": ((q[0], d[:10]), {"k": 3, "min_score": 0.1})}

    def test_the_battery_covers_the_fitted_calls(self, installed_pm, instance, fit_case):
        keys = {v.key for v in self.battery(installed_pm, instance, fit_case)}
        for key in ("score:query_embeddings:width", "score:not-fitted", "rerank:k=-1",
                    "rerank:query_embedding:nan", "rerank:not-fitted", "heads=3", "n_expand=0",
                    "query_embeddings:nan", "labels:empty"):  # fmt: skip
            assert key in keys, key
