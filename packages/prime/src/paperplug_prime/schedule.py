"""Masking schedules α_t (the share of sub-tokens still observed at time t) and the NELBO
weight −α'_t / (1 − α_t): linear α_t = 1 − t (weight 1/(t + 0.005), the official toy's
stabiliser) and MDLM's log-linear α_t = 1 − (1 − ε)t (weight 1/t, t ≥ t_min)."""

from __future__ import annotations

import torch

SCHEDULES = ("linear", "loglinear")
LINEAR_OFFSET = 0.005
LOGLINEAR_EPS = 1e-3
T_MIN = 1e-3


class Schedule:
    def __init__(self, kind: str = "linear") -> None:
        if kind not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {kind!r}")
        self.kind = kind

    def alpha(self, t: torch.Tensor) -> torch.Tensor:
        if self.kind == "linear":
            return 1 - t
        return 1 - (1 - LOGLINEAR_EPS) * t

    def weight(self, t: torch.Tensor) -> torch.Tensor:
        """−α'_t / (1 − α_t), the NELBO's weight of the denoising loss at time t."""
        if self.kind == "linear":
            return 1 / (t + LINEAR_OFFSET)
        return 1 / t.clamp_min(T_MIN)
