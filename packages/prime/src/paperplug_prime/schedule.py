"""Masking schedules α_t (the share of sub-tokens still observed at time t): linear α_t = 1 − t
and MDLM's log-linear α_t = 1 − (1 − ε)t. Both have the NELBO weight −α'_t / (1 − α_t) = 1/t;
the paper's training objective stabilises it as 1/(t + 0.005) (linear, the official toy) or
clamps t ≥ 10⁻³ (log-linear)."""

from __future__ import annotations

import torch

from paperplug.checks import check_choice

SCHEDULES = ("linear", "loglinear")
LINEAR_OFFSET = 0.005
LOGLINEAR_EPS = 1e-3
T_MIN = 1e-3


class Schedule:
    """A masking schedule ("linear" or "loglinear"): α_t, its inverse, the NELBO weight."""

    def __init__(self, kind: str = "linear") -> None:
        self.kind = check_choice(kind, "schedule", SCHEDULES)
        # the share of sub-tokens masked at t = 1: all (linear) or all but ε (log-linear)
        self.final_masked = 1.0 if kind == "linear" else 1 - LOGLINEAR_EPS

    def alpha(self, t: torch.Tensor) -> torch.Tensor:
        return 1 - self.final_masked * t

    def time_at(self, masked: torch.Tensor) -> torch.Tensor:
        """The time t at which a sub-token is masked with probability `masked` (1 − α_t = m)."""
        return masked / self.final_masked

    def weight(self, t: torch.Tensor) -> torch.Tensor:
        """The weight of the paper's training objective at time t: −α'_t / (1 − α_t) = 1/t,
        stabilised as the official code does (not the NELBO's exact weight)."""
        if self.kind == "linear":
            return 1 / (t + LINEAR_OFFSET)
        return 1 / t.clamp_min(T_MIN)
