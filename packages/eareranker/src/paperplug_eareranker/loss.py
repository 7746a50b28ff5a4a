"""The bin-aware weighted MSE (paper §3.3): squared errors weighted up when the prediction
falls in another adequacy bin than the label. The exact weighting is inferred (the paper's
formula could not be retrieved): w_i = 1 + α·|bin(ŝ_i) − bin(s_i)|."""

from __future__ import annotations

import torch

from paperplug.checks import check_consistent_length, check_scalar, check_tensor, check_type
from paperplug_eareranker.bins import BIN_EDGES


def _scores(value: torch.Tensor, name: str) -> torch.Tensor:
    """`value` itself (its gradient kept) once checked: a 1-D tensor of finite real numbers."""
    check_type(value, name, torch.Tensor)
    check_tensor(value, name, ndim=1)
    return value


def bin_index(scores: torch.Tensor) -> torch.Tensor:
    """The adequacy bin (0..5) of each score, as `adequacy_bin` for tensors (no gradient)."""
    return torch.bucketize(scores.detach(), torch.tensor(BIN_EDGES, dtype=scores.dtype), right=True)


def bin_aware_mse(pred: torch.Tensor, target: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """(1/B)·Σ w_i (ŝ_i − s_i)², w_i = 1 + α·|bin(ŝ_i) − bin(s_i)| (α = 0: plain MSE)."""
    alpha = check_scalar(alpha, "alpha", low=0)
    pred, target = _scores(pred, "pred"), _scores(target, "target")
    if pred.shape != target.shape:
        raise ValueError(
            f"pred and target shapes differ: {tuple(pred.shape)} vs {tuple(target.shape)}"
        )
    weights = 1.0 + alpha * (bin_index(pred) - bin_index(target)).abs().to(pred.dtype)
    return (weights * (pred - target) ** 2).mean()


def listwise_loss(
    logits: torch.Tensor, target: torch.Tensor, group: torch.Tensor, temperature: float = 0.1
) -> torch.Tensor:
    """Cross-entropy between each query's softmax over its documents' logits and the softmax of
    their labels / temperature (ListNet, ours: NDCG ranks within a query). `group`: 0..G−1."""
    logits, target = _scores(logits, "logits"), _scores(target, "target")
    check_type(group, "group", torch.Tensor)
    ids = check_tensor(group, "group", dtype="int", ndim=1)
    check_consistent_length(logits=logits, target=target, group=group)
    check_scalar(temperature, "temperature", low=0, inclusive="neither")
    n_groups = int(ids.max()) + 1
    if ids.min() < 0 or len(torch.unique(ids)) != n_groups:
        raise ValueError(
            f"group must hold the query ids 0..G-1, each used, got {ids.unique().tolist()}"
        )
    group = ids

    def log_softmax(x: torch.Tensor) -> torch.Tensor:
        top = torch.full((n_groups,), -torch.inf, dtype=x.dtype).scatter_reduce(0, group, x, "amax")
        shifted = x - top[group].detach()
        total = torch.zeros(n_groups, dtype=x.dtype).index_add(0, group, shifted.exp())
        return shifted - total.log()[group]

    weights = log_softmax(target / temperature).exp()
    return -(weights * log_softmax(logits)).sum() / n_groups
