"""The role contracts from paperplug.testing, and `evaluate` end to end."""

import numpy as np
import pytest
from paperplug_bye import BYE, BackdoorPoisoning, Victim, synthetic_vqa, tiny_llava

import paperplug
from paperplug.testing import AttackContract, DefenseContract


class TestDefense(DefenseContract):
    component = "bye"
    params = {"variant": "robust"}

    @pytest.fixture
    def defense_case(self, seeded_run):
        context = {"model": seeded_run.model, "processor": seeded_run.victim.processor}
        return seeded_run.dataset[:120], context


@pytest.fixture(scope="module")
def small_victim():
    model, processor = tiny_llava(seed=1)
    return Victim(model, processor, synthetic_vqa(40, seed=9, kinds=("color",)), epochs=2)


class TestAttack(AttackContract):
    component = "mllm-backdoor-poisoning"
    params = {"trigger": "patch", "poison_rate": 0.2}

    @pytest.fixture
    def attack_case(self, small_victim):
        return small_victim, synthetic_vqa(60, seed=3, kinds=("color",)), 8


def test_run_reports_poisoned_indices_and_budget(small_victim):
    attack = BackdoorPoisoning("text", poison_rate=0.2, seed=1)
    rows = synthetic_vqa(60, seed=3, kinds=("color",))
    result = attack.run(None, rows, budget=5)
    poisoned = result.meta["poisoned"]
    assert result.queries == len(poisoned) == 5 and result.success == []
    assert all(result.adversarial[i]["question"].endswith(" cf") for i in poisoned)
    with pytest.raises(TypeError, match="Victim"):
        attack.run(object(), rows)
    with pytest.raises(ValueError, match="trigger"):
        BackdoorPoisoning("wanet")


def test_evaluate_with_bye_guard_end_to_end(small_victim, seeded_run):
    attack = BackdoorPoisoning("patch", poison_rate=0.2, seed=0)
    guard = paperplug.compose(BYE(seeded_run.model, seeded_run.victim.processor, variant="robust"))
    rows = synthetic_vqa(60, seed=3, kinds=("color",))
    report = paperplug.evaluate(attack, small_victim, rows, guard=guard)
    assert report.attempts == len(small_victim.test_set)
    assert 0.0 <= report.guarded_success_rate <= 1.0 and 0 <= report.blocked <= 60
    assert np.isfinite(report.success_rate)
