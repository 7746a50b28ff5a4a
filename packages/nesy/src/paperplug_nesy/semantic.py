"""The exact semantic loss (paper §2): −log P(σ(y_1..y_M) = s) when each y_j follows the
classifier's prediction for instance j, computed without a reasoner: CDF products for MAX,
convolution for SUM, a sum over abductive proofs for any σ."""

from __future__ import annotations

import torch

from paperplug.checks import check_consistent_length, check_tensor
from paperplug_nesy.symbolic import SymbolicFunction, check_sigma


def _checked(sigma: SymbolicFunction, scores: torch.Tensor, s: torch.Tensor, name: str) -> None:
    """scores (bags, M, C) finite and s (bags,) possible outputs of σ, or an error naming them."""
    check_sigma(sigma)
    check_tensor(scores, name, shape=(None, sigma.M, sigma.C))
    sigma.index(check_tensor(s, "s", dtype="int", ndim=1).cpu().numpy(), "s")
    check_consistent_length(**{name: scores, "s": s})


def output_probability(
    sigma: SymbolicFunction, probs: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    """P(σ(y) = s_b) for each bag b; probs (bags, M, C) are the instances' class probabilities."""
    _checked(sigma, probs, s, "probs")
    s = torch.as_tensor(s).long()
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
    _checked(sigma, logits, s, "logits")
    p = output_probability(sigma, torch.softmax(logits, -1), s)
    return -torch.log(p.clamp_min(1e-12)).mean()
