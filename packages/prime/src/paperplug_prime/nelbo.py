"""The NELBO (paper §3.3): E_t[ w(t) Σ_i −log p_θ(x₀ⁱ | y_t) ], one term per token (never
per sub-token), w(t) = −α'_t / (1 − α_t). A fully observed token costs 0 by carry-over. In
bits per token: divided by the sequence length and ln 2."""

from __future__ import annotations

import math

import torch

from paperplug_prime.denoiser import carry_over
from paperplug_prime.forward import mask_subtokens
from paperplug_prime.schedule import Schedule
from paperplug_prime.subtokenizer import Subtokenizer


def token_nll(model: torch.nn.Module, sub: Subtokenizer, x0: torch.Tensor, y: torch.Tensor,
              t: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """−log p_θ(x₀ⁱ | y_t) per token (B, L), carry-over applied."""
    logp = carry_over(model(y, t), sub.consistent(y))
    return -logp.gather(-1, x0.unsqueeze(-1)).squeeze(-1)


def nelbo_loss(model: torch.nn.Module, sub: Subtokenizer, schedule: Schedule, x0: torch.Tensor,
               t: torch.Tensor, generator: torch.Generator) -> torch.Tensor:  # fmt: skip
    """Per-sequence weighted loss in nats (B,): the Monte Carlo NELBO at times t."""
    digits = sub.encode(x0)
    y = mask_subtokens(digits, schedule.alpha(t), sub.mask_id, generator)
    return schedule.weight(t) * token_nll(model, sub, x0, y, t).sum(-1)


def antithetic_times(n_t: int, generator: torch.Generator, device: torch.device | str = "cpu",
                     t_min: float = 1e-3) -> torch.Tensor:  # fmt: skip
    """n_t times evenly spread over (t_min, 1] with one shared random offset."""
    u = torch.rand((), generator=generator, device=device)
    t = (torch.arange(n_t, device=device) + u) / n_t
    return t.clamp_min(t_min)


def bits_per_token(nats: torch.Tensor, seq_len: int) -> float:
    return float(nats.mean()) / (seq_len * math.log(2))
