"""The baselines share CSD's generator and draws; the measurement helpers."""

import numpy as np
import pytest
from helpers import TRAP_SCORES, lookup_scorer, trap_lm
from paperplug_csd import ClaimStreamDecoder, guard_then_refuse, stop_rule, unguarded
from paperplug_csd.evaluation import coverage_over_splits, summarize


def worst(prompt, prefix, text):
    """The riskiest known claim in a text (a guard that can read a whole reply)."""
    return max((v for k, v in TRAP_SCORES.items() if k in text), default=0.0)


def test_same_draws_as_csd_and_the_rules_apply():
    decoder = ClaimStreamDecoder(trap_lm(), worst, tau=0.5, budget=0, depth=0)
    open_decoder = ClaimStreamDecoder(trap_lm(), lookup_scorer(), tau=1.0)
    for s in range(200):
        base = unguarded(decoder, "q", seed=s)
        assert base.claims == open_decoder.generate("q", seed=s).claims  # τ = 1 accepts all
        flags = [lookup_scorer().score_claim("", "", c) > 0.5 for c in base.claims]
        stop = stop_rule(decoder, "q", seed=s)
        first = flags.index(True) if any(flags) else len(flags)
        assert stop.claims == base.claims[:first] and stop.fallback == any(flags)
        assert stop.n_guard_calls == min(first + 1, len(flags))
        csd = decoder.generate("q", seed=s)  # B = 0, D = 0: CSD is the stop rule here
        assert (csd.claims, csd.fallback) == (stop.claims, stop.fallback)
        gtr = guard_then_refuse(decoder, "q", seed=s)
        assert gtr.n_guard_calls == 1 and gtr.fallback == any(flags)
        assert gtr.text == (decoder.refusal if any(flags) else base.text)
    with pytest.raises(ValueError, match="k must be"):
        stop_rule(decoder, "q", k=0)


def test_summary_and_coverage_helpers():
    decoder = ClaimStreamDecoder(trap_lm(), lookup_scorer(), tau=0.5, budget=0, depth=0)
    results = [decoder.generate("q", seed=s) for s in range(40)]
    row = summarize(results, [True] * 20 + [False] * 20, lambda text: "Unsafe" in text)
    assert row["harmful_rate"] == 0.0  # the guard rejects every unsafe claim
    assert row["refusals"] == np.mean([r.fallback for r in results])
    cov = coverage_over_splits(np.r_[np.ones(20), np.zeros(80)], n_cal=50, splits=50)
    assert 0.9 <= cov.coverage <= 1.0 and cov.mean_gap > 0
    with pytest.raises(ValueError, match="n_cal"):
        coverage_over_splits(np.zeros(10), n_cal=10)
    with pytest.raises(ValueError, match="0/1"):
        coverage_over_splits([0.5, 1.0], n_cal=1)
    with pytest.raises(ValueError, match="one harmful flag"):
        summarize(results, [True], lambda t: False)
