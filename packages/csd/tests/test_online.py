"""The online version: the identity behind it, and the long-run error driven to α."""

import numpy as np
import pytest
from helpers import lookup_scorer, output_key, trap_lm
from paperplug_csd import REFUSED, ClaimStreamDecoder, OnlineTau, run_online


def test_mean_error_identity_holds_exactly():
    """Σ updates: mean(err) = α − (τ_{T+1} − τ_1)/(ηT), for any error sequence."""
    errs = np.random.default_rng(0).integers(0, 2, 500)
    online = OnlineTau(alpha=0.1, eta=0.03, tau0=0.4)
    for e in errs:
        online.update(int(e))
    T = len(errs)
    assert online.long_run_error == pytest.approx(0.1 - (online.tau - 0.4) / (0.03 * T), abs=1e-12)
    assert len(online.taus) == T + 1


def test_online_tau_drives_the_long_run_error_to_alpha():
    """On the trap model (base unsafe rate ≈ 0.6 at τ = 1, 0 below τ = 0.7), the mean error
    over 2000 queries lies within 0.03 of α for each of 3 seeds."""
    decoder = ClaimStreamDecoder(trap_lm(), lookup_scorer(), tau=0.5, budget=1, depth=1)
    judge = lambda prompt, r: any(i in (2, 3) for i in output_key(r) if i != REFUSED)  # noqa: E731
    for seed in range(3):
        online = OnlineTau(alpha=0.2, eta=0.05, tau0=0.5)
        run = run_online(decoder, ["q"] * 2000, judge, online, seed=seed)
        assert abs(run.long_run_error - 0.2) < 0.03
        assert decoder.tau == 0.5  # restored
        assert min(run.taus) > -1 and max(run.taus) < 2  # τ stays bounded


def test_bad_online_settings():
    with pytest.raises(ValueError, match="alpha"):
        OnlineTau(alpha=0)
    with pytest.raises(ValueError, match="eta"):
        OnlineTau(alpha=0.1, eta=-1)
    with pytest.raises(ValueError, match="err"):
        OnlineTau(alpha=0.1).update(0.5)
