"""The Trainer contract from paperplug.testing on a tiny federation, with the bad-input battery on
`fit`, on the calls of a fitted FLUX (`assign`, `describe`, `predict`, `score`,
`client_accuracy`) and before fit."""

import pytest
from helpers import tiny_clients
from paperplug_flux.embedded import LATENT_LAYER, make_mlp

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "flux"
    params = {
        "model_fn": make_mlp,
        "latent_layer": LATENT_LAYER,
        "n_classes": 10,
        "rounds": 3,
        "max_warmup_rounds": 1,
    }
    bad_params = {
        "model_fn": [42],
        "latent_layer": ["no-such-layer", 3],
        "n_classes": [1, 2.5],
        "rounds": [0, 1, 2.5],  # one round leaves none to cluster in
        "max_warmup_rounds": [0, 1.5],
        "plateau_tol": [-0.1],
        "local_epochs": [0],
        "lr": [0.0, -1.0, float("nan")],
        "momentum": [-0.1, 1.0],
        "batch_size": [0],
        "clustering": ["dbscan"],
        "threshold": [0.0, -1.0],
        "min_count": [1],
        "min_samples": [1],
        "eps_curve": ["elbow"],
        "min_knee": [1.0, -0.1],
        "min_clients_for_knee": [1],
        "noise_scale": [-1.0],
        "projection_seed": [-1],
        "clusters": [[0, 1]],
        "seed": [-1, 1.5],
    }
    call_bad_params = {"cluster": [-1, 99, 0.5]}  # predict's and score's: 99 clusters of 4 clients

    @pytest.fixture
    def fit_case(self):
        train, test = tiny_clients(4)
        return (train, test), {}

    def fitted_calls(self, case):
        (_, test), _ = case
        x, y = test[0]
        return {
            "assign": ((x,), {}),
            "describe": ((x,), {}),
            "predict": ((x,), {}),
            "score": ((x, y), {}),
            "client_accuracy": ((test,), {}),
        }

    def test_the_battery_covers_the_fitted_calls(self, installed_pm, instance, fit_case):
        keys = {v.key for v in self.battery(installed_pm, instance, fit_case)}
        for key in ("assign:X:width", "assign:not-fitted", "predict:X:nan", "score:y:dtype",
                    "client_accuracy:not-fitted", "lr=nan", "clustering='dbscan'",
                    # nested data: each client's (X, y) pair, every client after the first
                    "train_sets[0][1]:dtype", "train_sets[3][0]:nan", "test_sets[2][0]:nan",
                    "client_accuracy:test_sets[1][0]:nan"):  # fmt: skip
            assert key in keys, key


def test_fitted_attributes_after_contract_fit():
    import paperplug

    train, test = tiny_clients(4)
    flux = paperplug.load(
        "trainer",
        "flux",
        model_fn=make_mlp,
        latent_layer=LATENT_LAYER,
        n_classes=10,
        rounds=3,
        max_warmup_rounds=1,
    ).fit(train, test)
    # warm-up of 1 round, clustering before round 2, 3 rounds recorded
    assert [h["phase"] for h in flux.history_] == ["warmup", "clustered", "clustered"]
    assert flux.clustered_at_ == 2 and len(flux.labels_) == 4
    assert flux.descriptors_.shape == (4, 2 * 10 * 11)
    assert flux.counts_.sum(axis=1).tolist() == [len(y) for _, y in train]
    # the decisions of the round they were taken in: the warm-up cap, then the clustering
    assert flux.history_[0]["decision"]["outcome"] == "stop: at the cap, max_rounds=1"
    assert flux.history_[1]["decision"]["statistic"] == "noise ratio"
    assert "decision" not in flux.history_[2]
