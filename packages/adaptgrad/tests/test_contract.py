"""The Explainer contract from paperplug.testing, for both registered components."""

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
