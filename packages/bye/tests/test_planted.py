"""The seeded embedded story: the backdoor is learned, then BYE finds it and re-training removes it."""

import numpy as np
from paperplug_bye import BYE, filter_quality, random_drop

import paperplug


def test_backdoor_learned_then_filtered_then_gone(seeded_run):
    run = seeded_run
    assert run.asr >= 0.9, f"invalid run: the backdoor was not learned (ASR {run.asr:.2f})"
    bye = BYE(run.model, run.victim.processor)
    result = paperplug.compose(bye).filter(run.dataset)
    details = result.verdict.verdicts[0][1].details
    assert details["sensitive_layers"] and set(details) >= {"paper", "robust"}
    assert details["paper"]["removed"] == result.removed
    assert sorted(result.kept + result.removed) == list(range(len(run.dataset)))
    # both rules are reported; at least one reaches the bar on this seed
    quality = {v: filter_quality(details[v]["removed"], run.poisoned) for v in ("paper", "robust")}
    assert any(p >= 0.8 and r >= 0.9 for p, r in quality.values()), quality
    robust = BYE(variant="robust").check(run.dataset, {"entropy": details["entropy"]})
    assert robust.details["removed"] == details["robust"]["removed"]
    # poisoned rows sit in the low-entropy mode of the first sensitive layer
    E = np.asarray(details["entropy"])
    layer = details["sensitive_layers"][0]
    assert E[run.poisoned, layer].mean() < E[~run.poisoned, layer].mean() - 0.5
    # re-training on the kept rows removes the backdoor; Random Drop of the same count does not
    asr_bye = np.mean(run.attack.assess(run.victim, result.verdict.payload))
    assert asr_bye <= run.asr - 0.5, (asr_bye, run.asr)
    dropped = set(
        random_drop(len(run.dataset), len(result.removed), seed=1)
    )  # seed 0 drew the poison
    kept_random = [r for i, r in enumerate(run.dataset) if i not in dropped]
    assert np.mean(run.attack.assess(run.victim, kept_random)) >= asr_bye + 0.5
