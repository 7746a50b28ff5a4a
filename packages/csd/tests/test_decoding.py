"""Claim-level rejection sampling, backtracking and fallback on discrete claim LMs whose output
distribution is computed exactly: χ² tests against it, closed forms, the theorem's bound."""

import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import lookup_scorer, output_key, trap_lm
from paperplug_csd import (
    REFUSED,
    ClaimStreamDecoder,
    DiscreteClaimLM,
    accept_from,
    csd_distribution,
    target_distribution,
    total_variation,
)
from scipy.stats import chisquare

from paperplug.testing import global_rng_untouched

TAU = 0.5


def chi2_pvalue(counts: Counter, probs: dict, n: int) -> float:
    """χ² goodness of fit, outcomes with expected count < 5 pooled into one cell."""
    keys = sorted(set(probs) | set(counts), key=str)
    big = [k for k in keys if probs.get(k, 0.0) * n >= 5]
    observed = [counts.get(k, 0) for k in big]
    expected = [probs[k] * n for k in big]
    rest_obs, rest_exp = n - sum(observed), n - sum(expected)
    if rest_exp >= 1e-9:
        observed.append(rest_obs)
        expected.append(rest_exp)
    elif rest_obs > 0:
        return 0.0  # an outcome the exact distribution gives no mass was drawn
    return float(chisquare(observed, np.array(expected) * sum(observed) / sum(expected)).pvalue)


def sample(decoder, n, seed):
    return Counter(output_key(decoder.generate("q", seed=seed * 100_000 + i)) for i in range(n))


def test_first_claim_follows_p_given_safe():
    """Accepted claims are exact draws of p(c | safe): the first claim's law, by χ² (4 of 5
    seeds at p > 0.01; a correct sampler fails one seed with probability < 0.001)."""
    lm = trap_lm()
    decoder = ClaimStreamDecoder(lm, lookup_scorer(), tau=TAU, budget=0, depth=0)
    p = lm.probs(())
    safe = {0: p[0], 1: p[1]}
    z = sum(safe.values())
    expected = {k: v / z for k, v in safe.items()}
    passed = 0
    for seed in range(5):
        firsts = Counter()
        for i in range(2000):
            r = decoder.generate("q", seed=seed * 10_000 + i)
            if r.claim_indices:
                firsts[r.claim_indices[0]] += 1
        passed += chi2_pvalue(firsts, expected, sum(firsts.values())) > 0.01
    assert passed >= 4


@pytest.mark.parametrize("budget, depth", [(0, 0), (1, 1), (2, 1), (1, 2)])
def test_outputs_match_the_exact_csd_distribution(budget, depth):
    """Whole outputs (resamples, backtracks, refusals) follow `csd_distribution` by χ²."""
    lm, scorer = trap_lm(), lookup_scorer()
    decoder = ClaimStreamDecoder(lm, scorer, tau=TAU, budget=budget, depth=depth)
    exact, _ = csd_distribution(lm, accept_from(lm, scorer, TAU), budget=budget, depth=depth)
    assert sum(exact.values()) == pytest.approx(1.0, abs=1e-12)
    passed = sum(chi2_pvalue(sample(decoder, 2000, seed), exact, 2000) > 0.01 for seed in range(3))
    assert passed >= 2


def test_the_chi2_check_has_power():
    """The same samples are rejected against the target law, which differs by TV ≈ 0.2."""
    lm, scorer = trap_lm(), lookup_scorer()
    accept = accept_from(lm, scorer, TAU)
    target = target_distribution(lm, accept)
    decoder = ClaimStreamDecoder(lm, scorer, tau=TAU, budget=0, depth=1)
    exact, _ = csd_distribution(lm, accept, budget=0, depth=1)
    assert total_variation(exact, target) > 0.1
    counts = sample(decoder, 2000, 0)
    assert chi2_pvalue(counts, exact, 2000) > 1e-4
    assert chi2_pvalue(counts, target, 2000) < 1e-6


def test_fallback_rate_has_its_closed_form():
    """One claim per reply, no backtracking: P(fallback) = (1 − s)^(B+1), s = P(accepted)."""
    lm = DiscreteClaimLM(["Fine.", "Bad."], [0.3, 0.6, 0.1], [[0, 0, 1], [0, 0, 1]], max_claims=1)
    scorer = lookup_scorer({"Fine.": 0.0, "Bad.": 1.0})
    accept = accept_from(lm, scorer, TAU)
    for budget in (0, 1, 3):
        exact, exhausted = csd_distribution(lm, accept, budget=budget, depth=0)
        closed = 0.6 ** (budget + 1)
        assert exact[(REFUSED,)] == pytest.approx(closed, abs=1e-12)
        assert exhausted == pytest.approx(closed, abs=1e-12)
        decoder = ClaimStreamDecoder(lm, scorer, tau=TAU, budget=budget, depth=0)
        rate = np.mean([decoder.generate("q", seed=i).fallback for i in range(4000)])
        assert abs(rate - closed) < 4 * np.sqrt(closed * (1 - closed) / 4000)


@pytest.mark.parametrize("budget, depth", [(0, 0), (0, 1), (1, 1), (2, 0), (3, 2), (60, 1)])
def test_distance_to_the_target_is_bounded_by_the_exhaustion_rate(budget, depth):
    """C-SafeGen's theorem, as reconstructed: CSD equals the claim-wise constrained target
    until the resample budget first runs out, so TV(CSD, target) ≤ P(exhausted) (with no
    backtracking, that is the fallback rate), and both vanish as B grows."""
    lm, scorer = trap_lm(), lookup_scorer()
    accept = accept_from(lm, scorer, TAU)
    exact, exhausted = csd_distribution(lm, accept, budget=budget, depth=depth)
    tv = total_variation(exact, target_distribution(lm, accept))
    assert tv <= exhausted + 1e-12
    if depth == 0:
        refused = sum(p for k, p in exact.items() if k[-1:] == (REFUSED,))
        assert refused == pytest.approx(exhausted, abs=1e-12)
    if budget == 60:  # after "Bee" only the end (p = 0.1) is safe: 0.9^61 < 0.01
        assert exhausted < 0.01


def test_accepted_claims_always_pass_the_guard_and_counts_add_up():
    lm, scorer = trap_lm(), lookup_scorer()
    decoder = ClaimStreamDecoder(lm, scorer, tau=TAU, budget=1, depth=1)
    for i in range(300):
        r = decoder.generate("q", seed=i)
        assert all(scorer.score_claim("", "", c) <= TAU for c in r.claims)
        assert r.n_guard_calls == len(r.scores)
        assert r.n_rejected == sum(s > TAU for s in r.scores)
        assert r.n_rejected == r.n_resamples + r.n_backtracks + int(r.fallback)
        assert r.n_backtracks <= 1
        assert r.text.endswith(decoder.refusal) == r.fallback


def test_stream_holds_back_what_a_backtrack_may_take():
    lm, scorer = trap_lm(), lookup_scorer()
    decoder = ClaimStreamDecoder(lm, scorer, tau=TAU, budget=0, depth=1)
    seen_backtrack = 0
    for i in range(200):
        stream = decoder.stream("q", seed=i)
        pieces = list(stream)
        r = stream.result
        assert "".join(pieces) == r.text
        assert pieces[: len(r.claims)] == r.claims  # nothing streamed was later popped
        assert r == decoder.generate("q", seed=i)
        seen_backtrack += r.n_backtracks
    assert seen_backtrack > 20  # the trap makes backtracking common


def test_seeded_and_leaves_the_global_rng_alone():
    decoder = ClaimStreamDecoder(trap_lm(), lookup_scorer(), tau=TAU)
    with global_rng_untouched("generate"):
        a = [decoder.generate("q", seed=s).to_dict() for s in range(20)]
    assert a == [decoder.generate("q", seed=s).to_dict() for s in range(20)]
    assert len({str(x) for x in a}) > 5


def test_same_seed_same_reply_in_a_new_process():
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from helpers import lookup_scorer, trap_lm\n"
        "from paperplug_csd import ClaimStreamDecoder\n"
        "d = ClaimStreamDecoder(trap_lm(), lookup_scorer(), budget=1)\n"
        "print([d.generate('q', seed=s).text for s in range(5)])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    d = ClaimStreamDecoder(trap_lm(), lookup_scorer(), budget=1)
    assert out.stdout.strip() == str([d.generate("q", seed=s).text for s in range(5)])


@pytest.mark.parametrize(
    "kw, err, match",
    [
        ({"tau": 1.5}, ValueError, "tau"),
        ({"budget": -1}, ValueError, "budget"),
        ({"depth": 1.0}, TypeError, "depth"),  # a non-integer where an int is meant
        ({"refusal": None}, TypeError, "refusal"),
    ],
)
def test_bad_decoder_settings(kw, err, match):
    with pytest.raises(err, match=match):
        ClaimStreamDecoder(trap_lm(), lookup_scorer(), **kw)


def test_bad_models_scores_and_messages():
    with pytest.raises(TypeError, match="cannot decode claims"):
        ClaimStreamDecoder(42, lookup_scorer())
    with pytest.raises(TypeError, match="cannot score claims"):
        ClaimStreamDecoder(trap_lm(), 3)
    decoder = ClaimStreamDecoder(trap_lm(), lambda p, x, c: 2.0)
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        decoder.generate("q", seed=0)
    with pytest.raises(TypeError, match="messages"):
        ClaimStreamDecoder(trap_lm(), lookup_scorer()).generate([], seed=0)
    with pytest.raises(ValueError, match="summing to 1"):
        DiscreteClaimLM(["a"], [0.5, 0.6], [[0.5, 0.5]])
    with pytest.raises(ValueError, match="shape"):
        DiscreteClaimLM(["a"], [1.0], [[0.5, 0.5]])
