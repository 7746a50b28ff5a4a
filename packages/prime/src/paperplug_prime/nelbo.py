"""The NELBO of the partial-masking process (README, "The bound"): the continuous-time
variational bound of masked diffusion over the N = L·ℓ sub-tokens, whose reverse process reveals
one sub-token at a time with the marginal of p_θ(x₀ⁱ | y_t) for its digit,

    NELBO(x₀) = ∫₀¹ w(t) E[ Σ_{masked (i, j)} −log p_θ(dᵢⱼ | y_t) ] dt + prior,   w = −α'_t/(1 − α_t).

With m = 1 − α_t and k masked sub-tokens, ∫ (1/m) mᵏ(1 − m)ᴺ⁻ᵏ dm = B(k, N − k + 1) turns it into
N · E_{k ~ U{1..N}} E_{|M| = k} E_{m ~ Beta(k, N−k+1)} [ (1/k) Σ_{(i,j)∈M} −log p_θ(dᵢⱼ | y_M, t(m)) ],
which `nelbo_draw` samples: unbiased, with bounded variance (no 1/t blow-up)."""

from __future__ import annotations

import math

import torch

from paperplug_prime.arguments import check_parts, check_subtokens, check_times, check_tokens
from paperplug_prime.denoiser import carry_over
from paperplug_prime.forward import mask_subtokens
from paperplug_prime.schedule import Schedule
from paperplug_prime.subtokenizer import Subtokenizer


def subtoken_nll(model: torch.nn.Module, sub: Subtokenizer, x0: torch.Tensor, y: torch.Tensor,
                 t: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """−log p_θ(dᵢⱼ(x₀) | y_t) per sub-token (B, L, ℓ): the marginal of the carry-over token
    distribution over the tokens whose digit j is x₀'s (0 where the sub-token is observed)."""
    check_parts(model, sub)
    x0 = check_tokens(x0, sub, model)
    y, t = check_subtokens(y, sub, x0), check_times(t, len(x0))
    logp = carry_over(model(y, t), sub.consistent(y))  # (B, L, C)
    digits, table = sub.encode(x0), sub.table.to(x0.device)  # (B, L, ℓ), (C, ℓ)
    nll = []
    for j in range(sub.ell):  # one digit at a time: (B, L, C) memory, as the logits
        agree = digits[..., j : j + 1] == table[:, j]  # tokens whose digit j is x₀'s
        nll.append(-torch.logsumexp(logp.masked_fill(~agree, float("-inf")), -1))
    return torch.stack(nll, -1)


def prior_nll(sub: Subtokenizer, schedule: Schedule, x0: torch.Tensor,
              generator: torch.Generator) -> torch.Tensor:  # fmt: skip
    """One draw of KL(q(y₁ | x₀) ‖ p(y₁)) in nats (B,), p(y₁) the forward process at t = 1 on
    uniform tokens: Σᵢ log(C / #tokens consistent with y₁ⁱ). 0 when α₁ = 0 (nothing drawn)."""
    check_parts(sub=sub, schedule=schedule, generator=generator)
    x0 = check_tokens(x0, sub)
    alpha1 = 1 - schedule.final_masked
    if alpha1 <= 0:
        return torch.zeros(len(x0), device=x0.device)
    keep = torch.full((len(x0),), alpha1, device=x0.device)
    y1 = mask_subtokens(sub.encode(x0), keep, sub.mask_id, generator)
    count = sub.consistent(y1).sum(-1)  # (B, L)
    return (math.log(sub.vocab_size) - count.float().log()).sum(-1)


def nelbo_draw(model: torch.nn.Module, sub: Subtokenizer, schedule: Schedule, x0: torch.Tensor,
               u: torch.Tensor, generator: torch.Generator) -> torch.Tensor:  # fmt: skip
    """One unbiased draw of the NELBO in nats per sequence (B,); u ∈ (0, 1] (B,) picks the
    number of masked sub-tokens k = ⌈uN⌉ (stratify u over draws for a low-variance mean)."""
    check_parts(model, sub, schedule, generator)
    x0 = check_tokens(x0, sub, model)
    u = check_times(u, len(x0), "u")
    if (u == 0).any():
        raise ValueError("u must lie in (0, 1], got 0")
    B, L = x0.shape
    N = L * sub.ell
    k = (u * N).ceil().clamp(1, N).long()
    rank = torch.rand(B, N, generator=generator, device=x0.device).argsort(1).argsort(1)
    masked = (rank < k.unsqueeze(1)).view(B, L, sub.ell)  # k sub-tokens, uniformly placed
    order = torch.rand(B, N, generator=generator, device=x0.device).sort(1).values
    m = order.gather(1, (k - 1).unsqueeze(1)).squeeze(1)  # k-th of N uniforms: Beta(k, N−k+1)
    y = torch.where(masked, sub.mask_id, sub.encode(x0))
    t = schedule.time_at(m).clamp_max(1.0)  # beyond t = 1 (m > 1 − α₁) the draw counts 0
    nll = (subtoken_nll(model, sub, x0, y, t) * masked).sum((1, 2))
    inside = (m <= schedule.final_masked).float()
    return N / k * inside * nll + prior_nll(sub, schedule, x0, generator)


def bits_per_token(nats: torch.Tensor, seq_len: int) -> float:
    """The mean of per-sequence nats in bits per token."""
    return float(nats.mean()) / (seq_len * math.log(2))
