"""The paper's other baselines: NoiseGrad (weight noise) and NoiseGrad++ (weight and input noise),
composed like SmoothGrad and AdaptGrad; checked against closed forms and identities."""

import math

import pytest
import torch
from paperplug_adaptgrad import (
    AdaptGrad,
    NoiseGrad,
    NoiseGradPlusPlus,
    SmoothGrad,
    WeightNoise,
)

from paperplug import seeded_torch


class Units(torch.nn.Module):
    """f(x) = Σ_i a_i·ReLU(w_i·x_i + b_i): one hidden unit per input, all three weights perturbed."""

    def __init__(self, w, b, a):
        super().__init__()
        self.w, self.b, self.a = (torch.nn.Parameter(v.clone()) for v in (w, b, a))

    def forward(self, x):
        return (self.a * torch.relu(self.w * x + self.b)).sum(1, keepdim=True)


def normal_cdf(z):
    return 0.5 * torch.erfc(-z / math.sqrt(2))


def normal_pdf(z):
    return torch.exp(-0.5 * z**2) / math.sqrt(2 * math.pi)


def test_weight_noise_smooths_a_relu_unit_as_the_closed_form_says():
    """With w, b, a each multiplied by η ~ N(1, s²), Z = w·η_w·x + b·η_b is normal and
    E ∂f/∂x = a·w·E[η_w·1(Z > 0)] = a·w·[Φ(μ/τ) + s²·w·x·φ(μ/τ)/τ] (Stein's lemma), μ = w·x + b,
    τ = s·√(w²x² + b²). The second moment, by quadrature over η_w, gives the Monte-Carlo error."""
    std, m = 0.2, 4000
    w = torch.tensor([1.0, 2.0, -1.5, 0.5, 1.0, -2.0], dtype=torch.float64)
    b = torch.tensor([-0.7, -0.5, 0.6, -0.1, 0.3, 0.9], dtype=torch.float64)
    a = torch.tensor([1.0, -0.5, 2.0, 1.5, -1.0, 0.7], dtype=torch.float64)
    x = torch.tensor([[0.8, 0.3, 0.5, 0.4, 0.9, 0.4]], dtype=torch.float64)
    got = NoiseGrad(std, m).explain(Units(w, b, a).eval(), x, target=0).values[0]

    mu, tau = w * x[0] + b, std * torch.sqrt(w**2 * x[0] ** 2 + b**2)
    closed = a * w * (normal_cdf(mu / tau) + std**2 * w * x[0] * normal_pdf(mu / tau) / tau)
    eta = torch.linspace(1 - 10 * std, 1 + 10 * std, 200_001, dtype=torch.float64)[:, None]
    density = normal_pdf((eta - 1) / std) / std * (eta[1] - eta[0])
    inside = normal_cdf((w * x[0] * eta + b) / (b.abs() * std))  # P(Z > 0 | η_w)
    torch.testing.assert_close((eta * inside * density).sum(0) * a * w, closed)
    second = (a * w) ** 2 * (1 + std**2) * (eta**2 * inside * density).sum(0)
    standard_error = torch.sqrt((second - closed**2) / m) * m / (m + 1)

    clean = a * w * (mu > 0)
    expected = (clean + m * closed) / (m + 1)  # the clean model is model 0
    assert torch.all((got - expected).abs() <= 4.5 * standard_error)
    naive = a * w * normal_cdf(mu / tau)  # without the weight's own correlation with Z
    assert torch.any((naive - closed).abs() > 4.5 * standard_error), "the test must tell them apart"


def test_without_noise_it_is_the_vanilla_gradient_under_any_base(cnn, digits_like):
    for base, kw in [("gradient", {}), ("integrated_gradients", {"n_steps": 4})]:
        plain = AdaptGrad(n_samples=0, base=base, **kw).explain(cnn, digits_like, target=1)
        noised = NoiseGrad(std=0.0, n_models=3, base=base, **kw).explain(cnn, digits_like, target=1)
        torch.testing.assert_close(noised.values, plain.values)


def test_linear_model_weights_on_average_and_skipped_parameters_stay_exact():
    """∂(Wx + b)_c/∂x = W_c ⊙ η: its mean over m models is W_c within s·|W_c|/√m; with the weights
    skipped only the bias is perturbed, which the gradient does not see."""
    with seeded_torch(0):
        model = torch.nn.Linear(12, 3).eval()
    x = torch.rand(4, 12, generator=torch.Generator().manual_seed(0))
    w = model.weight.detach()[2]
    m, std = 400, 0.2
    got = NoiseGrad(std, m).explain(model, x, target=2).values
    assert torch.all((got - w).abs() <= 4.5 * std * w.abs() / math.sqrt(m + 1))
    assert not torch.allclose(got, w.expand_as(got))
    exact = NoiseGrad(std, 5, skip=("weight",)).explain(model, x, target=2).values
    torch.testing.assert_close(exact, w.expand_as(exact))


def test_noisegrad_plus_plus_without_input_noise_is_noisegrad(cnn, digits_like):
    """NoiseGrad++ = NoiseGrad around SmoothGrad: with α = 0 the input samples all equal x, and the
    weight noise has its own stream, so it equals NoiseGrad under the same seed."""
    pp = NoiseGradPlusPlus(n_models=4, alpha=0.0, n_samples=3, seed=2)
    plain = NoiseGrad(n_models=4, seed=2)
    torch.testing.assert_close(
        pp.explain(cnn, digits_like, target=0).values,
        plain.explain(cnn, digits_like, target=0).values,
    )


def test_weight_noise_composes_with_adaptgrad_and_keeps_its_bound(cnn, digits_like):
    """NoiseGrad + AdaptGrad (a row of the paper's tables): AdaptGrad's out-of-range rate stays
    under 1 − c across all models' samples; SmoothGrad's inside NoiseGrad++ does not."""
    ours = AdaptGrad(n_samples=10, weight_noise=WeightNoise(0.2, 4))
    ours = ours.explain(cnn, digits_like, target=1)
    assert ours.meta["n_models"] == 4 and 0 < ours.meta["out_of_range_rate"] <= 0.05
    pp = NoiseGradPlusPlus(n_models=4, n_samples=10).explain(cnn, digits_like, target=1)
    assert pp.meta["out_of_range_rate"] > 0.2


def test_the_callers_model_is_not_written_to(cnn, digits_like):
    before = {k: v.clone() for k, v in cnn.state_dict().items()}
    NoiseGradPlusPlus(n_models=3, n_samples=2).explain(cnn, digits_like, target=0)
    after = cnn.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize(
    ("explainer", "model", "error", "match"),
    [
        (NoiseGrad(), lambda x: x.sum(1, keepdim=True), TypeError, "torch.nn.Module"),
        (NoiseGrad(n_models=0), None, ValueError, "n_models"),
        (NoiseGrad(std=-0.1), None, ValueError, "std"),
        (NoiseGrad(skip="classifier"), None, TypeError, "skip"),
        (SmoothGrad(weight_noise=WeightNoise(n_models=1.5)), None, TypeError, "n_models"),
    ],
)
def test_bad_weight_noise_settings(cnn, digits_like, explainer, model, error, match):
    with pytest.raises(error, match=match):
        explainer.explain(cnn if model is None else model, digits_like, target=0)
