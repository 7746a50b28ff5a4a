"""The Euler sampler (paper §3.4): from all sub-tokens masked at t = 1 down to 0 in `nfe` steps;
at each step draw x₀ from the carry-over distribution, and reveal each masked sub-token of it
with probability (α_s − α_t)/(1 − α_t). A step that reveals nothing is idle (MDM wastes many of
them; partial masking fewer). A schedule with α₁ > 0 starts from the NELBO's prior: uniform
tokens, each sub-token kept with probability α₁."""

from __future__ import annotations

import itertools

import torch

from paperplug.checks import check_device, check_scalar
from paperplug_prime.arguments import check_parts
from paperplug_prime.denoiser import carry_over
from paperplug_prime.forward import mask_subtokens
from paperplug_prime.schedule import Schedule
from paperplug_prime.subtokenizer import Subtokenizer


@torch.no_grad()
def euler_sample(model: torch.nn.Module, sub: Subtokenizer, schedule: Schedule, n: int,
                 seq_len: int, nfe: int, generator: torch.Generator,
                 device: torch.device | str = "cpu") -> tuple[torch.Tensor, float]:  # fmt: skip
    """(n, L) tokens and the share of idle steps (per sequence, averaged)."""
    check_parts(model, sub, schedule, generator)
    check_scalar(n, "n", "int", low=1)
    check_scalar(seq_len, "seq_len", "int", low=1)
    check_scalar(nfe, "nfe", "int", low=1)
    if getattr(model, "seq_len", seq_len) != seq_len:
        raise ValueError(f"seq_len must be the model's, {model.seq_len}, got {seq_len}")
    check_device(device)
    y = torch.full((n, seq_len, sub.ell), sub.mask_id, dtype=torch.long, device=device)
    alpha1 = 1 - schedule.final_masked
    if alpha1 > 0:  # the prior p(y₁) of the NELBO
        tokens = torch.randint(sub.vocab_size, (n, seq_len), generator=generator, device=device)
        keep = torch.full((n,), alpha1, device=device)
        y = mask_subtokens(sub.encode(tokens), keep, sub.mask_id, generator)
    idle = torch.zeros(n, device=device)
    times = torch.linspace(1.0, 0.0, nfe + 1, device=device)
    for t, s in itertools.pairwise(times):
        a_t, a_s = schedule.alpha(t), schedule.alpha(s)
        p_reveal = ((a_s - a_t) / (1 - a_t)).clamp(0, 1) if s > 0 else torch.tensor(1.0)
        logp = carry_over(model(y, t.expand(n)), sub.consistent(y))
        probs = logp.exp().reshape(-1, sub.vocab_size)
        x0 = torch.multinomial(probs, 1, generator=generator).view(n, seq_len)
        digits = sub.encode(x0)
        masked = y == sub.mask_id
        reveal = masked & (torch.rand(y.shape, generator=generator, device=device) < p_reveal)
        idle += (~reveal.flatten(1).any(1)).float()
        y = torch.where(reveal, digits, y)
    return sub.decode(y), float((idle / nfe).mean())
