"""The risk certificate: golden values, scipy's exact bound, closed forms, monotonicity, and
coverage over random calibration/test splits of CSD's own outputs; Learn-then-Test's τ."""

import itertools
import math

import numpy as np
import pytest
from helpers import lookup_scorer, output_key, trap_lm
from paperplug_csd import (
    REFUSED,
    ClaimStreamDecoder,
    RiskCertifier,
    accept_from,
    bentkus_bound,
    clopper_pearson_bound,
    csd_distribution,
    hb_bound,
    hoeffding_bound,
    learn_then_test,
)
from scipy.optimize import brentq
from scipy.stats import binom, binomtest

BOUNDS = (hb_bound, hoeffding_bound, bentkus_bound, clopper_pearson_bound)


def test_golden_values():
    """n = 500, k = 10, δ = 0.1 (notes §3, computed twice independently)."""
    assert clopper_pearson_bound(10, 500, 0.1) == pytest.approx(0.0306466, abs=5e-8)
    assert hoeffding_bound(10, 500, 0.1) == pytest.approx(0.0364921, abs=5e-8)
    assert bentkus_bound(10, 500, 0.1) == pytest.approx(0.0349471, abs=5e-8)
    assert hb_bound(10, 500, 0.1) == pytest.approx(0.0349471, abs=5e-8)


@pytest.mark.parametrize("k, n, delta", [(0, 20, 0.1), (3, 40, 0.05), (17, 200, 0.2), (9, 9, 0.1)])
def test_bounds_equal_scipy_and_closed_forms(k, n, delta):
    exact = binomtest(k, n, alternative="less").proportion_ci(1 - delta, method="exact").high
    assert clopper_pearson_bound(k, n, delta) == pytest.approx(exact, abs=1e-9)
    if k < n:
        bentkus = brentq(lambda a: binom.cdf(k, n, a) - delta / math.e, 1e-12, 1 - 1e-12)
        assert bentkus_bound(k, n, delta) == pytest.approx(bentkus, abs=1e-9)
    if k == 0:  # h(0, a) = −ln(1 − a) and P(Binom(n, a) ≤ 0) = (1 − a)^n
        assert hoeffding_bound(0, n, delta) == pytest.approx(1 - delta ** (1 / n), abs=1e-10)
        assert bentkus_bound(0, n, delta) == pytest.approx(1 - (delta / math.e) ** (1 / n))
    assert hb_bound(k, n, delta) == min(hoeffding_bound(k, n, delta), bentkus_bound(k, n, delta))


def test_bounds_increase_strictly_with_k_and_sit_above_the_estimate():
    for bound in BOUNDS:
        values = [bound(k, 60, 0.1) for k in range(61)]
        assert all(a < b for a, b in itertools.pairwise(values))
        assert all(v >= k / 60 for k, v in enumerate(values))
        assert values[-1] == 1.0


def test_coverage_over_random_splits():
    """P(test risk > α̂) ≤ δ over 200 random calibration/test splits of 3000 CSD outputs, and
    P(true risk > α̂) ≤ δ with the exact risk from `csd_distribution` (slack: 3 binomial SDs)."""
    lm, scorer, tau, delta = trap_lm(), lookup_scorer(), 0.8, 0.1  # "Unsafe one." passes τ
    decoder = ClaimStreamDecoder(lm, scorer, tau=tau, budget=1, depth=1)
    unsafe = lambda key: any(i == 2 for i in key if i != REFUSED)  # noqa: E731
    losses = np.array([unsafe(output_key(decoder.generate("q", seed=i))) for i in range(3000)])
    exact, _ = csd_distribution(lm, accept_from(lm, scorer, tau), budget=1, depth=1)
    true_risk = sum(p for k, p in exact.items() if unsafe(k))
    assert 0.05 < true_risk < 0.95
    rng = np.random.default_rng(0)
    certifier = RiskCertifier(delta)
    miss_test = miss_true = 0
    gaps = []
    for _ in range(200):
        order = rng.permutation(len(losses))
        cal, test = losses[order[:300]], losses[order[300:]]
        bound = certifier.bound(cal).bound
        miss_test += test.mean() > bound
        miss_true += true_risk > bound
        gaps.append(bound - true_risk)
    slack = 3 * math.sqrt(delta * (1 - delta) / 200)
    assert miss_test / 200 <= delta + slack and miss_true / 200 <= delta + slack
    assert 0 < np.mean(gaps) < 0.1  # sound and tight: 300 prompts put α̂ within 0.1


def test_learn_then_test_controls_the_risk_of_the_chosen_tau():
    """Over 200 calibration draws, the chosen τ's exact risk exceeds α at most δ of the time."""
    lm, scorer, alpha, delta = trap_lm(), lookup_scorer(), 0.15, 0.1
    taus = [0.2, 0.5, 0.8, 0.95]
    decoders = [ClaimStreamDecoder(lm, scorer, tau=t, budget=1, depth=1) for t in taus]
    unsafe = lambda key: any(i in (2, 3) for i in key if i != REFUSED)  # noqa: E731
    pool = np.array(
        [[unsafe(output_key(d.generate("q", seed=i))) for d in decoders] for i in range(2000)]
    )
    risks = []
    for t in taus:
        exact, _ = csd_distribution(lm, accept_from(lm, scorer, t), budget=1, depth=1)
        risks.append(sum(p for k, p in exact.items() if unsafe(k)))
    assert risks[0] == risks[1] == 0 and risks[2] > alpha  # a planted threshold to find
    rng = np.random.default_rng(1)
    over, chosen = 0, []
    for _ in range(200):
        result = learn_then_test(pool[rng.choice(2000, 200, replace=False)], taus, alpha=alpha)
        risk = 0.0 if result.index is None else risks[result.index]
        over += risk > alpha
        chosen.append(result.tau)
    assert over / 200 <= delta + 3 * math.sqrt(delta * (1 - delta) / 200)
    assert chosen.count(0.5) > 150  # and it finds the most lenient safe τ


def test_solver_role_and_nothing_certified():
    losses = np.ones((30, 3))
    solution = RiskCertifier(0.1).solve({"losses": losses, "taus": [0.1, 0.2, 0.3], "alpha": 0.1})
    assert solution.value is None and solution.objective is None  # no τ is safe enough
    losses[:, 0] = 0
    solution = RiskCertifier(0.1).solve({"losses": losses, "taus": [0.1, 0.2, 0.3], "alpha": 0.1})
    assert solution.value == 0.1 and solution.objective == pytest.approx(hb_bound(0, 30, 0.1))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: hb_bound(5, 4, 0.1), r"k must lie in \[0, 4\]"),
        (lambda: hb_bound(1, 0, 0.1), "n must be"),
        (lambda: clopper_pearson_bound(1, 10, 1.0), "delta"),
        (lambda: RiskCertifier(0.1).bound([0, 1, 0.5]), "0/1 losses"),
        (lambda: RiskCertifier(0.1).bound([]), "risks is empty"),
        (lambda: RiskCertifier(0.1, method="x"), "method"),
        (lambda: learn_then_test(np.zeros((5, 2)), [0.1], alpha=0.1), "columns"),
        (lambda: learn_then_test(np.zeros((5, 1)), [0.1], alpha=1.5), "alpha"),
        (lambda: learn_then_test([[0, np.nan]], [0.1, 0.2], alpha=0.1), "losses holds NaN"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()
