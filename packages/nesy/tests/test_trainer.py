"""The trainer on digits bags: it learns instance classes from σ alone, the test-time
mitigation lifts the rare classes, seeds reproduce, bad inputs are named, nothing is mutated."""

import numpy as np
import pytest
import torch
from paperplug_nesy import (
    NeSyImbalanceTrainer,
    detection_weights,
    logit_adjustment,
    max_of,
    report,
    sum_of,
)
from paperplug_nesy.embedded import long_tailed_bags
from paperplug_nesy.metrics import per_class_accuracy

from paperplug.checks import NotFittedError

SMALL = {"epochs": 8, "progress": False}


@pytest.fixture(scope="module")
def balanced():
    return long_tailed_bags(max_of(3), n_bags=800, rho=1.0, seed=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_learns_digit_classes_from_the_max_of_three(balanced, seed):
    model = NeSyImbalanceTrainer(seed=seed, **SMALL).fit(balanced.bags, balanced.s)
    pred = model.predict(balanced.test_X)
    # chance is 0.1; measured 0.76-0.84 over seeds 0-2 after 8 epochs
    assert report(pred, balanced.test_y)["balanced"] > 0.7
    # σ-induced imbalance on balanced data, as the risk bound orders it: the five classes MAX
    # exposes least (smallest ω) keep ≥ 2× the error of the other five (0.27-0.38 vs 0.09-0.11)
    weights = detection_weights(max_of(3), np.full(10, 0.1))
    risk = 1 - per_class_accuracy(pred, balanced.test_y)
    low = np.argsort(weights)[:5]
    assert risk[low].mean() >= 2 * np.delete(risk, low).mean(), risk


def test_learns_from_sums_of_two():
    data = long_tailed_bags(sum_of(2), n_bags=800, rho=1.0, seed=0)
    model = NeSyImbalanceTrainer(sigma="sum", M=2, **SMALL).fit(data.bags, data.s)
    assert report(model.predict(data.test_X), data.test_y)["balanced"] > 0.7


def test_test_time_mitigation_lifts_the_rare_classes_at_ratio_50():
    """On all three seeds: CAROT toward the balanced test prior raises few-shot accuracy over
    the same model's plain predictions and loses at most 1 point of balanced accuracy."""
    for seed in range(3):
        data = long_tailed_bags(max_of(3), n_bags=1000, rho=50.0, seed=seed)
        model = NeSyImbalanceTrainer(
            test_mitigation="carot", test_prior="uniform", seed=seed, **SMALL
        ).fit(data.bags, data.s)
        plain = report(model.predict(data.test_X), data.test_y)
        carot = report(model.predict_calibrated(data.test_X), data.test_y)
        assert carot["few"] > plain["few"], (seed, plain, carot)
        assert carot["balanced"] >= plain["balanced"] - 0.01, (seed, plain, carot)
        # LA toward the known uniform test prior (τ = 1) on the same classifier: more still
        la = logit_adjustment(model._logits(data.test_X), model.marginal_, 1.0, np.full(10, 0.1))
        la = report(la.argmax(1), data.test_y)
        assert la["few"] >= carot["few"] and la["balanced"] >= plain["balanced"], (seed, la)


def test_la_toward_a_known_test_prior_is_the_bayes_rule():
    """With test_prior given, LA is logits − log r̂ + log π at τ = 1, not chosen on the
    validation bags (they follow the training prior)."""
    data = long_tailed_bags(max_of(3), n_bags=200, rho=50.0, seed=0)
    prior = np.linspace(1, 2, 10) / np.linspace(1, 2, 10).sum()
    for test_prior, log_pi in [("uniform", np.zeros(10)), (prior, np.log(prior))]:
        model = NeSyImbalanceTrainer(
            test_mitigation="la", test_prior=test_prior, epochs=2, progress=False
        ).fit(data.bags, data.s)
        logits = model._logits(data.test_X)
        expected = (logits - np.log(model.marginal_) + log_pi).argmax(1)
        assert model.la_tau_ == 1.0
        assert np.array_equal(model.predict_calibrated(data.test_X), expected)
    # a marginal the weak labels do not identify (fit warns): a class estimated near 0 would
    # take every prediction at τ = 1, so τ is chosen on the validation bags (grid: no 1.0)
    with pytest.warns(UserWarning, match="poorly identified"):
        model = NeSyImbalanceTrainer(
            test_mitigation="la", test_prior="uniform", epochs=1, progress=False
        ).fit(data.bags[:40], data.s[:40])
    assert model.marginal_error_ > 0.2 and model.la_tau_ != 1.0
    # the Bayes rule needs no validation bags
    model = NeSyImbalanceTrainer(
        test_mitigation="la", test_prior="uniform", val_fraction=0.0, epochs=1, progress=False
    ).fit(data.bags, data.s)
    assert model.la_tau_ == 1.0 and len(model.predict_calibrated(data.test_X)) == len(data.test_y)


@pytest.mark.parametrize("scope", ["dataset", "batch"])
def test_the_lp_trains_on_its_pseudo_labels(balanced, scope):
    model = NeSyImbalanceTrainer(
        train_mitigation="lp", lp_scope=scope, marginal=balanced.marginal, **SMALL
    )
    model.fit(balanced.bags, balanced.s)
    assert len(model.history_["lp_epsilon"]) == 4  # after 4 warm-up epochs of semantic loss
    band = model.history_["lp_epsilon"][-1]
    # over the data: 3 sd of the largest class count of 2,400 instances (45.4); per batch: 0.99,
    # widened by 1, 2, 4... on the batches where it is infeasible
    assert band == pytest.approx(45.4, abs=0.5) if scope == "dataset" else band >= 0.99
    assert report(model.predict(balanced.test_X), balanced.test_y)["balanced"] > 0.7
    assert report(model.predict(balanced.test_X), balanced.test_y)["balanced"] > 0.7


def test_same_seed_same_model_and_the_callers_module_is_not_trained(balanced):
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 10))
    before = [p.detach().clone() for p in net.parameters()]
    a = NeSyImbalanceTrainer(model=net, **SMALL).fit(balanced.bags, balanced.s)
    b = NeSyImbalanceTrainer(model=net, **SMALL).fit(balanced.bags, balanced.s)
    assert all(torch.equal(x, y) for x, y in zip(before, net.parameters(), strict=True))
    assert np.array_equal(a._logits(balanced.test_X), b._logits(balanced.test_X))
    c = NeSyImbalanceTrainer(seed=5, **SMALL).fit(balanced.bags, balanced.s)
    assert not np.array_equal(a._logits(balanced.test_X), c._logits(balanced.test_X))


def test_bad_inputs_are_named():
    rng = np.random.default_rng(0)
    bags, s = rng.normal(size=(10, 3, 4)), rng.integers(0, 10, size=10)
    fit = NeSyImbalanceTrainer(**SMALL).fit
    with pytest.raises(ValueError, match="bags must be"):
        fit(bags[:, :2], s)
    with pytest.raises(ValueError, match="bags and s must have the same number of rows"):
        fit(bags, s[:5])
    with pytest.raises(ValueError, match=r"s holds \[12\], which MAX-3 cannot output"):
        fit(bags, np.full(10, 12))
    with pytest.raises(ValueError, match="NaN"):
        fit(np.full((10, 3, 4), np.nan), s)
    with pytest.raises(ValueError, match="marginal must be"):
        NeSyImbalanceTrainer(marginal=np.ones(10), **SMALL).fit(bags, s)
    with pytest.raises(ValueError, match="test_prior"):
        NeSyImbalanceTrainer(test_prior="balanced", **SMALL).fit(bags, s)
    with pytest.raises(ValueError, match="train_mitigation"):
        NeSyImbalanceTrainer(train_mitigation="oversample", **SMALL).fit(bags, s)
    with pytest.raises(ValueError, match="sigma must be"):
        NeSyImbalanceTrainer(sigma="min", **SMALL).fit(bags, s)
    with pytest.raises(TypeError, match="model must be"):
        NeSyImbalanceTrainer(model=3, **SMALL).fit(bags, s)
    with pytest.raises(NotFittedError):
        NeSyImbalanceTrainer().predict(bags[0])
    fitted = NeSyImbalanceTrainer(**SMALL).fit(bags, s)
    with pytest.raises(ValueError, match=r"X must be \(n, 4\) instances"):
        fitted.predict(bags[0][:, :3])


def test_the_naive_marginal_is_the_official_moving_average_of_predictions():
    """marginal="naive": r̂ starts uniform, moves by γ₁ after each of the `naive_epochs`
    pre-estimation LP epochs and by γ₂ after each final LP epoch, toward the share of the
    classifier's argmax predictions on all training instances."""
    data = long_tailed_bags(max_of(3), n_bags=200, rho=50.0, seed=0)
    g1, g2 = 0.5, 0.25
    model = NeSyImbalanceTrainer(
        train_mitigation="lp", marginal="naive", epochs=4, warmup_epochs=2, naive_epochs=2,
        naive_gamma=(g1, g2), progress=False,
    ).fit(data.bags, data.s)  # fmt: skip
    stages = [r["stage"] for r in model.history_.records]
    assert stages == ["sl", "sl", "naive", "naive", "lp", "lp"]
    path = np.array(model.history_["marginal"])  # (4, C): after each LP epoch
    n = data.bags.shape[0] * 3
    # the first step from uniform: r = γ₁·(counts/n) + (1 − γ₁)/C, counts integers summing to n
    counts = (path[0] - (1 - g1) / 10) / g1 * n
    assert np.allclose(counts, counts.round(), atol=1e-6) and round(counts.sum()) == n
    assert (counts.round() >= 0).all() and len(set(counts.round())) > 1
    # the last step: γ₂ toward the final classifier's prediction shares
    shares = np.bincount(model.predict(data.bags.reshape(-1, 64)), minlength=10) / n
    assert np.allclose(model.marginal_, g2 * shares + (1 - g2) * path[-2], atol=1e-12)
    assert np.allclose(path[-1], model.marginal_)
    with pytest.raises(ValueError, match=r'marginal="naive".*train_mitigation="lp"'):
        NeSyImbalanceTrainer(marginal="naive", **SMALL).fit(data.bags, data.s)
    with pytest.raises(TypeError, match="naive_gamma must be a pair"):
        NeSyImbalanceTrainer(naive_gamma=0.05, **SMALL).fit(data.bags, data.s)
