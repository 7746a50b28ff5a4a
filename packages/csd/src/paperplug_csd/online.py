"""The online version (C-SafeGen §5): queries arrive one by one, the judge reports whether
each output was unsafe, and τ follows the observed errors,

    τ_{t+1} = τ_t + η (α − err_t)            (adaptive conformal inference's update)

so that summing the updates gives the exact identity
    (1/T) Σ_t err_t = α − (τ_{T+1} − τ_1) / (η T):
while τ stays bounded the long-run error tends to α.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_callable, check_scalar, check_sequence, check_type
from paperplug_csd.decoding import ClaimStreamDecoder


class OnlineTau:
    """τ updated from the observed errors: `update(err)` returns the next τ."""

    def __init__(self, alpha: float, eta: float = 0.05, tau0: float = 0.5) -> None:
        self.alpha = check_scalar(alpha, "alpha", low=0.0, high=1.0, inclusive="neither")
        self.eta = check_scalar(eta, "eta", low=0.0, inclusive="neither")
        self.tau = check_scalar(tau0, "tau0", low=0.0, high=1.0)
        self.taus: list[float] = [self.tau]
        self.errors: list[int] = []

    def update(self, err: bool | int) -> float:
        """Record whether the last output was unsafe (1) or not (0); return the next τ."""
        if err not in (0, 1, True, False):
            raise ValueError(f"err must be 0 or 1, got {err!r}")
        self.errors.append(int(err))
        self.tau += self.eta * (self.alpha - int(err))
        self.taus.append(self.tau)
        return self.tau

    @property
    def long_run_error(self) -> float:
        """The mean error so far (nan before the first update)."""
        return sum(self.errors) / len(self.errors) if self.errors else float("nan")


@dataclass
class OnlineRun:
    """What an online run produced: τ before each query, the errors, and the mean error."""

    taus: list[float] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    fallbacks: int = 0

    @property
    def long_run_error(self) -> float:
        return sum(self.errors) / len(self.errors) if self.errors else float("nan")

    def to_dict(self) -> dict[str, Any]:
        return {
            "taus": self.taus,
            "errors": self.errors,
            "fallbacks": self.fallbacks,
            "long_run_error": self.long_run_error,
        }


def run_online(
    decoder: Any,
    prompts: Sequence[Any],
    judge: Callable[[Any, Any], bool],
    online: OnlineTau,
    *,
    seed: int = 0,
) -> OnlineRun:
    """Serve `prompts` in order with `decoder` (a ClaimStreamDecoder), τ from `online`;
    `judge(prompt, result)` says whether the output was unsafe. The decoder's τ is restored."""
    check_type(decoder, "decoder", ClaimStreamDecoder)
    prompts = check_sequence(prompts, "prompts", what="prompts")
    check_callable(judge, "judge", what="function (prompt, result) -> bool")
    check_type(online, "online", OnlineTau)
    check_scalar(seed, "seed", "int", low=0)
    run = OnlineRun()
    start_tau = decoder.tau
    try:
        for t, prompt in enumerate(prompts):
            decoder.tau = min(max(online.tau, 0.0), 1.0)
            run.taus.append(online.tau)
            result = decoder.generate(prompt, seed=seed * 1_000_003 + t)
            err = bool(judge(prompt, result))
            run.errors.append(int(err))
            run.fallbacks += int(result.fallback)
            online.update(err)
    finally:
        decoder.tau = start_tau
    return run
