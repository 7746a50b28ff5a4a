"""Stage 3: differentiable ordering — priorities, the Gumbel-softmax selector and class heads (§3.3)."""

from __future__ import annotations

import torch
from torch import nn


def priorities(order: torch.Tensor) -> torch.Tensor:
    """s = o − min(o) + 1 with the min detached: positive priorities, shift-invariant."""
    return order - order.min().detach() + 1


def gumbel_select(
    scores: torch.Tensor, temperature: float, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Soft one-hot choice of the active rule: softmax((r⊙s + g)/τ) with Gumbel noise g."""
    u = torch.rand(scores.shape, generator=generator).clamp_(1e-10, 1 - 1e-10)
    return torch.softmax((scores - torch.log(-torch.log(u))) / temperature, dim=-1)


class RuleSelector(nn.Module):
    """Learnable rule order o and per-rule class heads H (C × R, no bias)."""

    def __init__(self, n_rules: int, n_classes: int, generator: torch.Generator | None = None):
        super().__init__()
        self.order = nn.Parameter(torch.rand(n_rules, generator=generator))
        self.heads = nn.Parameter(torch.empty(n_classes, n_rules))
        bound = 1 / n_rules**0.5  # nn.Linear's default init range
        with torch.no_grad():
            self.heads.uniform_(-bound, bound, generator=generator)

    def forward(
        self, rules: torch.Tensor, temperature: float, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """rules (batch, R) -> (logits (batch, C), selection a (batch, R))."""
        selection = gumbel_select(rules * priorities(self.order), temperature, generator)
        return selection @ self.heads.T, selection


def support_penalty(selection: torch.Tensor, min_support: float) -> torch.Tensor:
    """mean_j ReLU(min_support − mean_batch a_j): every rule should be selected for some rows."""
    return torch.relu(min_support - selection.mean(dim=0)).mean()
