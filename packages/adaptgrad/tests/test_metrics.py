"""Stage 4: Gini sparseness, out-of-range rate and the deletion curve, on cases with known answers."""

import pytest
import torch
from paperplug_adaptgrad import deletion_auc, deletion_curve, gini, out_of_range_rate

from paperplug import seeded_torch


def test_gini_of_known_maps():
    d = 10
    one_hot = torch.zeros(1, d)
    one_hot[0, 3] = -5.0
    flat = torch.full((1, d), 2.0)
    ramp = torch.arange(1.0, 5.0)[None]  # Σ(2k − 5)·k / (4·10) = 10/40
    maps = torch.cat([one_hot, flat, torch.zeros(1, d)])
    assert gini(maps).tolist() == pytest.approx([(d - 1) / d, 0.0, 0.0])
    assert gini(ramp).item() == pytest.approx(0.25)


def test_out_of_range_rate_counts_coordinates():
    samples = torch.tensor([[-0.1, 0.0, 0.5, 1.0], [1.2, 0.3, 0.3, 0.3]])
    assert out_of_range_rate(samples, torch.tensor(0.0), torch.tensor(1.0)) == 0.25


def test_deletion_curve_by_brute_force():
    """Three-feature softmax model: each step's probability equals the model on the masked input."""
    with seeded_torch(0):
        model = torch.nn.Linear(3, 2).eval()
    x = torch.tensor([[0.9, 0.2, 0.6]])
    attribution = torch.tensor([[0.1, 3.0, -1.0]])  # deletion order: feature 1, 0, 2
    curve = deletion_curve(model, x, attribution, torch.tensor([1]), steps=3, fill=0.0)
    masked = torch.tensor([[0.9, 0.2, 0.6], [0.9, 0.0, 0.6], [0.0, 0.0, 0.6], [0.0, 0.0, 0.0]])
    expected = model(masked).softmax(1)[:, 1].detach()
    torch.testing.assert_close(curve[0], expected)
    assert deletion_auc(curve).item() == pytest.approx(torch.trapezoid(expected, dx=1 / 3).item())


def test_deletion_rewards_the_true_attribution():
    """On a linear two-class model, the exact ∂/∂x·x ranking falls faster than its reverse."""
    with seeded_torch(1):
        model = torch.nn.Linear(20, 2).eval()
    x = torch.rand(8, 20, generator=torch.Generator().manual_seed(1))
    truth = (model.weight[1] - model.weight[0]).detach() * x
    targets = torch.ones(8, dtype=torch.long)
    good = deletion_auc(deletion_curve(model, x, truth, targets))
    bad = deletion_auc(deletion_curve(model, x, -truth, targets))
    assert torch.all(good < bad)


def test_deletion_rejects_misshapen_attributions():
    with pytest.raises(ValueError, match="shaped like x"):
        deletion_curve(
            torch.nn.Linear(4, 2),
            torch.zeros(2, 4),
            torch.zeros(2, 3),
            torch.zeros(2, dtype=torch.long),
        )
