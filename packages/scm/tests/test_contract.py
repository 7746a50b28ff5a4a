"""The role contracts from paperplug.testing: the Trainer and the output-stage Defense."""

import pytest
from paperplug_scm import make_fineharm_like, response_text

from paperplug.testing import DefenseContract, TrainerContract


class TestTrainerContract(TrainerContract):
    component = "scm"
    params = {"epochs": 1, "progress": False, "tiny": {"hidden_size": 32, "num_layers": 1}}

    @pytest.fixture
    def fit_case(self):
        return (make_fineharm_like(24, seed=4),), {}


class TestDefenseContract(DefenseContract):
    component = "scm"

    @pytest.fixture
    def instance(self, installed_pm, checkpoint):
        return installed_pm.load(self.role, self.component, path=checkpoint)

    @pytest.fixture
    def defense_case(self, splits):
        ex = next(e for e in splits[2] if any(e["sentence_labels"]))
        return response_text(ex), {"prompt": ex["prompt"], "final": True}
