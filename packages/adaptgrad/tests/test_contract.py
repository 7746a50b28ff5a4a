"""The role contract from paperplug.testing, on a small case."""

import pytest

from paperplug.testing import ExplainerContract


class TestContract(ExplainerContract):
    component = "adaptgrad"

    @pytest.fixture
    def explain_case(self):
        raise NotImplementedError("TODO: (model, inputs, kwargs)")
