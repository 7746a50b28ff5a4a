"""The seeded embedded story over several seeds, with stated rates: the backdoor is learned and
BYE finds its rows; on clean rows BYE answers "no backdoor found"."""

import numpy as np
from paperplug_bye import BYE, filter_quality

import paperplug


def test_backdoor_learned_then_filtered_on_4_of_5_seeds(poisoned_runs):
    outcomes = []
    for run in poisoned_runs:
        context = {"model": run.model, "processor": run.victim.processor}
        result = paperplug.compose(BYE()).filter(run.dataset, context=context)
        details = result.verdict.verdicts[0][1].details
        assert sorted(result.kept + result.removed) == list(range(len(run.dataset)))
        assert details["removed"] == result.removed
        precision, recall = filter_quality(result.removed, run.poisoned)
        outcomes.append((run.asr, precision, recall, details["scored_layers"]))
        if result.removed:  # poisoned rows sit in the low-entropy mode of the scored layer
            E, layer = details["entropy"], details["scored_layers"][0]
            assert E[run.poisoned, layer].mean() < E[~run.poisoned, layer].mean() - np.log(3)
    # learned, recall >= 0.9 and precision >= 0.6 on at least 4 of 5 seeds (measured here: 5 of
    # 5; over 24 seeds see the README's benchmark)
    good = [asr >= 0.9 and p >= 0.6 and r >= 0.9 for asr, p, r, _ in outcomes]
    assert sum(good) >= 4, outcomes


def test_clean_rows_no_backdoor_found_on_4_of_5_seeds(clean_runs):
    removed = []
    for run in clean_runs:
        assert not run.poisoned.any() and run.clean_accuracy >= 0.9
        verdict = BYE(run.model, run.victim.processor).check(run.dataset)
        removed.append(len(verdict.details["removed"]))
        assert verdict.valid == (not verdict.details["removed"])
        assert verdict.details["backdoor_found"] == bool(verdict.details["removed"])
    # nothing removed on at least 4 of 5 seeds and under 5% of all clean rows (measured: 0 rows
    # on 5 of 5; over 24 seeds see the README's benchmark)
    assert sum(n == 0 for n in removed) >= 4, removed
    assert sum(removed) <= 0.05 * len(clean_runs) * len(clean_runs[0].dataset), removed
