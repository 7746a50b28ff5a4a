"""The two data-driven decisions FLUX takes, when the warm-up ends (stage 1) and how many
clusters there are (stage 3), each as (statistic, value, threshold): recorded in `history`,
and a UserWarning when the value lies within `NEAR` of its threshold, so a user knows that
another seed or a few more samples could have turned the answer."""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

NEAR = 0.2  # a value within 20 % of its threshold is a close call


@dataclass(frozen=True)
class Decision:
    """`statistic` (its name), `value`, `threshold` and the `outcome` they led to; `close`
    when |value - threshold| <= NEAR * |threshold|."""

    statistic: str
    value: float
    threshold: float
    outcome: str

    @property
    def close(self) -> bool:
        return abs(self.value - self.threshold) <= NEAR * abs(self.threshold)

    def to_dict(self) -> dict:
        return {**asdict(self), "close": self.close}

    def warn_if_close(self, stage: str) -> None:
        """A UserWarning naming the statistic, its value and the threshold, when close."""
        if self.close:
            warnings.warn(
                f"FLUX {stage}: {self.statistic} {self.value:.3f} is within {NEAR:.0%} of its "
                f"threshold {self.threshold:g} ({self.outcome}); the decision was close and may "
                "change with the seed or the data",
                UserWarning,
                stacklevel=2,
            )
