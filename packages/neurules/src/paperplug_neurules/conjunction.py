"""Stage 2: rules as conjunctions with gradient shaping (paper §3.2).

r_j = Σ_i w_ji / Σ_i w_ji (1+η_j)/(π_ji + η_j), a weighted harmonic mean with η_j = ε/Σ_i w_ji
(detached). Its gradient w_i(1+η)/(π_i+η)² is largest on the failing conditions, which are
either repaired or dropped (w → 0), hence sparse rules. ε = 0 is the paper's ablation.
"""

from __future__ import annotations

import torch
from torch import nn

from paperplug.checks import check_float_tensor, check_scalar


def harmonic_and(pi: torch.Tensor, weights: torch.Tensor, eps: float) -> torch.Tensor:
    """Relaxed AND of predicates `pi` (batch, rules, features) with non-negative `weights` (rules, features)."""
    check_float_tensor(weights, "weights", ndim=2)
    check_float_tensor(pi, "pi", ndim=3)
    if pi.shape[1:] != weights.shape:
        raise ValueError(
            f"pi {tuple(pi.shape)} must be (batch, *weights.shape), weights "
            f"{tuple(weights.shape)}: one predicate per rule and feature"
        )
    if (weights < 0).any():
        raise ValueError("weights must be non-negative")
    return _harmonic_and(pi, weights, check_scalar(eps, "eps", low=0))


def _harmonic_and(pi: torch.Tensor, weights: torch.Tensor, eps: float) -> torch.Tensor:
    total = weights.sum(dim=1)  # (rules,)
    eta = (eps / total.clamp_min(1e-12)).detach()[None, :, None]
    inverse = (weights[None] * (1 + eta) / (pi + eta)).sum(dim=2)  # (batch, rules)
    return total[None] / inverse


class Conjunctions(nn.Module):
    """Feature weights per rule, w = ReLU(W), initialised to 0.5 as in the official code."""

    def __init__(self, n_rules: int, n_features: int, eps: float = 1e-3):
        super().__init__()
        rules = check_scalar(n_rules, "n_rules", "int", low=1)
        features = check_scalar(n_features, "n_features", "int", low=1)
        self.raw_weights = nn.Parameter(torch.full((rules, features), 0.5))
        self.eps = check_scalar(eps, "eps", low=0)

    @property
    def weights(self) -> torch.Tensor:
        return torch.relu(self.raw_weights)

    def forward(self, pi: torch.Tensor) -> torch.Tensor:
        return _harmonic_and(pi, self.weights, self.eps)
