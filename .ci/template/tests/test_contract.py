"""The role contract from paperplug.testing, on a small case: the role's checks and the
bad-input battery (NaN, inf, empty, wrong dtype, width and type of every argument)."""

from typing import ClassVar

import pytest

from paperplug.testing import ExplainerContract


class TestContract(ExplainerContract):
    component = "__slug__"
    # TODO: invalid values of the component's parameters; each must raise naming it
    bad_params: ClassVar[dict] = {}
    # a parameter (number, string or None) with no bad value to list, each with why
    reasons: ClassVar[dict] = {}
    # variants deliberately accepted, each with why (keep this rare)
    accepts: ClassVar[dict] = {}

    @pytest.fixture
    def explain_case(self):
        raise NotImplementedError("TODO: (model, inputs, kwargs)")
