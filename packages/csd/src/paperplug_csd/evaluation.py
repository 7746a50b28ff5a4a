"""Measuring CSD as the paper does: harmful rate, a helpfulness proxy, cost (guard calls,
resamples, tokens), and the certificate's soundness and tightness over random calibration /
test splits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug_csd.certificate import BOUNDS


@dataclass
class Coverage:
    """Per split: the certified bound α̂ and the observed test risk; `coverage` is the share
    of splits where test risk ≤ α̂ (the certificate promises ≥ 1 − δ, up to test noise)."""

    bounds: np.ndarray
    test_risks: np.ndarray
    delta: float

    @property
    def coverage(self) -> float:
        return float(np.mean(self.test_risks <= self.bounds))

    @property
    def mean_gap(self) -> float:
        """Tightness: mean of α̂ − test risk."""
        return float(np.mean(self.bounds - self.test_risks))

    def to_dict(self) -> dict[str, Any]:
        return {"coverage": self.coverage, "mean_gap": self.mean_gap, "delta": self.delta}


def coverage_over_splits(
    losses: Sequence[float],
    *,
    n_cal: int,
    delta: float = 0.1,
    splits: int = 200,
    method: str = "hb",
    seed: int = 0,
) -> Coverage:
    """Split the 0/1 losses at random `splits` times into n_cal calibration prompts and the
    rest as test prompts; certify on the first, measure on the second."""
    x = np.asarray(losses, dtype=np.float64)
    if x.ndim != 1 or not np.isin(x, (0.0, 1.0)).all():
        raise ValueError("losses must be a 1-d array of 0/1 values")
    if not 1 <= n_cal < len(x):
        raise ValueError(f"n_cal must lie in [1, {len(x) - 1}], got {n_cal}")
    rng = np.random.default_rng(seed)
    bounds, risks = np.empty(splits), np.empty(splits)
    for s in range(splits):
        order = rng.permutation(len(x))
        cal, test = x[order[:n_cal]], x[order[n_cal:]]
        bounds[s] = BOUNDS[method](int(cal.sum()), n_cal, delta)
        risks[s] = test.mean()
    return Coverage(bounds, risks, delta)


def summarize(
    results: Sequence[Any],
    harmful: Sequence[bool],
    judge: Callable[[str], bool],
) -> dict[str, float]:
    """One method's row: harmful rate (judge on harmful prompts' outputs), helpfulness proxy
    (share of benign prompts answered without a refusal), refusals, and the mean cost."""
    harmful = list(harmful)
    if len(harmful) != len(results):
        raise ValueError("one harmful flag per result")
    on_harm = [r for r, h in zip(results, harmful, strict=True) if h]
    on_benign = [r for r, h in zip(results, harmful, strict=True) if not h]
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return {
        "harmful_rate": mean([judge(r.text) for r in on_harm]),
        "helpful": mean([not r.fallback and bool(r.claims) for r in on_benign]),
        "refusals": mean([r.fallback for r in results]),
        "guard_calls": mean([r.n_guard_calls for r in results]),
        "resamples": mean([r.n_resamples for r in results]),
        "backtracks": mean([r.n_backtracks for r in results]),
        "tokens": mean([r.tokens for r in results]),
    }
