"""The Explainer contract from paperplug.testing, for every registered component."""

from typing import ClassVar

import pytest
from paperplug_adaptgrad import WeightNoise

from paperplug.testing import ExplainerContract


class TestAdaptGradContract(ExplainerContract):
    component = "adaptgrad"
    params: ClassVar[dict] = {"n_samples": 8}
    bad_params: ClassVar[dict] = {
        "c": [0.0, 1.5],
        "n_samples": [-1, 2.5],
        "batch_size": [0],
        "seed": [1.5],
        "base": ["nope"],
        "target": [99, -1, 0.5],
        "bounds": [(1.0, 0.0), ("a", 1.0)],
        "channel_dim": [7],
        "weight_noise": [WeightNoise(std=-1.0), WeightNoise(n_models=0)],
    }
    reasons: ClassVar[dict] = {}

    @pytest.fixture
    def explain_case(self, cnn, digits_like):
        return cnn, digits_like, {"target": 1}


class TestSmoothGradContract(TestAdaptGradContract):
    component = "smoothgrad"
    bad_params: ClassVar[dict] = {
        **TestAdaptGradContract.bad_params,
        "alpha": [-0.1, "big"],
    }
    bad_params.pop("c")


class TestNoiseGradContract(TestAdaptGradContract):
    component = "noisegrad"
    params: ClassVar[dict] = {"n_models": 4}
    bad_params: ClassVar[dict] = {
        **TestAdaptGradContract.bad_params,
        "n_models": [0, 1.5],
        "std": [-0.1],
        "skip": ["classifier", [3]],
    }
    for name in ("c", "n_samples", "channel_dim", "weight_noise"):  # no input noise
        bad_params.pop(name)


class TestNoiseGradPlusPlusContract(TestAdaptGradContract):
    component = "noisegrad_pp"
    params: ClassVar[dict] = {"n_models": 3, "n_samples": 3}
    bad_params: ClassVar[dict] = {
        **TestAdaptGradContract.bad_params,
        "n_models": [0],
        "std": [-0.1],
        "alpha": [-1.0],
        "skip": ["classifier"],
    }
    for name in ("c", "weight_noise"):  # its weight noise is its own n_models and std
        bad_params.pop(name)
