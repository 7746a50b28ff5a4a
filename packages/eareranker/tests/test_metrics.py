"""The ranking metrics are tie-aware: against brute force over every order of the tied scores,
and a constant scorer gets the same value whatever order the rows came in."""

import itertools

import numpy as np
import pytest
from paperplug_eareranker import mrr, ndcg_at, report

RUBRIC = np.array([0.95, 0.80, 0.60, 0.35, 0.15, 0.03])  # the package's pairs, best first


def strict_ndcg(order, labels, k):
    discount = 1 / np.log2(np.arange(2, len(order) + 2))
    gains = 2.0 ** labels[list(order)] - 1
    ideal = np.sort(2.0**labels - 1)[::-1]
    return (gains[:k] * discount[:k]).sum() / (ideal[:k] * discount[:k]).sum()


def strict_rr(order, labels):
    ranked = labels[list(order)]
    return 1 / (1 + int(np.flatnonzero(ranked == labels.max())[0]))


def over_tie_orders(metric, scores, labels):
    """The mean of `metric` over every order of the rows that sorts `scores` descending."""
    values = [metric(order, labels) for order in itertools.permutations(range(len(scores)))
              if (np.diff(scores[list(order)]) <= 0).all()]  # fmt: skip
    return np.mean(values)


@pytest.mark.parametrize("seed", range(12))
def test_ndcg_and_mrr_are_the_expectation_over_tie_orders(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    scores = rng.integers(0, 3, size=n).astype(float)  # few levels: many ties
    labels = rng.choice([0.0, 0.3, 0.6, 1.0], size=n)  # tied labels too (several best)
    groups = np.zeros(n, dtype=int)
    for k in (1, 3, 10):
        expected = over_tie_orders(lambda o, y, k=k: strict_ndcg(o, y, k), scores, labels)
        if labels.max() == 0:
            expected = 0.0
        assert ndcg_at(scores, labels, groups, k=k) == pytest.approx(expected)
    assert mrr(scores, labels, groups) == pytest.approx(over_tie_orders(strict_rr, scores, labels))


def test_a_constant_scorer_gets_no_credit_for_the_row_order():
    groups, constant = np.zeros(6, dtype=int), np.zeros(6)
    best_first, reversed_rows = (
        ndcg_at(constant, RUBRIC, groups),
        ndcg_at(constant, RUBRIC[::-1], groups),
    )
    gains, discount = 2**RUBRIC - 1, 1 / np.log2(np.arange(2, 8))
    assert best_first == pytest.approx(reversed_rows)
    assert best_first == pytest.approx(gains.mean() * discount.sum() / (gains * discount).sum())
    assert best_first == pytest.approx(0.783, abs=5e-4)  # the tie-averaged value
    # the best document is at each rank with probability 1/6, whatever the row order
    for labels in (RUBRIC, RUBRIC[::-1]):
        assert mrr(constant, labels, groups) == pytest.approx(np.mean(1 / np.arange(1, 7)))


def test_a_step_function_is_scored_as_its_ties_deserve():
    # isotonic calibration maps the top two documents to one value: half the time the wrong one
    labels, groups = np.array([1.0, 0.5, 0.0]), np.zeros(3, dtype=int)
    steps = np.array([0.7, 0.7, 0.1])
    assert mrr(steps, labels, groups) == pytest.approx((1 + 1 / 2) / 2)
    dcg = (1 + 2**0.5 - 1) / 2 * (1 + 1 / np.log2(3))
    assert ndcg_at(steps, labels, groups) == pytest.approx(dcg / (1 + (2**0.5 - 1) / np.log2(3)))


def test_by_hand_and_per_query():
    labels = np.array([1.0, 0.5, 0.0, 1.0, 0.0])
    groups = np.array([7, 7, 7, 3, 3])  # any ids, any order
    swapped = np.array([2.0, 3.0, 1.0, 0.0, 1.0])
    dcg = (2**0.5 - 1) / 1 + (2**1.0 - 1) / np.log2(3)
    idcg = 1 / 1 + (2**0.5 - 1) / np.log2(3)
    assert ndcg_at(swapped, labels, groups) == pytest.approx((dcg / idcg + 1 / np.log2(3)) / 2)
    assert mrr(swapped, labels, groups) == pytest.approx(0.5)
    assert ndcg_at([0.2], [1.0], [0]) == 1.0  # one document is its own ideal order


def test_report_and_bad_inputs():
    out = report(np.array([0.9, 0.2]), np.array([0.95, 0.3]), np.array([0, 0]))
    assert out == {
        "ACC25": 1.0,
        "LACC@10": 1.0,
        "LACC@25": 0.5,
        "bin acc": 0.5,
        "NDCG@10": 1.0,
        "MRR": 1.0,
    }
    with pytest.raises(ValueError, match="scores holds NaN"):
        ndcg_at([np.nan, 1.0], [1.0, 0.0], [0, 0])
    with pytest.raises(ValueError, match="scores and labels and groups must have the same number"):
        mrr([0.1, 0.2], [1.0, 0.0], [0])
    with pytest.raises(ValueError, match="k must be >= 1"):
        ndcg_at([0.1, 0.2], [1.0, 0.0], [0, 0], k=0)
    with pytest.raises(ValueError, match="pred must be adequacy scores"):
        report(np.array([1.5, 0.2]), np.array([0.95, 0.3]), np.array([0, 0]))


@pytest.mark.parametrize("seed", range(5))
def test_ndcg_agrees_with_scikit_learn_on_tied_scores(seed):
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(seed)
    labels = rng.choice(RUBRIC, size=(30, 8))
    scores = np.round(rng.random((30, 8)), 1)  # one decimal: ties in most queries
    groups = np.repeat(np.arange(30), 8)
    for k in (3, 10):
        expected = ndcg_score(2**labels - 1, scores, k=k)
        assert ndcg_at(scores.ravel(), labels.ravel(), groups, k=k) == pytest.approx(expected)
