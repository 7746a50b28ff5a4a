"""`paperplug.evaluate` end to end: the attack hands its fine-tuned model to BYE, and BYE
refuses a model that was not fine-tuned on the rows it filters."""

import numpy as np
import pytest
from paperplug_bye import (
    BYE,
    BackdoorPoisoning,
    EmbeddedConfig,
    embedded_victim,
    filter_quality,
    random_drop,
    retrained,
)

import paperplug


def test_evaluate_hands_the_finetuned_model_to_bye(poisoned_runs):
    config = EmbeddedConfig(seed=0)
    attack = BackdoorPoisoning("patch", poison_rate=config.poison_rate, seed=0)
    guard = paperplug.compose(BYE())  # no model given: it comes from the attack's result
    report = paperplug.evaluate(attack, embedded_victim(config), config.rows(160, 0), guard=guard)
    run = poisoned_runs[0]  # the same seeded attack, run by the fixture
    assert report.result.meta["poisoned"] == np.flatnonzero(run.poisoned).tolist()
    assert report.success_rate == run.asr >= 0.9
    assert report.blocked == int(run.poisoned.sum())  # exactly the poisoned rows went
    assert report.guarded_success_rate <= 0.05  # re-trained on the kept rows: backdoor gone
    # the Random Drop control: as many rows removed at random leave the backdoor in
    asr, clean = retrained(run, random_drop(len(run.dataset), report.blocked, seed=1))
    assert asr >= 0.9 and clean >= 0.9


def test_attack_result_carries_the_model_and_wins_over_a_stale_one(poisoned_runs):
    run, other = poisoned_runs[0], poisoned_runs[1]
    assert run.result.meta["finetuned_model"] is run.model
    stale = BYE(other.model, other.victim.processor)  # fine-tuned on seed 1's rows
    with pytest.raises(ValueError, match="not fine-tuned on"):
        stale.check(run.dataset)
    context = {"attack_result": run.result, "target": run.victim}
    verdict = stale.check(run.dataset, context)  # the attack's model is read instead
    p, r = filter_quality(verdict.details["removed"], run.poisoned)
    assert p == r == 1.0


def test_a_guard_fails_closed_on_a_model_fine_tuned_on_other_rows(poisoned_runs):
    run, other = poisoned_runs[0], poisoned_runs[1]
    guard = paperplug.compose(BYE(other.model, other.victim.processor))
    result = guard.filter(run.dataset)
    assert result.kept == [] and len(result.removed) == len(run.dataset)
    details = result.verdict.verdicts[0][1].details
    assert details["failed_closed"] and "not fine-tuned on" in result.verdict.reason
    with pytest.raises(ValueError, match="160 rows being filtered"):
        paperplug.compose(BYE(other.model, other.victim.processor), on_error="raise").filter(
            run.dataset
        )


def test_a_subset_of_the_training_rows_is_accepted_and_an_unknown_model_is_trusted(
    poisoned_runs,
):
    run = poisoned_runs[0]
    BYE(run.model, run.victim.processor).check(run.dataset[40:100])
    unknown = run.victim.base_model  # no record of its rows: cannot be checked
    BYE(unknown, run.victim.processor).check(run.dataset[:20])
