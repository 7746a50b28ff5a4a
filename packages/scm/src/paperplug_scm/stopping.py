"""The streaming stopping rules (paper §4.3): naive and delay-k, plus a windowed variant.

Naive: stop at the first token whose score c_t ≥ θ. Delay-k (the paper's rule): stop at the
first i with #{j ≤ i : c_j ≥ θ} ≥ k. The count is cumulative over the whole response, as in
the released code (`utils/metrics.py`, `evaluate_k`: `sum(token flags) >= k`), so scattered
false flags add up on long replies. The windowed variant (ours, opt-in) counts only the last
`window` tokens: #{i − window < j ≤ i : c_j ≥ θ} ≥ k. Naive is delay-k with k = 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from paperplug.checks import check_array, check_scalar

RULES = ("naive", "delay")


def check_rule(theta: float, k: int, window: int | None = None) -> tuple[float, int, int | None]:
    """(θ, k, window) checked: θ in (0, 1], k a positive int, a window None or at least k."""
    theta = check_scalar(theta, "theta", low=0.0, high=1.0, inclusive="right")
    k = check_scalar(k, "k", "int", low=1)
    return theta, k, check_scalar(window, "window", "int", low=k, allow_none=True)


def check_scores(scores: Any, name: str = "scores") -> np.ndarray:
    """One reply's token scores: probabilities in [0, 1] (none at all: an empty reply)."""
    if isinstance(scores, (str, bytes)) or not isinstance(scores, Iterable):
        raise TypeError(f"{name} must be a sequence of token scores, got {type(scores).__name__}")
    out = check_array(list(scores), name, ndim=1, min_samples=0)
    if out.size and (out.min() < 0 or out.max() > 1):
        raise ValueError(
            f"{name} must hold probabilities in [0, 1], got [{out.min()}, {out.max()}]"
        )
    return out


class DelayKCounter:
    """Counts tokens scored ≥ θ (all so far, or the last `window`); `update` returns True
    from the token at which the rule fires on. `truncate(n)` forgets every token from the
    n-th on (the monitor re-tokenised them), in O(forgotten tokens)."""

    def __init__(self, theta: float = 0.5, k: int = 1, window: int | None = None) -> None:
        self.theta, self.k, self.window = check_rule(theta, k, window)
        self._flagged_before: list[int] = [0]  # _flagged_before[i] = #{j < i : c_j >= θ}

    @property
    def n_seen(self) -> int:
        return len(self._flagged_before) - 1

    @property
    def n_flagged(self) -> int:
        """Flagged tokens the rule counts now (in the window, if there is one)."""
        return self._count(self.n_seen)

    def _count(self, end: int) -> int:
        start = 0 if self.window is None else max(0, end - self.window)
        return self._flagged_before[end] - self._flagged_before[start]

    def update(self, score: float) -> bool:
        check_scalar(score, "score", low=0.0, high=1.0)
        self._flagged_before.append(self._flagged_before[-1] + int(score >= self.theta))
        return self.stop

    def truncate(self, n: int) -> None:
        check_scalar(n, "n", "int", low=0, high=self.n_seen)
        del self._flagged_before[n + 1 :]

    @property
    def stop(self) -> bool:
        return self.n_flagged >= self.k


def delay_k_stop(
    scores: Iterable[float], theta: float = 0.5, k: int = 1, window: int | None = None
) -> int | None:
    """0-based index of the token at which delay-k stops, or None if it never does (what
    `DelayKCounter` says token by token, in one pass of array arithmetic)."""
    theta, k, window = check_rule(theta, k, window)
    flagged = np.concatenate([[0], np.cumsum(check_scores(scores) >= theta)])
    ends = np.arange(1, len(flagged))
    starts = ends * 0 if window is None else np.maximum(ends - window, 0)
    fired = np.flatnonzero(flagged[ends] - flagged[starts] >= k)
    return int(fired[0]) if fired.size else None


def naive_stop(scores: Iterable[float], theta: float = 0.5) -> int | None:
    """0-based index of the first token scored ≥ θ, or None."""
    return delay_k_stop(scores, theta, 1)
