"""The Explainer contract from paperplug.testing, for every registered component."""

from typing import ClassVar

import pytest

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
    }

    @pytest.fixture
    def explain_case(self, cnn, digits_like):
        return cnn, digits_like, {"target": 1}


class TestSmoothGradContract(TestAdaptGradContract):
    component = "smoothgrad"
    bad_params: ClassVar[dict] = {"alpha": [-0.1, "big"], "n_samples": [-1], "target": [99]}


class TestNoiseGradContract(TestAdaptGradContract):
    component = "noisegrad"
    params: ClassVar[dict] = {"n_models": 4}
    bad_params: ClassVar[dict] = {"n_models": [0, 1.5], "std": [-0.1], "target": [99]}


class TestNoiseGradPlusPlusContract(TestAdaptGradContract):
    component = "noisegrad_pp"
    params: ClassVar[dict] = {"n_models": 3, "n_samples": 3}
    bad_params: ClassVar[dict] = {"n_models": [0], "std": [-0.1], "alpha": [-1.0], "target": [99]}
