"""Each stage against a closed form or an identity."""

import math

import numpy as np
import pytest
import torch
from paperplug_neurules import (
    annealed,
    batch_rows,
    gumbel_select,
    harmonic_and,
    heads_frozen,
    priorities,
    soft_interval,
    support_penalty,
)


def test_soft_interval_equals_the_three_way_softmax():
    x, a, b = torch.randn(200), torch.randn(200) - 1, torch.randn(200) + 1
    for t in (0.05, 0.3, 2.0):
        reference = torch.softmax(torch.stack([x, 2 * x - a, 3 * x - a - b]) / t, dim=0)[1]
        torch.testing.assert_close(soft_interval(x, a, b, t), reference, rtol=1e-5, atol=1e-6)


def test_soft_interval_tends_to_the_indicator_and_stays_finite():
    x = torch.linspace(-3, 3, 601)
    inside = ((x > -1) & (x < 1)).float()
    away = ((x + 1).abs() > 0.05) & ((x - 1).abs() > 0.05)
    errors = [
        (soft_interval(x, torch.tensor(-1.0), torch.tensor(1.0), t) - inside)[away].abs().max()
        for t in (0.1, 0.01, 1e-3)
    ]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-6
    extreme = soft_interval(
        torch.tensor([1e6, -1e6, 0.0]), torch.tensor(-1.0), torch.tensor(1.0), 1e-4
    )
    assert torch.isfinite(extreme).all() and extreme.tolist() == [0.0, 0.0, 1.0]


def test_harmonic_and_by_hand():
    pi = torch.tensor([[[0.5, 1.0, 0.2]]])  # (batch, rules, features)
    w = torch.tensor([[1.0, 1.0, 0.0]])  # third feature not in the rule
    assert harmonic_and(pi, w, eps=0.0).item() == pytest.approx(2 / (1 / 0.5 + 1 / 1.0))
    eta = 1e-3 / 2
    expected = 2 / ((1 + eta) / (0.5 + eta) + (1 + eta) / (1 + eta))
    assert harmonic_and(pi, w, eps=1e-3).item() == pytest.approx(expected, rel=1e-6)
    assert harmonic_and(
        torch.ones(1, 1, 3), torch.tensor([[0.3, 2.0, 1.0]]), 1e-3
    ).item() == pytest.approx(1.0)


def test_gradient_shaping_focuses_on_the_failing_condition():
    pi = torch.tensor([[[0.1, 0.9, 0.95]]], requires_grad=True)
    harmonic_and(pi, torch.ones(1, 3), eps=1e-3).backward()
    grads = pi.grad.flatten()
    assert grads[0] > 20 * grads[1] and grads[1] > grads[2] > 0  # ∝ w (1+η)/(π+η)²


def test_priorities_are_positive_and_shift_invariant():
    o = torch.tensor([0.3, -2.0, 1.5])
    assert priorities(o).tolist() == pytest.approx([3.3, 1.0, 4.5])
    torch.testing.assert_close(priorities(o + 7.0), priorities(o))


def test_gumbel_selector_is_a_seeded_distribution_that_sharpens():
    scores = torch.tensor([[1.0, 3.0, 2.0]]).repeat(4000, 1)
    a = gumbel_select(scores, 1.0, torch.Generator().manual_seed(0))
    b = gumbel_select(scores, 1.0, torch.Generator().manual_seed(0))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(a.sum(dim=1), torch.ones(4000))
    # Gumbel-max: the hard argmax follows softmax(scores)
    frequency = (
        torch.bincount(
            gumbel_select(scores, 1e-3, torch.Generator().manual_seed(1)).argmax(1), minlength=3
        )
        / 4000
    )
    torch.testing.assert_close(frequency, torch.softmax(scores[0], 0), atol=0.03, rtol=0)


def test_support_penalty_by_hand():
    rules = torch.tensor([[1.0, 0.0, 0.2], [1.0, 0.0, 0.2], [0.0, 0.5, 0.2], [0.0, 0.5, 0.2]])
    # supports [0.5, 0.25, 0.2]; min_support 0.3 -> shortfalls [0, 0.05, 0.1]
    assert support_penalty(rules, 0.3).item() == pytest.approx(0.15 / 3)
    weight = torch.tensor([3.0, 0.0, 1.0, 0.0])  # supports [0.75, 0.125, 0.2]
    assert support_penalty(rules, 0.3, weight).item() == pytest.approx((0.175 + 0.1) / 3)


def test_support_penalty_has_a_gradient_with_many_rules():
    """Issue 14: on the selection shares (which sum to 1) the penalty was constant whenever
    n_rules * min_support > 1; on the rules' supports it still pulls every rule below it."""
    rules = torch.rand(64, 10, generator=torch.Generator().manual_seed(0)) * 0.3
    rules.requires_grad_(True)
    support_penalty(rules, 0.2).backward()
    below = rules.detach().mean(0) < 0.2
    assert below.sum() >= 5 and (rules.grad[:, below] < 0).all()
    scores = (rules.detach() * 3).requires_grad_(True)  # the official form: selection shares
    shares = torch.softmax(scores, dim=1).mean(0)
    assert (shares < 0.2).all()
    penalty = torch.relu(0.2 - shares).mean()
    penalty.backward()
    assert penalty.item() == pytest.approx(0.2 - 1 / 10) and scores.grad.abs().max() < 1e-8


def test_schedule():
    assert [heads_frozen(e, 10) for e in (0, 4, 5, 9)] == [True, True, False, False]
    assert not any(heads_frozen(e, 10, 0.0) for e in range(10))
    assert batch_rows(150, 500) == 75  # 2 batches a pass: 1000 steps
    assert batch_rows(1333, 500) == 667  # 667 + 666, not 666 + 666 + 1
    assert batch_rows(600, 60) == 36  # 17 batches a pass: 1020 steps
    assert batch_rows(100_000, 500) == 2041 and batch_rows(3, 10) == 1  # 49 batches; 3 of 1
    values = [annealed(1.0, e, 10, 5.0) for e in range(10)]
    assert values[:5] == [1.0] * 5 and values[-1] == pytest.approx(0.2)
    assert np.all(np.diff(values[5:]) < 0) and math.isclose(values[5], 1.0)
