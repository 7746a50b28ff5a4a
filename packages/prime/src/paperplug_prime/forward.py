"""The forward process (paper §3.1): every sub-token is masked independently with probability
1 − α_t, so a token can be partly masked — Prime's intermediate states."""

from __future__ import annotations

import torch

from paperplug.checks import check_scalar, check_tensor, check_type
from paperplug_prime.schedule import _times


def mask_subtokens(
    digits: torch.Tensor, alpha: torch.Tensor, mask_id: int, generator: torch.Generator
) -> torch.Tensor:
    """digits (B, L, ℓ); alpha (B,) the keep probability per sequence → masked digits."""
    check_scalar(mask_id, "mask_id", "int", low=1)
    digits = check_tensor(digits, "digits", dtype="int", ndim=3)
    if digits.min() < 0 or digits.max() > mask_id:
        raise ValueError(f"digits must lie in [0, mask_id = {mask_id}], got "
                         f"[{int(digits.min())}, {int(digits.max())}]")  # fmt: skip
    alpha = _times(alpha, "alpha")
    if alpha.shape != digits.shape[:1]:
        raise ValueError(f"alpha must have shape ({len(digits)},), one per sequence, got "
                         f"{tuple(alpha.shape)}")  # fmt: skip
    check_type(generator, "generator", torch.Generator)
    keep = torch.rand(digits.shape, generator=generator, device=digits.device) < alpha.view(
        -1, 1, 1
    )
    return torch.where(keep, digits, torch.full_like(digits, mask_id))
