"""The streaming stopping rules (paper §4.3): naive and delay-k.

Naive: stop at the first token whose score c_t ≥ θ. Delay-k: stop once k tokens so far have
scored ≥ θ (they need not be consecutive); naive is delay-k with k = 1.
"""

from __future__ import annotations

from collections.abc import Iterable

RULES = ("naive", "delay")


def check_rule(theta: float, k: int) -> None:
    """Reject θ outside (0, 1] and k that is not a positive integer."""
    if not 0.0 < float(theta) <= 1.0:
        raise ValueError(f"theta must lie in (0, 1], got {theta}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


class DelayKCounter:
    """Counts tokens scored ≥ θ; `update` returns True from the k-th such token on."""

    def __init__(self, theta: float = 0.5, k: int = 1) -> None:
        check_rule(theta, k)
        self.theta, self.k = float(theta), k
        self.n_flagged = 0
        self.n_seen = 0

    def update(self, score: float) -> bool:
        self.n_seen += 1
        self.n_flagged += int(score >= self.theta)
        return self.n_flagged >= self.k

    @property
    def stop(self) -> bool:
        return self.n_flagged >= self.k


def delay_k_stop(scores: Iterable[float], theta: float = 0.5, k: int = 1) -> int | None:
    """0-based index of the token at which delay-k stops, or None if it never does."""
    counter = DelayKCounter(theta, k)
    for i, s in enumerate(scores):
        if counter.update(float(s)):
            return i
    return None


def naive_stop(scores: Iterable[float], theta: float = 0.5) -> int | None:
    """0-based index of the first token scored ≥ θ, or None."""
    return delay_k_stop(scores, theta, 1)
