"""The loss, Algorithm 1, the calibration and the metrics on hand-computed cases."""

import numpy as np
import pytest
import torch
from paperplug_eareranker import (
    BIN_NAMES,
    EAReranker,
    EARScorer,
    adequacy_bin,
    aggregate_judges,
    bin_aware_mse,
    calibrate_within_bins,
    listwise_loss,
)


def test_bins_follow_the_paper_edges():
    scores = [0.0, 0.099, 0.1, 0.25, 0.49, 0.5, 0.75, 0.899, 0.9, 1.0]
    assert adequacy_bin(scores).tolist() == [0, 0, 1, 2, 2, 3, 4, 4, 5, 5]
    assert EAReranker.adequacy_bin([0.05, 0.95]) == ["irrelevant", "precise"]
    assert len(BIN_NAMES) == 6
    with pytest.raises(ValueError, match="scores holds NaN"):
        adequacy_bin([float("nan")])  # was 'precise'
    with pytest.raises(ValueError, match=r"scores must be adequacy scores in \[0, 1\]"):
        EAReranker.adequacy_bin([1.2])


def test_bin_aware_loss_by_hand():
    pred, target = torch.tensor([0.95, 0.30, 0.05]), torch.tensor([0.92, 0.80, 0.50])
    # bins: pred (5, 2, 0), target (5, 4, 3): weights 1, 1 + 2α, 1 + 3α
    alpha = 0.5
    expected = (1 * 0.03**2 + 2.0 * 0.5**2 + 2.5 * 0.45**2) / 3
    assert bin_aware_mse(pred, target, alpha).item() == pytest.approx(expected)
    assert bin_aware_mse(pred, target, 0.0).item() == pytest.approx(
        torch.mean((pred - target) ** 2).item()
    )
    with pytest.raises(ValueError, match="shapes differ"):
        bin_aware_mse(pred, target[:2])


def test_algorithm_1_every_branch():
    assert aggregate_judges([0.8, 0.9, 0.85, 0.7, 0.1, 0.0, 0.2]) == (
        pytest.approx(0.8125),
        "first agree",
    )
    label, branch = aggregate_judges([0.9, 0.1, 0.85, 0.8, 0.75, 0.2, 0.3])
    assert branch == "consistent subset" and label == pytest.approx((0.9 + 0.85 + 0.8 + 0.75) / 4)
    label, branch = aggregate_judges([0.0, 0.3, 0.6, 0.9, 0.15, 0.45, 0.75])
    assert branch == "mean of all" and label == pytest.approx(
        np.mean([0.0, 0.3, 0.6, 0.9, 0.15, 0.45, 0.75])
    )
    with pytest.raises(ValueError, match="at least 4"):
        aggregate_judges([0.5, 0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        aggregate_judges([0.5, 0.5, 1.5, 0.5])


def test_calibration_keeps_bins_and_follows_the_reranker():
    labels = np.array([0.8, 0.8, 0.8, 0.3, 0.3])
    reranker = np.array([2.0, 0.0, 1.0, 5.0, 5.0])
    out = calibrate_within_bins(labels, reranker)
    assert (adequacy_bin(out) == adequacy_bin(labels)).all()
    assert out[0] > out[2] > out[1] and out[1] == pytest.approx(0.75)
    assert out[3] == out[4] == pytest.approx(0.375)  # ties: the bin's midpoint


def test_listwise_loss_by_hand():
    logits = torch.tensor([2.0, 0.0, 1.0, 3.0, 3.0])
    target = torch.tensor([0.9, 0.1, 0.5, 0.2, 0.2])
    group = torch.tensor([0, 0, 0, 1, 1])
    p = torch.softmax(target[:3] / 0.1, 0)  # query 0; query 1's two documents tie: log 2 either way
    expected = (-(p * torch.log_softmax(logits[:3], 0)).sum() + torch.log(torch.tensor(2.0))) / 2
    assert listwise_loss(logits, target, group).item() == pytest.approx(expected.item(), rel=1e-5)
    assert listwise_loss(logits[:1], target[:1], group[:1]).item() == pytest.approx(0.0, abs=1e-6)


def test_the_cosine_residual_starts_as_cosine():
    rng = np.random.default_rng(0)
    q, d = torch.tensor(rng.normal(size=(40, 12))), torch.tensor(rng.normal(size=(40, 12)))
    scorer = EARScorer(12, d_model=16, layers=1, heads=2, interaction=True, cosine_residual=True)
    scorer.eval()
    with torch.no_grad():
        scores = scorer(q.float(), d.float())
    cosine = torch.nn.functional.cosine_similarity(q, d, dim=-1)
    assert torch.equal(torch.argsort(scores), torch.argsort(cosine))
    assert torch.allclose(scores, torch.sigmoid(8 * cosine - 4).float(), atol=1e-6)
