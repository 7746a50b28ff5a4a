"""The attributor on digits with a small MLP: its scores predict subset-trained models (LDS
clearly positive for every compressor), FactGraSS is within reach of dense JL, damping is
chosen on validation points and never 0, nothing the caller passed is changed."""

import numpy as np
import pytest
import torch
from paperplug_grass import InfluenceAttributor, lds
from paperplug_grass.attributor import GradientFeatures
from paperplug_grass.embedded import digits, ground_truth, mlp, train

from paperplug.checks import NotFittedError


@pytest.fixture(scope="module")
def case():
    data = digits(0)
    ckpts = [train(data.X, data.y, seed=s, epochs=10, width=32) for s in range(2)]
    subsets, val, test = ground_truth(data, n_models=24, cache=False, width=32, epochs=10)
    return data, ckpts, subsets, val, test


def score(case, kind, k, seed=0):
    data, ckpts, subsets, val, test = case
    a = InfluenceAttributor(kind, k, seed=seed).cache(ckpts, data.X, data.y)
    a.choose_damping(data.X_val, data.y_val, subsets, val)
    return lds(a.attribute(data.X_test, data.y_test), subsets, test)[0], a


@pytest.mark.parametrize("kind", ["gauss", "grass", "factgrass"])
def test_scores_predict_models_trained_on_subsets(case, kind):
    value, a = score(case, kind, 256)
    assert value > 0.2, value  # measured 0.3–0.4 with 24 subset models
    assert a.damping > 0 and a.damping in a.damping_scores_


def test_factgrass_is_within_reach_of_dense_jl(case):
    fact = np.mean([score(case, "factgrass", 512, seed)[0] for seed in range(2)])
    gauss = np.mean([score(case, "gauss", 512, seed)[0] for seed in range(2)])
    assert fact >= gauss - 0.05, (fact, gauss)


def test_the_caller_keeps_its_models_and_data(case):
    data, ckpts, *_ = case
    ckpts[0].train()
    before = [p.detach().clone() for p in ckpts[0].parameters()]
    grads = [None if p.grad is None else p.grad.clone() for p in ckpts[0].parameters()]
    X = data.X.copy()
    InfluenceAttributor("grass", 64).cache(ckpts, data.X, data.y).attribute(
        data.X_test[:5], data.y_test[:5]
    )
    assert ckpts[0].training and all(
        torch.equal(a, b) for a, b in zip(before, ckpts[0].parameters(), strict=True)
    )
    assert np.array_equal(X, data.X)
    after = [p.grad for p in ckpts[0].parameters()]
    assert all(
        (g is None and h is None) or torch.equal(g, h) for g, h in zip(grads, after, strict=True)
    )
    ckpts[0].eval()


def test_bad_input_is_named(case):
    data, ckpts, *_ = case
    with pytest.raises(ValueError, match="damping must be > 0"):
        InfluenceAttributor("grass", 64, damping=0.0)
    with pytest.raises(NotFittedError):
        InfluenceAttributor("grass", 64).attribute(data.X_test, data.y_test)
    with pytest.raises(ValueError, match="X and y must have the same number of rows"):
        InfluenceAttributor("grass", 64).cache(ckpts, data.X, data.y[:10])
    with pytest.raises(ValueError, match="target must be one of"):  # at construction
        InfluenceAttributor("grass", 64, target="accuracy")
    with pytest.raises(ValueError, match="kind must be one of"):
        InfluenceAttributor("fjlt", 64)
    with pytest.raises(ValueError, match="k must be >= 1"):
        InfluenceAttributor("factgrass", 0)
    with pytest.raises(TypeError, match="blowup must be an int"):
        InfluenceAttributor("grass", 64, blowup=0.5)


def test_the_issue_33_examples_are_named(case):
    """NaN training data, a test set of the wrong width, a label out of range, a ReLU named as
    a layer: each a ValueError naming the argument, not a LinAlgError or a torch trace."""
    data, ckpts, *_ = case
    X_nan = data.X.copy()
    X_nan[3, 5] = np.nan
    with pytest.raises(ValueError, match=r"^X holds NaN"):
        InfluenceAttributor("grass", 64).cache(ckpts, X_nan, data.y)
    fitted = InfluenceAttributor("grass", 64).cache(ckpts[0], data.X[:50], data.y[:50])
    with pytest.raises(ValueError, match=r"X does not fit the model.*mat1 and mat2"):
        fitted.attribute(np.zeros((3, 65), np.float32), data.y_test[:3])
    with pytest.raises(ValueError, match=r"y must hold class labels in \[0, 10\).*got \[0, 10\]"):
        fitted.attribute(data.X_test[:3], [0, 1, 10])
    with pytest.raises(
        ValueError, match=r"layers\[0\] = '1' is a ReLU, not nn.Linear or nn.Conv2d"
    ):
        InfluenceAttributor("factgrass", 64, layers=["1"]).cache(ckpts[0], data.X, data.y)
    with pytest.raises(TypeError, match="model must be a torch module or a list of them"):
        InfluenceAttributor("grass", 64).explain("mlp", (data.X[:2], data.y[:2]),
                                                 train=(data.X, data.y))  # fmt: skip
    with pytest.raises(ValueError, match=r"train\[0\] holds NaN"):
        InfluenceAttributor("grass", 64).explain(ckpts, (data.X[:2], data.y[:2]),
                                                 train=(X_nan, data.y))  # fmt: skip


def test_block_preconditioner_is_one_relatively_damped_efim_per_layer():
    data = digits(0)
    model = mlp(0, 16)  # three linear layers: k = 30 gives each a block of 10 features
    X, y, Xt, yt = data.X[:60], data.y[:60], data.X_test[:7], data.y_test[:7]
    features = GradientFeatures("factgrass", 30)  # the attributor's projection (same seed)
    phi, q = features(model, X, y), features(model, Xt, yt)

    def brute(cols, relative):
        a, b = phi[:, cols], q[:, cols]
        F = a.T @ a / len(a)
        lam = 0.1 * (torch.trace(F) / len(F) if relative else 1.0)
        return a @ torch.linalg.solve(F + lam * torch.eye(len(F), dtype=F.dtype), b.T)

    block = sum(brute(slice(10 * i, 10 * i + 10), True) for i in range(3))
    full = brute(slice(0, 30), False)
    for pre, expected in (("auto", block), ("block", block), ("full", full)):
        a = InfluenceAttributor(
            "factgrass", 30, damping=0.1, trak_weighting=False, preconditioner=pre
        )
        scores = a.cache(model, X, y).attribute(Xt, yt)
        np.testing.assert_allclose(scores, expected.numpy(), rtol=1e-6, atol=1e-9)
    assert InfluenceAttributor("gauss", 30).preconditioner == "full"
    with pytest.raises(ValueError, match="preconditioner"):
        InfluenceAttributor("gauss", 30, preconditioner="block")
    with pytest.raises(ValueError, match="preconditioner"):
        InfluenceAttributor("factgrass", 30, preconditioner="diag")


@pytest.mark.parametrize("kind", ["sjlt", "factgrass"])
def test_checkpoints_share_one_projection_and_scores_average(case, kind):
    data, ckpts, *_ = case
    both = InfluenceAttributor(kind, 64, damping=1e-2).cache(ckpts, data.X, data.y)
    assert both.features_[0] is both.features_[1]  # drawn once, used for every checkpoint
    alone = [InfluenceAttributor(kind, 64, damping=1e-2).cache(m, data.X, data.y) for m in ckpts]
    mean = sum(a.attribute(data.X_test[:5], data.y_test[:5]) for a in alone) / 2
    np.testing.assert_allclose(both.attribute(data.X_test[:5], data.y_test[:5]), mean, atol=1e-10)


def test_checkpoints_of_two_architectures_are_rejected(case):
    data, ckpts, *_ = case
    other = mlp(width=16)
    with pytest.raises(ValueError, match="share one architecture"):
        InfluenceAttributor("sjlt", 64).cache([ckpts[0], other], data.X, data.y)
