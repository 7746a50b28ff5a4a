"""The role contracts from paperplug.testing: the Trainer and the output-stage Defense, each
with the bad-input battery (its parameters' invalid values in `bad_params`)."""

from typing import ClassVar

import pytest
from paperplug_scm import make_fineharm_like, response_text

from paperplug.testing import DefenseContract, TrainerContract

# the stopping rule's parameters, taken by the trainer and the monitor alike
RULE_BAD: dict[str, list] = {"theta": [0, 1.5, "0.5"], "k": [0, 2.5], "window": [0, 2.5]}


class TestTrainerContract(TrainerContract):
    component = "scm"
    params: ClassVar[dict] = {
        "epochs": 1,
        "progress": False,
        "tiny": {"hidden_size": 32, "num_layers": 1},
    }
    bad_params: ClassVar[dict] = {
        **RULE_BAD,
        "backbone": [3],
        "alpha": [-0.1, 1.5],
        "gamma": [-1.0],
        "reduce": ["sum"],
        "head": ["both"],
        "learning_rate": [0.0, -1e-3],
        "lr_decay": [0.0, 1.5],
        "epochs": [0, 1.5],
        "batch_size": [0],
        "grad_accum": [0],
        "weight_decay": [-0.01],
        "max_length": [0],
        "sep": [1],
        "thetas": [[], [0.0], [1.5]],
        "ks": [[], [0], [2.5]],
        "long_replies": [-0.5, float("nan")],
        "long_words": [0, 2.5],
        "long_harmful": [-0.1, 1.5],
        "tiny": ["small"],
        "seed": [1.5],
        "device": ["no-such-device"],
        "validation": ["texts"],
        "frame": [0, 2.5, "longest"],
        "val_long": [-1, 2.5],
        "val_words": [0, 2.5],
    }
    reasons: ClassVar[dict] = {"tokenizer": "a Hugging Face tokenizer (None: the backbone's)"}

    @pytest.fixture
    def fit_case(self):
        return (make_fineharm_like(24, seed=4),), {}


class TestDefenseContract(DefenseContract):
    component = "scm"
    bad_params: ClassVar[dict] = {
        **RULE_BAD,
        "path": [3],
        "rule": ["greedy"],
        "head": ["both"],
        "max_hold": [0, 2.5],
        "retokenise": ["never"],
        "max_sessions": [0],
        "batch": ["yes", 1],
    }

    @pytest.fixture
    def instance(self, installed_pm, checkpoint):
        self.params = {"path": checkpoint}  # every instance the battery builds reads it
        return self.make_instance(installed_pm)

    @pytest.fixture
    def defense_case(self, splits):
        ex = next(e for e in splits[2] if any(e["sentence_labels"]))
        return response_text(ex), {"prompt": ex["prompt"], "final": True}
