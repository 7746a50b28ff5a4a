"""The closed form against the definition: the best lottery over enumerated independent sets."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from paperplug_matroid import TransversalMatroid, fair_point, worst_case_market
from scipy.optimize import linprog


def random_instance(rng, n_max=8):
    n = int(rng.integers(2, n_max + 1))
    m = int(rng.integers(1, 7))
    bi = rng.random((n, m)) < rng.uniform(0.15, 0.6)
    C = int(rng.integers(2, 5))
    groups = rng.integers(0, C, size=n)
    return TransversalMatroid(bi), groups


def lp_fair_size(matroid, groups):
    """max λ·Σ r_c over lotteries on independent sets with E|I ∩ G_c| = λ r(G_c)."""
    labels = np.unique(groups)
    independent = [s for k in range(matroid.n + 1) for s in itertools.combinations(range(matroid.n), k)
                   if matroid.rank(s) == k]  # fmt: skip
    r = [matroid.rank(np.flatnonzero(groups == c)) for c in labels]
    V = len(independent)
    counts = np.array(
        [[sum(groups[i] == c for i in s) for s in independent] for c in labels], float
    )
    # variables: p_1..p_V, λ; maximise λ
    A_eq = np.hstack([counts, -np.array(r, float)[:, None]])
    A_eq = np.vstack([A_eq, np.r_[np.ones(V), 0.0]])
    b_eq = np.r_[np.zeros(len(labels)), 1.0]
    bounds = [(0, None)] * V + [(0, 1)]  # E|I ∩ G_c| ≤ r(G_c) bounds λ by 1
    res = linprog(np.r_[np.zeros(V), -1.0], A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    assert res.status == 0
    return -res.fun * sum(r), matroid.rank(range(matroid.n))


def test_closed_form_equals_the_lottery_lp_on_200_random_instances():
    rng = np.random.default_rng(7)
    seen_c = set()
    for _ in range(200):
        matroid, groups = random_instance(rng)
        point = fair_point(matroid, groups)
        lp_size, _total = lp_fair_size(matroid, groups)
        assert point.fair_size == pytest.approx(lp_size, abs=1e-6)
        C = len(np.unique(groups))
        seen_c.add(C)
        assert 1 - 1e-12 <= point.pof <= max(1, C - 1) + 1e-12
        if C == 2:
            assert point.exact["pof"] == 1
    assert seen_c >= {2, 3, 4}


def test_tight_set_certifies_lambda_star():
    rng = np.random.default_rng(3)
    for _ in range(50):
        matroid, groups = random_instance(rng)
        point = fair_point(matroid, groups)
        if not point.tight_set:
            continue
        ratio = Fraction(
            point.union_ranks[tuple(point.tight_set)],
            sum(point.group_ranks[c] for c in point.tight_set),
        )
        assert min(ratio, Fraction(1)) == point.exact["lambda_star"]


@pytest.mark.parametrize("M", [0, 1, 2, 5, 20, 100])
def test_adversarial_family_closed_form(M):
    point = fair_point(*worst_case_market(M))
    assert point.exact["pof"] == Fraction(2 * (M + 1), M + 2)
    assert point.exact["lambda_star"] == Fraction(1, 2) and point.tight_set == [0, 1]


def test_a_group_that_can_get_nothing_constrains_nothing():
    bi = np.array([[1, 0], [0, 1], [0, 0]])  # agent 2 has no resource
    point = fair_point(bi, ["a", "b", "c"])
    assert point.pof == 1.0 and point.quotas == {"a": 1.0, "b": 1.0, "c": 0.0}
