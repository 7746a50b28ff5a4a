"""Stage 1: learnable soft interval predicates π ≈ 1[α < x < β] (paper §3.1)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from paperplug.checks import check_float_tensor, check_scalar, check_type
from paperplug_neurules.validation import check_generator, check_weight


def soft_interval(
    x: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor, temperature: float
) -> torch.Tensor:
    """π = softmax([x, 2x−α, 3x−α−β]/t)[1] = 1 / (1 + e^{(α−x)/t} + e^{(x−β)/t}).

    Computed as exp(−logaddexp(softplus((α−x)/t), (x−β)/t)) = exp(−log(1 + e^u + e^v)), stable
    for any t > 0 and faster than a 3-way logsumexp; tends to the indicator of α < x < β as
    t → 0.
    """
    for name, value in (("x", x), ("alpha", alpha), ("beta", beta)):
        check_float_tensor(value, name)
    try:
        torch.broadcast_shapes(x.shape, alpha.shape, beta.shape)
    except RuntimeError as exc:
        raise ValueError(f"x, alpha and beta must broadcast together: {exc}") from None
    check_scalar(temperature, "temperature", low=0, inclusive="neither")
    return _soft_interval(x, alpha, beta, temperature)


def _soft_interval(
    x: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor, temperature: float
) -> torch.Tensor:
    below = F.softplus((alpha - x) / temperature)
    return torch.exp(-torch.logaddexp(below, (x - beta) / temperature))


def weighted_quantile(x: torch.Tensor, weight: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Per column of `x` (n, d), the smallest value whose weighted CDF reaches q (d, k): numpy's
    "inverted_cdf" quantile with row weights, so integer weights act as repeated rows."""
    check_float_tensor(x, "x", ndim=2)
    check_type(weight, "weight", torch.Tensor)
    check_weight(weight, "weight", len(x))
    check_float_tensor(q, "q", shape=(x.shape[1], None))
    if (q < 0).any() or (q > 1).any():
        raise ValueError("q must hold quantile levels in [0, 1]")
    values, order = x.sort(dim=0)
    w = weight.double()[order]
    cdf = w.cumsum(dim=0) / w.sum(dim=0)  # (n, d)
    index = torch.searchsorted(cdf.T.contiguous(), q.double().contiguous())  # (d, k)
    return values.gather(0, index.clamp_max(len(x) - 1).T)  # (k, d)


def initial_cut_points(
    x: torch.Tensor, weight: torch.Tensor, n_rules: int, spread: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """(α, β), each (rules, features): α at the u-quantile and β at the (1−u')-quantile of each
    feature, u, u' ~ U(0, spread) drawn per rule and feature, so every rule starts as a box
    around most of the data, but a different box. spread = 0 gives the official start: every
    rule at each feature's (min, max), so that rules answering the same class start identical
    and stay near-duplicates."""
    check_float_tensor(x, "x", ndim=2)
    check_type(weight, "weight", torch.Tensor)
    check_weight(weight, "weight", len(x))
    check_scalar(n_rules, "n_rules", "int", low=1)
    check_scalar(spread, "spread", low=0, high=0.5)
    check_generator(generator)
    u = torch.rand(2, x.shape[1], n_rules, generator=generator) * spread
    return weighted_quantile(x, weight, u[0]), weighted_quantile(x, weight, 1 - u[1])


class IntervalPredicates(nn.Module):
    """One interval α < x < β per (rule, feature), from the (rules, features) cut points given."""

    def __init__(self, lower: torch.Tensor, upper: torch.Tensor, temperature: float):
        super().__init__()
        check_float_tensor(lower, "lower", ndim=2)
        check_float_tensor(upper, "upper", ndim=2)
        if upper.shape != lower.shape:
            raise ValueError(
                f"upper {tuple(upper.shape)} and lower {tuple(lower.shape)} must have "
                "the same shape (rules, features)"
            )
        check_scalar(temperature, "temperature", low=0, inclusive="neither")
        # (rules, features) each; α ≤ β kept by sort_cut_points after every step
        self.alpha = nn.Parameter(lower.clone())
        self.beta = nn.Parameter(upper.clone())
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, features) -> (batch, rules, features)
        return _soft_interval(x[:, None, :], self.alpha[None], self.beta[None], self.temperature)

    @torch.no_grad()
    def sort_cut_points(self) -> None:
        """Keep α ≤ β (the official code sorts the pair after each optimiser step)."""
        lo, hi = torch.minimum(self.alpha, self.beta), torch.maximum(self.alpha, self.beta)
        self.alpha.copy_(lo)
        self.beta.copy_(hi)
