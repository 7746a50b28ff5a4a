"""The Trainer contract from paperplug.testing, on a tiny federation."""

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

    @pytest.fixture
    def fit_case(self):
        train, test = tiny_clients(4)
        return (train, test), {}


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
    # 4 clients < 8: the logged silhouette k-means fallback ran
    assert flux.clustering_.method == "silhouette-kmeans"
