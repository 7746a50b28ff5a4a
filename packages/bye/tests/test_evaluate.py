"""BYE inside `paperplug.evaluate`: the attack hands its fine-tuned model to BYE, and BYE
refuses a model that was not fine-tuned on the rows it filters. The end-to-end `evaluate`
call itself is the README's first block, run by tests/test_readme.py."""

import pytest
from paperplug_bye import BYE, filter_quality, random_drop, retrained

import paperplug


def test_random_drop_of_as_many_rows_leaves_the_backdoor_in(poisoned_runs):
    # `evaluate(BackdoorPoisoning(...), victim, rows, guard=compose(BYE()))` on this seed is
    # the README's first block (tests/test_readme.py): ASR 1.0 -> 0.0, 16 rows blocked.
    run = poisoned_runs[0]
    asr, clean = retrained(run, random_drop(len(run.dataset), int(run.poisoned.sum()), seed=1))
    assert run.asr >= 0.9 and asr >= 0.9 and clean >= 0.9


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
    subset = BYE(run.model, run.victim.processor).check(run.dataset[40:100])
    planted = [i for i, p in enumerate(run.poisoned[40:100]) if p]
    assert planted and subset.details["removed"] == planted  # indices relative to the subset
    unknown = run.victim.base_model  # no record of its rows: cannot be checked, so not refused
    verdict = BYE(unknown, run.victim.processor).check(run.dataset[:20])
    assert verdict.details["entropy"].shape == (20, 1) and len(verdict.payload) == 20
