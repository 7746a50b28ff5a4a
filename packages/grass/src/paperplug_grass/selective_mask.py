"""The selective mask (SM, paper §3.2): learn scores S ∈ R^p so that inner products of masked
gradients σ(S)⊙g keep the correlation of the full ones, with an L1 pull on σ(S); keep the
top-k′ coordinates. Its training time is returned so it can be reported.

Ours where the paper is silent: S starts from the standardised log second moments of the
coordinates (so the first mask is the top-variance one, not a random one), and the learned
mask is kept only if its inner-product correlation on the sample is at least that of the
top-variance mask (issue 35: a mask learned from S = 0 reached 0.29 where top variance gives
0.53)."""

from __future__ import annotations

import time

import torch

from paperplug.checks import check_scalar, check_tensor


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
    G = check_tensor(G, "G", ndim=2, min_samples=4).float()
    check_scalar(width, "width", "int", low=1, high=G.shape[1])
    check_scalar(steps, "steps", "int", low=1)
    check_scalar(l1, "l1", low=0)
    check_scalar(lr, "lr", low=0, inclusive="neither")
    check_scalar(seed, "seed", "int", low=0)
    start = time.process_time()
    gen = torch.Generator().manual_seed(seed)
    energy = (G**2).mean(0).clamp_min(1e-30).log()
    prior = (energy - energy.mean()) / energy.std().clamp_min(1e-12)
    scores = prior.clone().requires_grad_(True)
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
    learned = torch.topk(scores.detach(), width).indices.sort().values
    by_variance = torch.topk(prior, width).indices.sort().values
    keep = inner_product_correlation(G, learned) >= inner_product_correlation(G, by_variance)
    return (learned if keep else by_variance), time.process_time() - start


def inner_product_correlation(G: torch.Tensor, index: torch.Tensor) -> float:
    """Pearson correlation, over the pairs i ≠ j of rows, between the full inner products
    ⟨g_i, g_j⟩ and those of the coordinates `index` only: what the mask must preserve."""
    full, masked = G @ G.T, G[:, index] @ G[:, index].T
    off = ~torch.eye(len(G), dtype=torch.bool)
    pair = torch.stack([full[off], masked[off]]).double()
    return float(torch.corrcoef(pair)[0, 1])
