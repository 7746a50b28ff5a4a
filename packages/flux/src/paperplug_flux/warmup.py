"""Stage 1, warm-up (§3): plain FedAvg until the global model's federated accuracy plateaus, so
that the latents the descriptors read are meaningful but not yet specialised."""

from __future__ import annotations

from collections.abc import Sequence


def warmup_finished(
    accuracies: Sequence[float], *, max_rounds: int, tol: float = 0.05, min_rounds: int = 3
) -> bool:
    """True once the warm-up should stop after the rounds whose accuracies are given: from
    round `min_rounds` on, as soon as one round improved the accuracy by less than `tol`, and
    in any case after `max_rounds` rounds."""
    if max_rounds < 1 or min_rounds < 2 or tol < 0:
        raise ValueError("need max_rounds >= 1, min_rounds >= 2 and tol >= 0")
    r = len(accuracies)
    if r >= max_rounds:
        return True
    return r >= min_rounds and accuracies[-1] - accuracies[-2] < tol
