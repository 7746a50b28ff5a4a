"""Stage 1: learnable soft interval predicates π ≈ 1[α < x < β] (paper §3.1)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def soft_interval(
    x: torch.Tensor, alpha: torch.Tensor, beta: torch.Tensor, temperature: float
) -> torch.Tensor:
    """π = softmax([x, 2x−α, 3x−α−β]/t)[1] = 1 / (1 + e^{(α−x)/t} + e^{(x−β)/t}).

    Computed as exp(−logaddexp(softplus((α−x)/t), (x−β)/t)) = exp(−log(1 + e^u + e^v)), stable
    for any t > 0 and faster than a 3-way logsumexp; tends to the indicator of α < x < β as
    t → 0.
    """
    below = F.softplus((alpha - x) / temperature)
    return torch.exp(-torch.logaddexp(below, (x - beta) / temperature))


class IntervalPredicates(nn.Module):
    """One interval per (rule, feature); cut points start at each feature's (min, max)."""

    def __init__(self, lower: torch.Tensor, upper: torch.Tensor, n_rules: int, temperature: float):
        super().__init__()
        # (rules, features) each; α ≤ β kept by sort_cut_points after every step
        self.alpha = nn.Parameter(lower.expand(n_rules, -1).clone())
        self.beta = nn.Parameter(upper.expand(n_rules, -1).clone())
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (batch, features) -> (batch, rules, features)
        return soft_interval(x[:, None, :], self.alpha[None], self.beta[None], self.temperature)

    @torch.no_grad()
    def sort_cut_points(self) -> None:
        """Keep α ≤ β (the official code sorts the pair after each optimiser step)."""
        lo, hi = torch.minimum(self.alpha, self.beta), torch.maximum(self.alpha, self.beta)
        self.alpha.copy_(lo)
        self.beta.copy_(hi)
