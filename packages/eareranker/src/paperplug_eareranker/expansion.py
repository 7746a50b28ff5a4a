"""Dimension expansion (paper §3.1): one embedding becomes a sequence of N tokens through N
unshared linear maps, so a transformer can attend across views of a single vector."""

from __future__ import annotations

import torch
from torch import nn

from paperplug.checks import check_scalar, check_tensor, check_type


class DimensionExpansion(nn.Module):
    """(batch, D) → (batch, N, d_model): e'_i = W_i e + b_i for i = 1..N (unshared)."""

    def __init__(self, embedding_dim: int, n_tokens: int, d_model: int) -> None:
        super().__init__()
        check_scalar(embedding_dim, "embedding_dim", "int", low=1)
        check_scalar(n_tokens, "n_tokens", "int", low=1)
        check_scalar(d_model, "d_model", "int", low=1)
        self.n_tokens, self.d_model = n_tokens, d_model
        self.maps = nn.Linear(embedding_dim, n_tokens * d_model)  # N maps stacked in one matmul

    def forward(self, e: torch.Tensor) -> torch.Tensor:
        check_embeddings(e, "e", self.maps.in_features)
        return self.maps(e).view(e.shape[0], self.n_tokens, self.d_model)


def check_embeddings(value: torch.Tensor, name: str, width: int) -> torch.Tensor:
    """`value` itself once checked: a (batch, width) tensor of finite numbers, batch >= 1."""
    check_type(value, name, torch.Tensor)
    if value.is_complex():
        raise TypeError(f"{name} must hold real numbers, got dtype {value.dtype}")
    check_tensor(value, name, ndim=2, shape=(None, width))
    return value
