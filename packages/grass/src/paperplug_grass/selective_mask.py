"""The selective mask (SM, paper §3.2): learn scores S ∈ R^p so that inner products of masked
gradients σ(S)⊙g keep the correlation of the full ones, with an L1 pull on σ(S); keep the
top-k′ coordinates. Its training time is returned so it can be reported."""

from __future__ import annotations

import time

import torch


def learn_selective_mask(
    G: torch.Tensor,
    width: int,
    *,
    steps: int = 200,
    l1: float = 1e-4,
    lr: float = 0.05,
    seed: int = 0,
) -> tuple[torch.Tensor, float]:
    """(sorted kept indices (width,), seconds). G (n, p): sample gradients (n ≥ 4)."""
    if G.ndim != 2 or len(G) < 4:
        raise ValueError(
            f"the selective mask needs (n >= 4, p) sample gradients, got {tuple(G.shape)}"
        )
    start = time.process_time()
    G = G.detach().float()
    gen = torch.Generator().manual_seed(seed)
    scores = torch.zeros(G.shape[1], requires_grad=True)
    optimizer = torch.optim.Adam([scores], lr=lr)
    full = G @ G.T
    full = (full - full.mean()) / full.std().clamp_min(1e-12)
    for _ in range(steps):
        rows = torch.randperm(len(G), generator=gen)[: min(64, len(G))]
        g = G[rows] * torch.sigmoid(scores)
        inner = g @ g.T
        inner = (inner - inner.mean()) / inner.std().clamp_min(1e-12)
        target = full[rows][:, rows]
        loss = -(inner * target).mean() + l1 * torch.sigmoid(scores).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    index = torch.topk(scores.detach(), width).indices.sort().values
    return index, time.process_time() - start
