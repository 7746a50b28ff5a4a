"""The exact semantic loss (paper §2): −log P(σ(y_1..y_M) = s) when each y_j follows the
classifier's prediction for instance j, computed without a reasoner: CDF products for MAX,
convolution for SUM, a sum over abductive proofs for any σ."""

from __future__ import annotations

import torch

from paperplug_nesy.symbolic import SymbolicFunction


def output_probability(
    sigma: SymbolicFunction, probs: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    """P(σ(y) = s_b) for each bag b; probs (bags, M, C) are the instances' class probabilities."""
    if sigma.name.startswith("MAX"):
        F = torch.cumsum(probs, -1)  # (bags, M, C)
        joint = F.prod(1)  # P(max ≤ k)
        below = torch.cat([torch.zeros_like(joint[:, :1]), joint[:, :-1]], 1)
        return (joint - below).gather(1, s.view(-1, 1)).squeeze(1)
    if sigma.name.startswith("SUM"):
        dist = probs[:, 0]
        for j in range(1, sigma.M):
            kernel = probs[:, j].flip(-1).unsqueeze(1)  # (bags, 1, C)
            dist = torch.nn.functional.conv1d(
                dist.unsqueeze(0), kernel, padding=sigma.C - 1, groups=len(probs)
            ).squeeze(0)
        return dist.gather(1, s.view(-1, 1)).squeeze(1)
    out = []
    for b in range(len(probs)):
        proofs = torch.as_tensor(sigma.proofs(int(s[b])))  # (n_proofs, M)
        out.append(probs[b, torch.arange(sigma.M), proofs].prod(1).sum())
    return torch.stack(out)


def semantic_loss(sigma: SymbolicFunction, logits: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Mean −log P(σ(y) = s) over bags; logits (bags, M, C), s (bags,) output values."""
    p = output_probability(sigma, torch.softmax(logits, -1), s)
    return -torch.log(p.clamp_min(1e-12)).mean()
