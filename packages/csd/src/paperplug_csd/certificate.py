"""The generation risk certificate (C-SafeGen §4; the binomial-tail bounds of C-RAG and
Learn-then-Test): from n calibration prompts, k of whose CSD outputs a judge finds unsafe,
an upper bound α̂ on the risk that holds with probability ≥ 1 − δ over the calibration draw.

- Hoeffding: α̂ = sup{α ≥ R̂ : n·h(R̂, α) ≤ ln(1/δ)}, h the Bernoulli KL divergence.
- Bentkus: α̂ = sup{α : P(Binom(n, α) ≤ k) ≥ δ/e}.
- Hoeffding–Bentkus (HB): the smaller of the two (the default).
- Clopper–Pearson: the exact binomial bound, Beta(1 − δ; k + 1, n − k).
`learn_then_test` picks τ for a target risk α by fixed-sequence testing of H_τ: R(τ) > α.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperplug import Solution
from paperplug.checks import check_array, check_choice, check_scalar

METHODS = ("hb", "hoeffding", "bentkus", "clopper_pearson")


def _check(k: int, n: int, delta: float) -> None:
    check_scalar(n, "n", "int", low=1)
    check_scalar(k, "k", "int", low=0, high=n)
    check_scalar(delta, "delta", low=0.0, high=1.0, inclusive="neither")


def bernoulli_kl(a: float, b: float) -> float:
    """h(a, b) = a ln(a/b) + (1 − a) ln((1 − a)/(1 − b)), with 0 ln 0 = 0."""
    from scipy.special import xlogy

    return float(xlogy(a, a / b) + xlogy(1 - a, (1 - a) / (1 - b)))


def hoeffding_p_value(k: int, n: int, alpha: float) -> float:
    """exp(−n h(R̂ ∧ α, α)): the p-value of H: risk > α from the Hoeffding tail."""
    r = min(k / n, alpha)
    return math.exp(-n * bernoulli_kl(r, alpha)) if 0 < alpha < 1 else float(alpha >= 1)


def bentkus_p_value(k: int, n: int, alpha: float) -> float:
    """e · P(Binom(n, α) ≤ k), capped at 1: the Bentkus p-value of H: risk > α."""
    from scipy.stats import binom

    return min(1.0, math.e * float(binom.cdf(k, n, alpha)))


def hb_p_value(k: int, n: int, alpha: float) -> float:
    """The Hoeffding–Bentkus p-value (Learn-then-Test): the smaller of the two."""
    check_scalar(n, "n", "int", low=1)
    check_scalar(k, "k", "int", low=0, high=n)
    check_scalar(alpha, "alpha", low=0.0, high=1.0, inclusive="neither")
    return min(hoeffding_p_value(k, n, alpha), bentkus_p_value(k, n, alpha))


def _sup(fn: Any, lo: float, target: float) -> float:
    """sup{α in [lo, 1] : fn(α) ≥ target} for fn non-increasing on [lo, 1]."""
    from scipy.optimize import brentq

    if fn(1.0 - 1e-15) >= target:
        return 1.0
    return float(brentq(lambda a: fn(a) - target, lo, 1.0 - 1e-15, xtol=1e-14, rtol=1e-13))


def hoeffding_bound(k: int, n: int, delta: float) -> float:
    """α̂ = sup{α ≥ R̂ : h(R̂, α) ≤ ln(1/δ)/n}."""
    _check(k, n, delta)
    if k == n:
        return 1.0
    r = k / n
    budget = math.log(1 / delta) / n
    return _sup(lambda a: -bernoulli_kl(r, a), max(r, 1e-300), -budget)


def bentkus_bound(k: int, n: int, delta: float) -> float:
    """α̂ = sup{α : P(Binom(n, α) ≤ k) ≥ δ/e}."""
    from scipy.stats import binom

    _check(k, n, delta)
    if k == n:
        return 1.0
    return _sup(lambda a: float(binom.cdf(k, n, a)), 0.0, delta / math.e)


def hb_bound(k: int, n: int, delta: float) -> float:
    """The Hoeffding–Bentkus bound: min(Hoeffding, Bentkus)."""
    return min(hoeffding_bound(k, n, delta), bentkus_bound(k, n, delta))


def clopper_pearson_bound(k: int, n: int, delta: float) -> float:
    """The one-sided Clopper–Pearson upper bound Beta⁻¹(1 − δ; k + 1, n − k)."""
    from scipy.stats import beta

    _check(k, n, delta)
    return 1.0 if k == n else float(beta.ppf(1 - delta, k + 1, n - k))


BOUNDS = {
    "hb": hb_bound,
    "hoeffding": hoeffding_bound,
    "bentkus": bentkus_bound,
    "clopper_pearson": clopper_pearson_bound,
}
P_VALUES = {"hb": hb_p_value, "hoeffding": hoeffding_p_value, "bentkus": bentkus_p_value}


def _losses(risks: Any, ndim: int, name: str) -> np.ndarray:
    """A non-empty `ndim`-d array of 0/1 losses, or an error naming `name`."""
    x = check_array(risks, name, ndim=ndim)
    if x.size == 0:
        raise ValueError(f"{name} must be a non-empty {ndim}-d array of 0/1 losses, got {x.shape}")
    if not np.isin(x, (0.0, 1.0)).all():
        raise ValueError(f"{name} must be 0/1 losses (1 = the judge found the output unsafe)")
    return x


@dataclass
class Certificate:
    """α̂: with probability ≥ 1 − δ over the calibration prompts, the risk is ≤ `bound`."""

    bound: float
    risk_hat: float
    k: int
    n: int
    delta: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class LTTResult:
    """Learn-then-Test's choice: the most lenient τ certified at risk α (None if none is)."""

    tau: float | None
    index: int | None
    alpha: float
    delta: float
    p_values: list[float] = field(default_factory=list)
    certified: list[float] = field(default_factory=list)  # every τ the fixed sequence passed
    bound: float | None = None  # the certificate α̂ of the chosen τ's empirical risk

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class RiskCertifier:
    """Certify CSD's risk: `bound(risks)` from 0/1 losses on calibration prompts, and
    `solve(problem)` (the Solver role) picks τ by Learn-then-Test."""

    def __init__(self, delta: float = 0.1, method: str = "hb") -> None:
        check_scalar(delta, "delta", low=0.0, high=1.0, inclusive="neither")
        check_choice(method, "method", METHODS)
        self.delta, self.method = float(delta), method

    def bound(self, risks: Sequence[float]) -> Certificate:
        """The (1 − δ) upper bound on the risk from the per-prompt 0/1 losses."""
        x = _losses(risks, 1, "risks")
        k, n = int(x.sum()), int(x.size)
        return Certificate(
            BOUNDS[self.method](k, n, self.delta), k / n, k, n, self.delta, self.method
        )

    def solve(self, problem: Any, *, seed: int | None = None, **kw: Any) -> Solution:
        """problem = {"losses": (n, m) 0/1 array, "taus": m values from strict to lenient,
        "alpha": target risk}: Learn-then-Test's τ (deterministic: `seed` is unused)."""
        if not isinstance(problem, Mapping) or not {"losses", "taus", "alpha"} <= problem.keys():
            raise TypeError(
                "problem must be a dict with 'losses', 'taus' and 'alpha', "
                f"got {type(problem).__name__}"
            )
        check_scalar(seed, "seed", "int", allow_none=True)
        check_scalar(problem["alpha"], "problem['alpha']", low=0.0, high=1.0, inclusive="neither")
        check_array(problem["taus"], "problem['taus']", ndim=1)
        result = learn_then_test(
            _losses(problem["losses"], 2, "problem['losses']"),
            problem["taus"],
            alpha=problem["alpha"],
            delta=self.delta,
            method="hb" if self.method == "clopper_pearson" else self.method,
        )
        return Solution(
            value=result.tau,
            objective=result.bound,
            certificate=result.to_dict(),
            meta={"method": self.method},
        )


def learn_then_test(
    losses: Any,
    taus: Sequence[float],
    *,
    alpha: float,
    delta: float = 0.1,
    method: str = "hb",
) -> LTTResult:
    """Learn-then-Test with fixed-sequence testing: `losses[i, j]` is 1 when prompt i's output
    at `taus[j]` is unsafe; τ's are tested in the given order (strict to lenient) and the last
    one whose p-value ≤ δ before the first failure is returned (FWER ≤ δ)."""
    x = _losses(losses, 2, "losses")
    grid = [float(t) for t in check_array(taus, "taus", ndim=1)]
    if len(grid) != x.shape[1]:
        raise ValueError(f"taus has {len(grid)} values but losses has {x.shape[1]} columns")
    check_scalar(alpha, "alpha", low=0.0, high=1.0, inclusive="neither")
    check_scalar(delta, "delta", low=0.0, high=1.0, inclusive="neither")
    check_choice(method, "method", tuple(P_VALUES))
    n = x.shape[0]
    ks = x.sum(0).astype(int)
    p_values = [P_VALUES[method](int(k), n, float(alpha)) for k in ks]
    chosen = None
    for j, p in enumerate(p_values):
        if p > delta:
            break
        chosen = j
    certified = grid[: chosen + 1] if chosen is not None else []
    bound = None if chosen is None else BOUNDS[method](int(ks[chosen]), n, delta)
    return LTTResult(
        tau=None if chosen is None else grid[chosen],
        index=chosen,
        alpha=float(alpha),
        delta=float(delta),
        p_values=p_values,
        certified=certified,
        bound=bound,
    )
