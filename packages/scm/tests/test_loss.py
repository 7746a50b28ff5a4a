"""The dual loss against hand computations (paper §4.2)."""

import math

import pytest
import torch
import torch.nn.functional as F
from paperplug_scm import DualSupervisionLoss, logic_consistency_loss


def _p1(l0, l1):
    return math.exp(l1) / (math.exp(l0) + math.exp(l1))


def test_logic_loss_equals_hand_computation():
    response = torch.tensor([[0.0, 2.0], [1.0, -1.0]])
    tokens = torch.tensor(
        [[[0.0, 1.0], [0.0, -1.0], [0.0, 3.0]], [[2.0, 0.0], [0.0, 0.5], [0.0, 0.0]]]
    )
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])  # the 3rd token of row 0 is masked out
    c_hol = [_p1(0, 2), _p1(1, -1)]
    c_max = [max(_p1(0, 1), _p1(0, -1)), max(_p1(2, 0), _p1(0, 0.5), _p1(0, 0))]
    hand = -sum(math.log(1 - h + h * m) for h, m in zip(c_hol, c_max, strict=True)) / 2
    assert logic_consistency_loss(response, tokens, mask).item() == pytest.approx(hand, abs=1e-6)
    c_avg = [(_p1(0, 1) + _p1(0, -1)) / 3, (_p1(2, 0) + _p1(0, 0.5) + _p1(0, 0)) / 3]
    hand_avg = -sum(math.log(1 - h + h * m) for h, m in zip(c_hol, c_avg, strict=True)) / 2
    got = logic_consistency_loss(response, tokens, mask, reduce="avg").item()
    assert got == pytest.approx(hand_avg, abs=1e-6)


def test_logic_loss_is_zero_for_a_benign_verdict_and_clamped():
    benign = torch.tensor([[50.0, -50.0]])  # c_hol = 0: the implication holds whatever tokens say
    tokens = torch.zeros(1, 4, 2)
    assert logic_consistency_loss(benign, tokens, torch.ones(1, 4)).item() == pytest.approx(0)
    harmful = torch.tensor([[-50.0, 50.0]])  # c_hol = 1 and every token masked: -log(1e-8)
    got = logic_consistency_loss(harmful, tokens, torch.zeros(1, 4)).item()
    assert got == pytest.approx(-math.log(1e-8), rel=1e-5)


def test_dual_loss_is_the_weighted_sum():
    torch.manual_seed(0)
    tokens, response = torch.randn(2, 5, 2), torch.randn(2, 2)
    labels = torch.tensor([[-100, 0, 1, 1, -100], [-100, -100, 0, 0, 0]])
    y = torch.tensor([1, 0])
    parts = DualSupervisionLoss(alpha=0.6, gamma=1.0)(tokens, response, labels, y)
    keep = labels != -100
    ce_tok = F.cross_entropy(tokens[keep], labels[keep])
    ce_resp = F.cross_entropy(response, y)
    logic = logic_consistency_loss(response, tokens, keep)
    assert parts["loss"].item() == pytest.approx(
        (0.6 * ce_tok + 0.4 * ce_resp + logic).item(), abs=1e-6
    )
    assert parts["token"].item() == pytest.approx(ce_tok.item(), abs=1e-6)


@pytest.mark.parametrize(
    "kw", [{"alpha": 1.5}, {"alpha": -0.1}, {"gamma": -1.0}, {"reduce": "median"}]
)
def test_bad_loss_settings_rejected(kw):
    with pytest.raises(ValueError):
        DualSupervisionLoss(**kw)
