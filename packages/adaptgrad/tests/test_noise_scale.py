"""Stage 1: σ_i = m_i/(√2·erfinv(c)) bounds out-of-range sampling at 1 − c; σ = 0 on a bound."""

import math

import pytest
import torch
from paperplug_adaptgrad import (
    SmoothedGradient,
    adaptive_sigma,
    expected_out_of_range_rate,
    resolve_bounds,
    smoothgrad_sigma,
)


def draw_out_of_range(x, sigma, lo, hi, n):
    """Run the smoothing stage on a constant model and return its measured out-of-range rate."""
    smoother = SmoothedGradient(
        lambda p, t: torch.zeros_like(p),
        lambda p: sigma,
        n,
        bounds=(lo, hi),
        generator=torch.Generator().manual_seed(0),
    )
    smoother(x, torch.zeros(len(x), dtype=torch.long))
    return smoother.out_of_range_rate, smoother.n_drawn


def binomial_halfwidth(p, n, z=4.0):
    return z * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("c", [0.95, 0.99])
def test_each_dimension_stays_in_range_with_probability_c(c):
    x = torch.rand(200, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    lo, hi = resolve_bounds(x, (0.0, 1.0))
    sigma = adaptive_sigma(x, lo, hi, c)
    m = torch.minimum(x, 1 - x)
    assert torch.allclose(torch.erf(m / (math.sqrt(2) * sigma)), torch.full_like(x, c))


@pytest.mark.parametrize("c", [0.95, 0.99])
def test_out_of_range_rate_is_at_most_one_minus_c(c):
    x = torch.rand(50, 64, generator=torch.Generator().manual_seed(3))
    x[:, :16] = 0.0  # on the lower bound
    x[:, 16:24] = 1.0  # on the upper bound
    lo, hi = resolve_bounds(x, (0.0, 1.0))
    rate, n = draw_out_of_range(x, adaptive_sigma(x, lo, hi, c), lo, hi, 40)
    expected = expected_out_of_range_rate(x, adaptive_sigma(x, lo, hi, c), lo, hi)
    assert (1 - c) / 2 * 40 / 64 <= expected <= (1 - c) * 40 / 64
    assert abs(rate - expected) <= binomial_halfwidth(expected, n)
    assert rate <= (1 - c) + binomial_halfwidth(1 - c, n)


def test_at_the_centre_the_rate_is_exactly_one_minus_c():
    x = torch.full((100, 100), 0.5)
    lo, hi = resolve_bounds(x, (0.0, 1.0))
    rate, n = draw_out_of_range(x, adaptive_sigma(x, lo, hi, 0.95), lo, hi, 20)
    assert abs(rate - 0.05) <= binomial_halfwidth(0.05, n)


def test_smoothgrad_samples_out_of_range_far_more_often():
    x = torch.full((100, 100), 0.1)
    lo, hi = resolve_bounds(x, (0.0, 1.0))
    sigma = smoothgrad_sigma(x, lo, hi, 0.2)
    assert torch.all(sigma == 0.2)
    rate, n = draw_out_of_range(x, sigma, lo, hi, 20)
    exact = 0.5 * math.erfc(0.1 / 0.2 / math.sqrt(2)) + 0.5 * math.erfc(0.9 / 0.2 / math.sqrt(2))
    assert abs(rate - exact) <= binomial_halfwidth(exact, n)
    assert rate > 0.3


def test_sigma_is_zero_on_bounds_and_largest_at_the_centre():
    x = torch.tensor([[0.0, 1.0, 0.5, 0.25]])
    lo, hi = resolve_bounds(x, (0.0, 1.0))
    sigma = adaptive_sigma(x, lo, hi, 0.95)
    assert sigma[0, 0] == 0 and sigma[0, 1] == 0
    assert sigma[0, 2] == pytest.approx(0.5 / 1.959964, rel=1e-5)  # the normal 97.5% quantile
    assert sigma[0, 3] == pytest.approx(sigma[0, 2] / 2)


def test_per_channel_bounds():
    lo_c, hi_c = torch.tensor([-1.0, 0.0, -2.0]), torch.tensor([1.0, 4.0, 0.0])
    x = torch.stack([torch.full((2, 2), v) for v in (0.5, 0.0, -1.0)])[None]  # (1, 3, 2, 2)
    lo, hi = resolve_bounds(x, (lo_c, hi_c))
    m = adaptive_sigma(x, lo, hi, 0.95) * math.sqrt(2) * torch.erfinv(torch.tensor(0.95))
    assert torch.allclose(m[0, :, 0, 0], torch.tensor([0.5, 0.0, 1.0]))


@pytest.mark.parametrize(
    ("bounds", "error", "match"),
    [
        ((1.0, 0.0), ValueError, "lo < hi"),
        ((0.0,), TypeError, "pair"),
        ((0.0, float("nan")), ValueError, "finite"),
        (([0.0, 0.0], [1.0, 1.0]), ValueError, "per-channel"),
    ],
)
def test_bad_bounds_are_rejected(bounds, error, match):
    with pytest.raises(error, match=match):
        resolve_bounds(torch.zeros(2, 3, 4, 4), bounds)


@pytest.mark.parametrize("c", [0.0, 1.0, 1.5])
def test_confidence_outside_the_unit_interval_is_rejected(c):
    x = torch.zeros(1, 2)
    with pytest.raises(ValueError, match=r"c must lie in \(0.0, 1.0\)"):
        adaptive_sigma(x, *resolve_bounds(x, (0.0, 1.0)), c)
