"""The paper's training objective (§3.3 and the official code): E_t[ w(t) Σ_i −log p_θ(x₀ⁱ | y_t) ],
one term per token whose sub-tokens are not all observed, w(t) the stabilised 1/t weight. It
trains well but is not an upper bound on −log p(x₀) for ℓ > 1 (a token with several masked
sub-tokens is counted once, where the bound counts each masked sub-token): likelihoods are
reported with `nelbo.nelbo_draw`."""

from __future__ import annotations

import torch

from paperplug_prime.arguments import check_parts, check_subtokens, check_times, check_tokens
from paperplug_prime.denoiser import carry_over
from paperplug_prime.forward import mask_subtokens
from paperplug_prime.schedule import Schedule
from paperplug_prime.subtokenizer import Subtokenizer


def token_nll(model: torch.nn.Module, sub: Subtokenizer, x0: torch.Tensor, y: torch.Tensor,
              t: torch.Tensor) -> torch.Tensor:  # fmt: skip
    """−log p_θ(x₀ⁱ | y_t) per token (B, L), carry-over applied (0 where fully observed)."""
    check_parts(model, sub)
    x0 = check_tokens(x0, sub, model)
    y, t = check_subtokens(y, sub, x0), check_times(t, len(x0))
    logp = carry_over(model(y, t), sub.consistent(y))
    return -logp.gather(-1, x0.unsqueeze(-1)).squeeze(-1)


def prime_loss(model: torch.nn.Module, sub: Subtokenizer, schedule: Schedule, x0: torch.Tensor,
               t: torch.Tensor, generator: torch.Generator) -> torch.Tensor:  # fmt: skip
    """The paper's per-sequence objective in nats (B,) at times t (B,): mask, then weight the
    token NLLs. Equal to MDM's loss at ℓ = 1."""
    check_parts(model, sub, schedule, generator)
    x0 = check_tokens(x0, sub, model)
    t = check_times(t, len(x0))
    y = mask_subtokens(sub.encode(x0), schedule.alpha(t), sub.mask_id, generator)
    return schedule.weight(t) * token_nll(model, sub, x0, y, t).sum(-1)
