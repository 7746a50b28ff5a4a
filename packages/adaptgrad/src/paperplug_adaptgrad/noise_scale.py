"""Stage 1, the noise scale: SmoothGrad's one σ versus AdaptGrad's σ per input dimension."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from paperplug.checks import check_float_tensor, check_scalar, check_type

Bound = float | Sequence[float] | torch.Tensor
Bounds = tuple[Bound, Bound]


def resolve_bounds(
    x: torch.Tensor, bounds: Bounds, channel_dim: int = 1
) -> tuple[torch.Tensor, torch.Tensor]:
    """(lo, hi) broadcastable to `x`: each a scalar (global bound) or one value per channel.

    A 1-D bound whose length equals `x.shape[channel_dim]` is a per-channel bound; any other
    tensor must broadcast to `x` as it is.
    """
    check_float_tensor(x, "x")
    check_type(channel_dim, "channel_dim", int, what="an int")
    if not -x.dim() <= channel_dim < x.dim():
        raise ValueError(
            f"channel_dim {channel_dim} is not a dim of inputs of shape {tuple(x.shape)}"
        )
    if not isinstance(bounds, (tuple, list)) or len(bounds) != 2:
        raise TypeError(f"bounds must be a pair (lo, hi), got {bounds!r}")
    lo, hi = (
        _as_bound(b, x, channel_dim, name) for b, name in zip(bounds, ("lo", "hi"), strict=True)
    )
    if not bool((lo < hi).all()):
        raise ValueError("bounds must satisfy lo < hi in every dimension")
    return lo, hi


def _as_bound(bound: Bound, x: torch.Tensor, channel_dim: int, name: str) -> torch.Tensor:
    try:
        t = torch.as_tensor(bound, dtype=x.dtype, device=x.device)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(f"bounds' {name} must be a number or numbers, got {bound!r}") from exc
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"bounds' {name} must be finite, got {bound!r}")
    if t.dim() == 1 and t.numel() > 1:
        if x.dim() <= channel_dim or x.shape[channel_dim] != t.numel():
            raise ValueError(
                f"per-channel bound {name} has {t.numel()} values but inputs of shape "
                f"{tuple(x.shape)} have no channel dim {channel_dim} of that size"
            )
        shape = [1] * x.dim()
        shape[channel_dim] = t.numel()
        t = t.reshape(shape)
    check_broadcast(t, f"bound {name}", x, "inputs")
    return t


def check_broadcast(value: torch.Tensor, name: str, x: torch.Tensor, x_name: str = "x") -> None:
    """`value` broadcasts to `x`, else a ValueError naming both."""
    try:
        torch.broadcast_shapes(value.shape, x.shape)
    except RuntimeError:
        raise ValueError(
            f"{name} {tuple(value.shape)} does not broadcast to {x_name} {tuple(x.shape)}"
        ) from None


def check_range(x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, name: str = "x") -> None:
    """`x` (a float tensor) and the bounds `lo` < `hi` (float tensors that broadcast to it)."""
    check_float_tensor(x, name)
    for bound, label in ((lo, "lo"), (hi, "hi")):
        check_float_tensor(bound, label, min_samples=0)
        check_broadcast(bound, label, x, name)
    if not bool((lo < hi).all()):
        raise ValueError("lo and hi must satisfy lo < hi in every dimension")


def adaptive_sigma(
    x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, c: float = 0.95
) -> torch.Tensor:
    """AdaptGrad's σ_i = m_i / (√2·erfinv(c)), m_i the distance from x_i to its nearest bound.

    Then P(|ε_i| ≤ m_i) = c: each dimension leaves [lo, hi] with probability at most 1 − c,
    and a dimension sitting on a bound gets σ_i = 0.
    """
    c = check_scalar(c, "c", low=0.0, high=1.0, inclusive="neither")  # the confidence
    check_range(x, lo, hi)
    m = torch.minimum(x - lo, hi - x).clamp(min=0)
    return m / (math.sqrt(2.0) * torch.erfinv(torch.tensor(c, dtype=torch.float64)).item())


def smoothgrad_sigma(
    x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, alpha: float = 0.2
) -> torch.Tensor:
    """SmoothGrad's σ = α·(x_max − x_min), the same in every dimension (α = 0.2 by default)."""
    alpha = check_scalar(alpha, "alpha", low=0.0)  # the noise level
    check_range(x, lo, hi)
    return (alpha * (hi - lo)).expand_as(x)
