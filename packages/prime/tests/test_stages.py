"""Each stage against brute force or an identity: the subtokenizer inverts, the consistency
mask is exact, ℓ = 1 is MDM's loss, observed tokens cost nothing, the sampler's idle steps."""

import itertools

import pytest
import torch
from paperplug_prime import (
    PrimeDenoiser,
    Schedule,
    Subtokenizer,
    carry_over,
    euler_sample,
    mask_subtokens,
    prime_loss,
    smallest_base,
)

from paperplug import seeded_torch


@pytest.mark.parametrize("shuffle", [False, True])
def test_the_subtokenizer_inverts_with_the_smallest_base(shuffle):
    for C in range(2, 21):
        for ell in range(1, 6):
            sub = Subtokenizer(C, ell, shuffle=shuffle, seed=C)
            tokens = torch.arange(C)
            assert torch.equal(sub.decode(sub.encode(tokens)), tokens)
            if ell > 1:
                assert sub.base**ell >= C > (sub.base - 1) ** ell
    assert smallest_base(17, 2) == 5 and smallest_base(17, 3) == 3 and smallest_base(17, 5) == 2


def test_the_consistency_mask_is_exact():
    sub = Subtokenizer(7, 2, shuffle=True, seed=1)  # base 3, codes shuffled
    for digits in itertools.product(range(sub.base + 1), repeat=2):  # every partly masked pair
        allowed = sub.consistent(torch.tensor([digits]))[0]
        for v in range(7):
            code = sub.table[v].tolist()
            want = all(d == sub.mask_id or d == c for d, c in zip(digits, code, strict=True))
            assert bool(allowed[v]) == want, (digits, v)


def test_observed_tokens_get_probability_one():
    sub = Subtokenizer(9, 2)
    x0 = torch.randint(0, 9, (3, 5), generator=torch.Generator().manual_seed(0))
    logits = torch.randn(3, 5, 9)
    logp = carry_over(logits, sub.consistent(sub.encode(x0)))
    assert torch.allclose(logp.gather(-1, x0.unsqueeze(-1)), torch.zeros(3, 5, 1))


def test_ell_one_is_the_mdm_loss():
    C, L = 6, 8
    sub, schedule = Subtokenizer(C, 1), Schedule("linear")
    with seeded_torch(0):  # the test's own draw of a model and a batch
        model = PrimeDenoiser(C, L, 1, sub.base, hidden=32, dropout=0.0)
        x0 = torch.randint(0, C, (4, L))
    t = torch.tensor([0.1, 0.4, 0.7, 0.95])
    ours = prime_loss(model, sub, schedule, x0, t, torch.Generator().manual_seed(3))
    # MDM: mask each token with probability t, −log softmax at the masked tokens, weight 1/(t+0.005)
    keep = torch.rand((4, L, 1), generator=torch.Generator().manual_seed(3)) < (1 - t).view(
        -1, 1, 1
    )
    y = torch.where(keep, x0.unsqueeze(-1), torch.full_like(x0.unsqueeze(-1), C))
    logp = torch.log_softmax(model(y, t), -1).gather(-1, x0.unsqueeze(-1)).squeeze(-1)
    mdm = (1 / (t + 0.005)) * (-(logp * (~keep.squeeze(-1))).sum(-1))
    assert torch.allclose(ours, mdm, atol=1e-6)


def test_the_forward_process_masks_sub_tokens_at_rate_one_minus_alpha():
    digits = torch.zeros(200, 64, 3, dtype=torch.long)
    y = mask_subtokens(digits, torch.full((200,), 0.3), 9, torch.Generator().manual_seed(0))
    assert abs((y == 9).float().mean().item() - 0.7) < 0.01


def test_partial_masking_has_fewer_idle_steps_at_equal_nfe():
    """A property of the process (the model does not matter): reveal draws per sub-token."""
    idle = {}
    for ell in (1, 2, 3):
        sub = Subtokenizer(17, ell)
        with seeded_torch(0):
            model = PrimeDenoiser(17, 16, ell, sub.base, hidden=16, dropout=0.0).eval()
        tokens, idle[ell] = euler_sample(
            model, sub, Schedule(), 64, 16, 64, torch.Generator().manual_seed(1)
        )
        assert tokens.shape == (64, 16) and tokens.min() >= 0 and tokens.max() < 17
    assert idle[1] > idle[2] > idle[3]


def test_schedules_and_their_weights():
    t = torch.tensor([0.25, 0.5])
    assert torch.allclose(Schedule("linear").weight(t), 1 / (t + 0.005))
    assert torch.allclose(Schedule("loglinear").alpha(t), 1 - 0.999 * t)
    with pytest.raises(ValueError, match="kind must be one of"):
        Schedule("cosine")


def test_a_schedule_with_alpha_one_above_zero_samples_from_the_bounds_prior():
    """α₁ = ½ and a denoiser sure of token 0: only the prior's start (uniform tokens, half the
    sub-tokens shown) puts other tokens in the samples, (C − 1)/C · ½ = 40% of them."""

    class SureOfZero(torch.nn.Module):
        def forward(self, y, t):
            logits = torch.zeros((*y.shape[:2], 5))
            logits[..., 0] = 30.0
            return logits

    schedule = Schedule("linear")
    schedule.final_masked = 0.5
    sub = Subtokenizer(5, 1)
    tokens, _ = euler_sample(
        SureOfZero(), sub, schedule, 500, 8, 4, torch.Generator().manual_seed(0)
    )
    assert abs((tokens != 0).float().mean().item() - 0.4) < 0.03
    tokens, _ = euler_sample(SureOfZero(), sub, Schedule(), 500, 8, 4, torch.Generator())
    assert (tokens == 0).all()  # α₁ = 0: all masked at the start
