"""The Explainer contract from paperplug.testing, on planted representations."""

import pytest
from paperplug_rdx.embedded import planted_mixture

from paperplug.testing import ExplainerContract


class TestContract(ExplainerContract):
    component = "rdx"

    @pytest.fixture
    def explain_case(self):
        R0, R1, _ = planted_mixture(120, seed=0)
        return None, (R0, R1), {}
