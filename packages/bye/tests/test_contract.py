"""The role contracts from paperplug.testing on small cases."""

import pytest
from paperplug_bye import EmbeddedConfig, embedded_victim

from paperplug.testing import AttackContract, DefenseContract


class TestDefense(DefenseContract):
    component = "bye"
    bad_params = {
        "variant": ["median"],
        "separation": [0.0, -1.0],
        "min_gap": [-0.1],
        "direction": ["high"],
        "test": ["t"],
        "batch_size": [0, 2.5],
        "min_weight": [-0.1, 1.5],
        "standardize": ["yes"],
        "template": ["no question here"],
        "model": [3],
        "processor": ["tokenizer"],
        "image_token_mask": [3],
    }
    reasons = {"seed": "any int seeds the mixture fits' generator"}

    @pytest.fixture
    def defense_case(self, poisoned_runs):
        run = poisoned_runs[0]
        return run.dataset[:100], {"model": run.model, "processor": run.victim.processor}


@pytest.fixture(scope="module")
def small_case():
    """A victim fine-tuned for 2 epochs on 40 rows: cheap, for the attack's contract."""
    config = EmbeddedConfig(n_test=20, epochs=2, seed=1)
    return embedded_victim(config), config.rows(40, 3)


class TestAttack(AttackContract):
    component = "mllm-backdoor-poisoning"
    params = {"trigger": "patch", "poison_rate": 0.2}
    bad_params = {
        "poison_rate": [-0.1, 1.5],
        "budget": [-1, 2.5],
        "trigger": ["no-such-trigger"],
        "target_answer": [3],
        "seed": [-1],
    }
    accepts = {  # images may have any size; the tiny victim's own processor refuses it
        "inputs[0]['image']:width": "the tiny victim's fixed-size processor: ValueError, images"
    }

    @pytest.fixture
    def attack_case(self, small_case):
        victim, rows = small_case
        return victim, rows, 5
