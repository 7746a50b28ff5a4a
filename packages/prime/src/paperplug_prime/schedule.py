"""Masking schedules α_t (the share of sub-tokens still observed at time t): linear α_t = 1 − t
and MDLM's log-linear α_t = 1 − (1 − ε)t. Both have the NELBO weight −α'_t / (1 − α_t) = 1/t;
the paper's training objective stabilises it as 1/(t + 0.005) (linear, the official toy) or
clamps t ≥ 10⁻³ (log-linear)."""

from __future__ import annotations

import torch

from paperplug.checks import check_choice, check_tensor

SCHEDULES = ("linear", "loglinear")
LINEAR_OFFSET = 0.005
LOGLINEAR_EPS = 1e-3
T_MIN = 1e-3


class Schedule:
    """A masking schedule ("linear" or "loglinear"): α_t, its inverse, the NELBO weight."""

    def __init__(self, kind: str = "linear") -> None:
        self.kind = check_choice(kind, "kind", SCHEDULES)
        # the share of sub-tokens masked at t = 1: all (linear) or all but ε (log-linear)
        self.final_masked = 1.0 if kind == "linear" else 1 - LOGLINEAR_EPS

    def alpha(self, t: torch.Tensor) -> torch.Tensor:
        """α_t at times t in [0, 1]."""
        return 1 - self.final_masked * _times(t, "t")

    def time_at(self, masked: torch.Tensor) -> torch.Tensor:
        """The time t at which a sub-token is masked with probability `masked` (1 − α_t = m)."""
        return _times(masked, "masked") / self.final_masked

    def weight(self, t: torch.Tensor) -> torch.Tensor:
        """The weight of the paper's training objective at time t: −α'_t / (1 − α_t) = 1/t,
        stabilised as the official code does (not the NELBO's exact weight)."""
        t = _times(t, "t")
        if self.kind == "linear":
            return 1 / (t + LINEAR_OFFSET)
        return 1 / t.clamp_min(T_MIN)


def _times(t: torch.Tensor, name: str) -> torch.Tensor:
    """A non-empty float tensor of values in [0, 1], else a ValueError/TypeError naming `name`."""
    t = check_tensor(t, name)
    if t.numel() and (t.min() < 0 or t.max() > 1):
        raise ValueError(f"{name} must lie in [0, 1], got [{float(t.min())}, {float(t.max())}]")
    return t
