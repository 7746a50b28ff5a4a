"""The EAR scorer (paper §3.2): [CLS, q'_1..q'_N, SEP, d'_1..d'_N] plus learned positions
through a small transformer; one output token through a 3-layer MLP and a sigmoid gives the
adequacy score in [0, 1]. Text is never seen: only the two embeddings.

`readout="cls"` with bidirectional attention is the paper's; `causal=True, readout="last"`
(the last token sees the whole sequence under a causal mask) is the default here, as the
notes measured it better. Two additions of ours, off by default: `interaction=True` appends a
token built from q ⊙ d and |q − d| and feeds cos(q, d) to the head; `cosine_residual=True`
makes the logit a·cos(q, d) + b + head(h) with the head's last layer at zero, so an untrained
scorer ranks exactly as cosine does and training learns a correction to it."""

from __future__ import annotations

import torch
from torch import nn

from paperplug.checks import check_choice, check_scalar, check_type
from paperplug_eareranker.expansion import DimensionExpansion, check_embeddings

READOUTS = ("cls", "last")


class EARScorer(nn.Module):
    """Adequacy in [0, 1] of (query, document) embedding pairs (batch, D) → (batch,)."""

    def __init__(
        self,
        embedding_dim: int,
        *,
        n_expand: int = 8,
        d_model: int = 256,
        layers: int = 4,
        heads: int = 4,
        causal: bool = True,
        readout: str = "last",
        interaction: bool = False,
        cosine_residual: bool = False,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        check_scalar(embedding_dim, "embedding_dim", "int", low=1)
        check_scalar(d_model, "d_model", "int", low=2)
        check_scalar(n_expand, "n_expand", "int", low=1)
        check_scalar(layers, "layers", "int", low=1)
        check_scalar(heads, "heads", "int", low=1)
        check_scalar(dropout, "dropout", low=0, high=1, inclusive="left")
        check_type(causal, "causal", bool)
        check_type(interaction, "interaction", bool)
        check_type(cosine_residual, "cosine_residual", bool)
        check_choice(readout, "readout", READOUTS)
        if d_model % heads:
            raise ValueError(f"heads must divide d_model ({d_model}), got heads={heads}")
        if readout == "cls" and causal:
            raise ValueError("readout='cls' needs causal=False: a causal CLS token sees nothing")
        self.causal, self.readout, self.interaction, self.cosine_residual = (
            causal, readout, interaction, cosine_residual)  # fmt: skip
        self.expand_q = DimensionExpansion(embedding_dim, n_expand, d_model)
        self.expand_d = DimensionExpansion(embedding_dim, n_expand, d_model)
        self.special = nn.Parameter(torch.randn(2, d_model) * 0.02)  # CLS, SEP
        length = 2 * n_expand + 2 + int(interaction)
        self.position = nn.Parameter(torch.randn(length, d_model) * 0.02)
        if interaction:
            self.pair = nn.Linear(2 * embedding_dim, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, 4 * d_model, dropout, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Sequential(
            nn.Linear(d_model + int(interaction), d_model), nn.GELU(), nn.Linear(d_model, d_model // 2),
            nn.GELU(), nn.Linear(d_model // 2, 1),
        )  # fmt: skip
        if cosine_residual:  # logit = a·cos + b + head(h): at first exactly cosine's ranking
            nn.init.zeros_(self.head[-1].weight)
            nn.init.zeros_(self.head[-1].bias)
            self.cosine_scale = nn.Parameter(torch.tensor(8.0))
            self.cosine_shift = nn.Parameter(torch.tensor(-4.0))

    def forward(self, q: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """Adequacy scores (batch,) in [0, 1] for query and document embeddings (batch, D)."""
        return torch.sigmoid(self.logits(q, d))

    def logits(self, q: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """The scores before the sigmoid (batch,)."""
        width = self.expand_q.maps.in_features
        check_embeddings(q, "q", width)
        check_embeddings(d, "d", width)
        if len(q) != len(d):
            raise ValueError(f"q and d must hold one pair per row: {len(q)} and {len(d)} rows")
        batch = q.shape[0]
        cls, sep = (self.special[i].expand(batch, 1, -1) for i in range(2))
        parts = [cls, self.expand_q(q), sep, self.expand_d(d)]
        if self.interaction:
            parts.append(self.pair(torch.cat([q * d, (q - d).abs()], -1)).unsqueeze(1))
        x = torch.cat(parts, 1) + self.position
        mask = None
        if self.causal:
            T = x.shape[1]
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)  # True = not allowed
        h = self.norm(self.encoder(x, mask=mask))
        out = h[:, 0] if self.readout == "cls" else h[:, -1]
        cosine = nn.functional.cosine_similarity(q, d, dim=-1)
        if self.interaction:
            out = torch.cat([out, cosine.unsqueeze(-1)], -1)
        logit = self.head(out).squeeze(-1)
        if self.cosine_residual:
            logit = logit + self.cosine_scale * cosine + self.cosine_shift
        return logit
