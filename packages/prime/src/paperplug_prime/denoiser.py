"""The denoiser (paper §3.2): p_θ(x₀ⁱ | y_t) over the full token vocabulary at every position,
from the ℓ sub-token embeddings of each token (a (b+1)-entry table, the mask included) merged by
concatenation, with the time as an input. Carry-over: tokens whose code contradicts an
observed sub-token get −∞ logits, so a fully observed token has probability 1."""

from __future__ import annotations

import torch
from torch import nn

from paperplug.checks import check_choice, check_scalar, check_tensor
from paperplug_prime.arguments import check_times

BACKBONES = ("mlp", "transformer")


class PrimeDenoiser(nn.Module):
    """backbone "mlp": the whole sequence flattened through an MLP (the official toy);
    "transformer": a bidirectional encoder over token positions."""

    def __init__(self, vocab_size: int, seq_len: int, ell: int, base: int, *, backbone: str = "mlp",
                 d_embed: int = 16, hidden: int = 256, layers: int = 2, heads: int = 4,
                 dropout: float = 0.1) -> None:  # fmt: skip
        super().__init__()
        check_choice(backbone, "backbone", BACKBONES)
        for name, value, low in [("vocab_size", vocab_size, 2), ("seq_len", seq_len, 1),
                                 ("ell", ell, 1), ("base", base, 2), ("d_embed", d_embed, 1),
                                 ("hidden", hidden, 1), ("layers", layers, 1),
                                 ("heads", heads, 1)]:  # fmt: skip
            check_scalar(value, name, "int", low=low)
        check_scalar(dropout, "dropout", "real", low=0, high=1, inclusive="left")
        if backbone == "transformer" and hidden % heads:
            raise ValueError(f"hidden must be a multiple of heads, got {hidden} and {heads}")
        self.vocab_size, self.seq_len, self.ell, self.backbone = vocab_size, seq_len, ell, backbone
        self.embed = nn.Embedding(base + 1, d_embed)  # the mask is the last entry
        width = ell * d_embed  # one token: its sub-token embeddings concatenated
        if backbone == "mlp":
            self.net = nn.Sequential(
                nn.Linear(seq_len * width + 1, hidden), nn.LayerNorm(hidden), nn.GELU(),
                nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.GELU(),
                nn.Dropout(dropout), nn.Linear(hidden, seq_len * vocab_size),
            )  # fmt: skip
        else:
            self.inp = nn.Linear(width + 1, hidden)
            self.pos = nn.Parameter(torch.zeros(seq_len, hidden))
            layer = nn.TransformerEncoderLayer(hidden, heads, 2 * hidden, dropout, batch_first=True)
            self.net = nn.TransformerEncoder(layer, layers)
            self.out = nn.Linear(hidden, vocab_size)

    def forward(self, digits: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """digits (B, L, ℓ) partly masked, t (B,) → unmasked logits (B, L, C)."""
        digits = check_tensor(digits, "digits", dtype="int", ndim=3)
        if digits.shape[1:] != (self.seq_len, self.ell):
            raise ValueError(f"digits must have shape (B, {self.seq_len}, {self.ell}), got "
                             f"{tuple(digits.shape)}")  # fmt: skip
        if digits.min() < 0 or digits.max() >= self.embed.num_embeddings:
            raise ValueError(f"digits must lie in [0, {self.embed.num_embeddings - 1}], got "
                             f"[{int(digits.min())}, {int(digits.max())}]")  # fmt: skip
        t = check_times(t, len(digits)).to(self.embed.weight.dtype)
        B, L, _ = digits.shape
        h = self.embed(digits).reshape(B, L, -1)
        if self.backbone == "mlp":
            x = torch.cat([h.reshape(B, -1), t.view(B, 1)], 1)
            return self.net(x).view(B, L, self.vocab_size)
        x = self.inp(torch.cat([h, t.view(B, 1, 1).expand(B, L, 1)], -1)) + self.pos
        return self.out(self.net(x))


def carry_over(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Log-probabilities with every token that contradicts an observed sub-token removed."""
    checked = check_tensor(logits, "logits", ndim=3)  # detached: the loss needs logits' graph
    logits = logits if isinstance(logits, torch.Tensor) else checked
    allowed = check_tensor(allowed, "allowed", dtype="bool", ndim=3)
    if allowed.shape != logits.shape:
        raise ValueError(f"allowed must have logits' shape {tuple(logits.shape)}, got "
                         f"{tuple(allowed.shape)}")  # fmt: skip
    return torch.log_softmax(logits.masked_fill(~allowed, float("-inf")), -1)
