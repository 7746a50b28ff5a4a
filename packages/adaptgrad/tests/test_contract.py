"""The Explainer contract from paperplug.testing, for every registered component."""

from typing import ClassVar

import pytest

from paperplug.testing import ExplainerContract


class TestAdaptGradContract(ExplainerContract):
    component = "adaptgrad"
    params: ClassVar[dict] = {"n_samples": 8}

    @pytest.fixture
    def explain_case(self, cnn, digits_like):
        return cnn, digits_like, {"target": 1}


class TestSmoothGradContract(TestAdaptGradContract):
    component = "smoothgrad"


class TestNoiseGradContract(TestAdaptGradContract):
    component = "noisegrad"
    params: ClassVar[dict] = {"n_models": 4}


class TestNoiseGradPlusPlusContract(TestAdaptGradContract):
    component = "noisegrad_pp"
    params: ClassVar[dict] = {"n_models": 3, "n_samples": 3}
