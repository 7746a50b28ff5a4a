"""The forward process (paper §3.1): every sub-token is masked independently with probability
1 − α_t, so a token can be partly masked — Prime's intermediate states."""

from __future__ import annotations

import torch


def mask_subtokens(
    digits: torch.Tensor, alpha: torch.Tensor, mask_id: int, generator: torch.Generator
) -> torch.Tensor:
    """digits (B, L, ℓ); alpha (B,) the keep probability per sequence → masked digits."""
    keep = torch.rand(digits.shape, generator=generator, device=digits.device) < alpha.view(
        -1, 1, 1
    )
    return torch.where(keep, digits, torch.full_like(digits, mask_id))
