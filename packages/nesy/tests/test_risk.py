"""The class-specific risk bound (derived, README): it holds for every classifier on
enumerable cases, computed exactly; it is tight where the derivation says (one class erring
rarely, into its least exposed label); ω matches MAX's closed form."""

import numpy as np
import pytest
from paperplug_nesy import (
    class_risk_bound,
    detection_weights,
    from_callable,
    max_of,
    partial_risk,
    smallest_parent,
    sum_of,
)

SIGMAS = {
    "max": lambda: max_of(3, 4),
    "sum": lambda: sum_of(2, 4),
    "parent": lambda: smallest_parent([-1, 0, 0, 1, 1]),
    "ordered": lambda: from_callable(lambda y: int(y[0] > y[1]) + 2 * int(y[1] == y[2]), 3, 3),
}


@pytest.mark.parametrize("M", [2, 3, 4])
def test_max_detection_weights_equal_the_closed_form(M):
    """MAX: a wrong label on a class-j instance shows when the others stay below j (below
    the wrong label, for j = 0): ω_j = M·F(j−1)^(M−1), ω_0 = M·r_0^(M−1)."""
    r = np.array([0.35, 0.3, 0.2, 0.1, 0.05])
    F = np.cumsum(r)
    expected = M * np.concatenate([[r[0] ** (M - 1)], F[:-1] ** (M - 1)])
    assert detection_weights(max_of(M, 5), r) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("name", sorted(SIGMAS))
def test_the_bound_holds_for_every_classifier(name):
    """60 random classifiers (confusion matrices) and marginals per σ: every class risk is at
    most its bound, with R_P and R̄ computed exactly; some bounds are informative (< 1)."""
    sigma = SIGMAS[name]()
    rng = np.random.default_rng(0)
    informative = 0
    for _ in range(60):
        r = rng.dirichlet(np.full(sigma.C, 2.0))
        mix = rng.uniform(0, 0.2, size=(sigma.C, 1))
        confusion = (1 - mix) * np.eye(sigma.C) + mix * rng.dirichlet(np.ones(sigma.C), sigma.C)
        class_risk = 1 - np.diag(confusion)
        bound = class_risk_bound(sigma, r, partial_risk(sigma, r, confusion), float(r @ class_risk))
        assert np.all(class_risk <= bound + 1e-12), (class_risk, bound)
        informative += int((bound < 1).sum())
    assert informative >= 30


@pytest.mark.parametrize("name", ["max", "sum", "parent"])
def test_the_bound_is_tight_for_one_rare_error(name):
    """Only class j errs, at rate 0.001, into its least exposed wrong label: the bound is
    within 2% of R_j (the slack is first order in the error rate, as derived)."""
    sigma = SIGMAS[name]()
    r = np.random.default_rng(1).dirichlet(np.full(sigma.C, 3.0))
    weights = detection_weights(sigma, r)
    for j in range(sigma.C):
        if weights[j] == 0:
            continue  # j's errors never show: the bound is 1 (vacuous), rightly
        ratios = []
        for k in range(sigma.C):
            if k != j:
                confusion = np.eye(sigma.C)
                confusion[j, j], confusion[j, k] = 0.999, 0.001
                rp = partial_risk(sigma, r, confusion)
                ratios.append(class_risk_bound(sigma, r, rp, r[j] * 0.001)[j] / 0.001)
        assert 1 <= min(ratios) <= 1.02, (j, ratios)


def test_partial_risk_of_a_perfect_and_a_constant_classifier():
    sigma, r = max_of(2, 3), np.array([0.5, 0.3, 0.2])
    assert partial_risk(sigma, r, np.eye(3)) == 0.0
    always_two = np.tile([0.0, 0.0, 1.0], (3, 1))  # σ(ŷ) = 2, wrong unless max(y) = 2
    assert partial_risk(sigma, r, always_two) == pytest.approx(1 - (1 - (0.8**2)))


def test_bad_inputs_are_named():
    sigma, r = max_of(2, 3), np.full(3, 1 / 3)
    with pytest.raises(ValueError, match="confusion"):
        partial_risk(sigma, r, np.ones((3, 3)))
    with pytest.raises(ValueError, match="marginal"):
        detection_weights(sigma, [0.5, 0.6, 0.1])
    with pytest.raises(ValueError, match="partial"):
        class_risk_bound(sigma, r, 1.5, 0.0)
